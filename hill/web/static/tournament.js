// The crosstable's pictures: one the server was too busy to draw (503) is
// asked for again a little later, a few times.
"use strict";

for (const img of document.querySelectorAll("table.crosstable img")) {
  let tries = 0;
  img.addEventListener("error", () => {
    if (tries >= 4) return;
    tries += 1;
    const url = new URL(img.src);
    url.searchParams.set("try", String(tries));
    setTimeout(() => { img.src = url.toString(); }, 1000 * tries + Math.random() * 1000);
  });
}
