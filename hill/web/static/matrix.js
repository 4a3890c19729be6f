// The matrix: hovering (or focusing) a cell names the pair and the margin, and
// highlights its row and column headers.  Each cell is a link to the pair, or,
// when the reader chooses so, to the pair in the Lab (the link is pointed
// there as the cell is hovered or focused, before it is followed).
"use strict";

const matrix = document.getElementById("matrix");
const info = document.getElementById("matrix-info");
let lit = [];

function describe(link) {
  const cell = link.parentElement;
  const row = cell.parentElement;
  const a = row.cells[1].textContent.trim();
  const col = matrix.tHead.rows[0].cells[cell.cellIndex];
  const b = col.title;
  const margin = parseInt(link.textContent.replace("−", "-"), 10);
  const verdict = margin > 0 ? `${a} wins` : margin < 0 ? `${b} wins` : "a tie";
  const battles = info.dataset.battles;
  info.textContent = `${a} vs ${b}: ${link.textContent} (${verdict}) — click for the ${battles} battles`;
  const lab = document.getElementById("cells-open-lab");
  if (!link.dataset.pair) link.dataset.pair = link.getAttribute("href");
  link.href = lab && lab.checked
    ? `${info.dataset.lab}#left=${encodeURIComponent(a)}&right=${encodeURIComponent(b)}`
    : link.dataset.pair;
  for (const el of lit) el.classList.remove("hl");
  lit = [row.cells[0], row.cells[1], col];
  for (const el of lit) el.classList.add("hl");
}

if (matrix) {
  for (const type of ["mouseover", "focusin"]) {
    matrix.addEventListener(type, (event) => {
      const link = event.target.closest("td a");
      if (link) describe(link);
    });
  }
}
