// Sortable tables: a click on a header with data-sort ("num" or "text") sorts
// the rows by that column; again reverses.  Cells may carry data-value.
// Without JavaScript the table simply stays in rank order.
"use strict";

function cellValue(row, column, kind) {
  const cell = row.cells[column];
  const raw = cell.dataset.value ?? cell.textContent.trim();
  return kind === "num" ? parseFloat(raw) : raw.toLowerCase();
}

// the last header row holds the columns (a first one may group them)
function headers(table) {
  return table.tHead.rows[table.tHead.rows.length - 1];
}

function sortBy(table, header) {
  const column = header.cellIndex;
  const kind = header.dataset.sort;
  // numbers sort best-first (descending) at the first click, but ranks ascending
  const natural = kind === "text" || header.textContent.trim().startsWith("Rank")
    ? "ascending" : "descending";
  const current = header.getAttribute("aria-sort");
  const order = current === natural ? (natural === "ascending" ? "descending" : "ascending") : natural;
  const sign = order === "ascending" ? 1 : -1;
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = cellValue(a, column, kind);
    const y = cellValue(b, column, kind);
    return (x < y ? -1 : x > y ? 1 : 0) * sign;
  });
  body.append(...rows);
  for (const th of headers(table).cells) th.removeAttribute("aria-sort");
  header.setAttribute("aria-sort", order);
}

for (const table of document.querySelectorAll("table.sortable")) {
  for (const header of headers(table).cells) {
    if (!header.dataset.sort) continue;
    const button = document.createElement("button");
    button.type = "button";
    button.append(...header.childNodes);
    header.append(button);
    button.addEventListener("click", () => sortBy(table, header));
  }
}
