// Rendering the Lab's results: the 42-battle grid, the hill's answer, the
// tuning's table.  Text only through textContent (names are user input).
import { element as node } from "./debugger-dom.js";
import * as tune from "./tune.js";

export const TAPES = Array.from({ length: 21 }, (_, i) => 10 + i);
export const POLARITIES = ["sieve", "kettle"];
const WORD = { 1: "win", 0: "tie", "-1": "loss" };
const SYMBOL = { 1: "W", 0: "·", "-1": "L" };
const OUTCOME = { "+": 1, 0: 0, "-": -1 };

export function battleName(i) {
  return `tape ${TAPES[i % 21]} ${POLARITIES[Math.floor(i / 21)]}`;
}

export function signed(n, digits) {
  const text = digits === undefined ? String(Math.abs(n)) : Math.abs(n).toFixed(digits);
  if (Number(text) === 0) return text;
  return (n > 0 ? "+" : "\u2212") + text;
}

export function ending(b) {
  const e = b.ended || {};
  if (e.limit) return ["∞", "the cycle limit"];
  if (e.leftFell || e.rightFell) {
    const who = e.leftFell && e.rightFell ? "both" : e.leftFell ? "left" : "right";
    return ["↧", `${who} off the tape`];
  }
  if (e.leftFlag || e.rightFlag) {
    const whose = e.leftFlag && e.rightFlag ? "both flags" : e.leftFlag ? "left's flag" : "right's flag";
    return ["⚑", `${whose} zeroed two cycles running`];
  }
  return ["", "ended"];
}

// the joust's grid: buttons that call open(i)
export function grid(table, result, open) {
  const head = node("tr");
  head.append(node("th", { scope: "col" }, "tape"));
  for (const t of TAPES) head.append(node("th", { scope: "col" }, String(t)));
  table.tHead.replaceChildren(head);
  const rows = POLARITIES.map((polarity, p) => {
    const tr = node("tr");
    tr.append(node("th", { scope: "row" }, polarity));
    TAPES.forEach((tape, t) => {
      const i = p * 21 + t;
      const b = result.battles[i];
      const [glyph, how] = ending(b);
      const word = WORD[b.outcome];
      const label = `tape ${tape} ${polarity}: ${word}, ${how}, ${b.cycles} cycles; debug it`;
      const button = node("button", { type: "button", class: `cell ${word}`, title: label, "aria-label": label, "data-battle": i });
      button.append(document.createTextNode(SYMBOL[b.outcome]));
      button.append(node("small", { class: "end" }, glyph));
      button.addEventListener("click", () => open(i));
      const td = node("td");
      td.append(button);
      tr.append(td);
    });
    return tr;
  });
  table.tBodies[0].replaceChildren(...rows);
}

export function strip(row) {
  const span = node("span", { class: "strip" });
  for (let p = 0; p < 2; p++) {
    const line = node("span", { class: "strip-row" });
    for (let t = 0; t < 21; t++) {
      const o = OUTCOME[row[p * 21 + t]];
      line.append(node("span", { class: `cell ${WORD[o]}`, title: `tape ${TAPES[t]} ${POLARITIES[p]}: ${WORD[o]}` }, SYMBOL[o]));
    }
    span.append(line);
  }
  return span;
}

export function margin(row) {
  let sum = 0;
  for (const c of row) sum += OUTCOME[c];
  return sum;
}

// the hill's answer: figures, summary, each opponent (pick(name): open that pair)
export function hillAnswer(els, answer, programs, rows, pick) {
  els.rank.textContent = `${answer.rank}/${answer.size}`;
  els.points.textContent = answer.printed.points; // formatted by the server, as -test prints
  els.points.dataset.value = String(answer.points);
  els.score.textContent = answer.printed.score;
  els.score.dataset.value = String(answer.score);
  els.method.textContent = answer.method;
  els.summary.textContent = answer.summary;
  const worst = new Set(answer.worst.map((w) => w.name));
  const body = programs.map((p, j) => {
    const tr = node("tr", worst.has(p.name) ? { class: "worst" } : {});
    tr.append(node("td", { class: "num" }, String(p.rank)));
    const name = node("td");
    const button = node("button", { type: "button", class: "linkish", title: `joust ${p.name} here` }, p.name);
    button.addEventListener("click", () => pick(p.name));
    name.append(button);
    if (p.name === answer.displaced) name.append(node("span", { class: "hint" }, " (would leave)"));
    tr.append(name);
    const m = margin(rows[j]);
    tr.append(node("td", { class: `num margin ${m > 0 ? "w3" : m < 0 ? "l3" : "t"}` }, signed(m)));
    const cells = node("td");
    cells.append(strip(rows[j]));
    tr.append(cells);
    return tr;
  });
  els.table.tBodies[0].replaceChildren(...body);
}

function describeFlip(f) {
  const word = (c) => WORD[OUTCOME[c]];
  return `${f.opponent} ${battleName(f.battle)}: ${word(f.from)} → ${word(f.to)}`;
}

// the tuning's answer: the plot and a row per value
export function tuneAnswer(plotBox, table, tried, names) {
  const ok = tried.filter((t) => t.answer);
  plotBox.replaceChildren();
  if (ok.length) {
    plotBox.append(tune.plot(ok.map((t) => t.value), ok.map((t) => t.answer.points), ok.map((t) => t.answer.score)));
  }
  let before = null;
  const body = tried.map((t) => {
    const tr = node("tr");
    tr.append(node("td", { class: "num" }, String(t.value)));
    if (!t.answer) {
      tr.append(node("td", { colspan: 4, class: "err-text" }, t.error || "not played"));
      return tr;
    }
    tr.append(node("td", { class: "num" }, `${t.answer.rank}/${t.answer.size}`));
    tr.append(node("td", { class: "num" }, t.answer.printed.points));
    tr.append(node("td", { class: "num" }, t.answer.printed.score));
    const cell = node("td", { class: "flips" });
    if (before) {
      const flipped = tune.flips(before.rows, t.rows, names);
      if (!flipped.length) cell.textContent = "none";
      else {
        const details = node("details");
        details.append(node("summary", {}, `${flipped.length} battle${flipped.length > 1 ? "s" : ""} flip from ${before.value}`));
        const list = node("ul");
        for (const f of flipped.slice(0, 60)) list.append(node("li", {}, describeFlip(f)));
        if (flipped.length > 60) list.append(node("li", {}, `… and ${flipped.length - 60} more`));
        details.append(list);
        cell.append(details);
      }
    }
    before = t;
    tr.append(cell);
    return tr;
  });
  table.tBodies[0].replaceChildren(...body);
}
