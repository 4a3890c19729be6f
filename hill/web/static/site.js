// Every page: a wide table scrolls sideways in its own box; while it does not
// fit, the hint above it (see _tables.html) says there is more to see.
"use strict";

function showScrollHints() {
  for (const box of document.querySelectorAll(".table-box")) {
    const scroll = box.querySelector(".scroll");
    box.classList.toggle("overflows", scroll.scrollWidth > scroll.clientWidth + 1);
  }
}

showScrollHints();
window.addEventListener("resize", showScrollHints);
document.addEventListener("change", showScrollHints);  // a switch that shows more columns
