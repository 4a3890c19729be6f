// The Lab debugger's tape: each cell's value, both pointers (also off the
// tape, where a program that ran off it ended), both flags with their value
// both ways, and a line saying what the numbers mean.  On a narrow screen the
// tape scrolls sideways, and follows a pointer that moves out of sight.
import { SIDES, element, signed } from "./debugger-dom.js";

const MARKERS = { left: "▼", right: "▲" };

export class TapeView {
  // name(side, prefix): an element showing a side's name (kept up to date)
  constructor(name) {
    this.tape = element("div", { class: "dbg-tape", role: "list", "aria-label": "the tape" });
    this.wrap = element(
      "div",
      { class: "dbg-tape-wrap", tabindex: "0", "aria-label": "the tape (scrolls sideways)" },
      this.tape,
    );
    this.legend = element(
      "p",
      { class: "dbg-legend" },
      name("left", `${MARKERS.left} `),
      " ",
      name("right", `${MARKERS.right} `),
      element("br"),
      "Cells are bytes, 0–255, also shown signed (−128–127: 128 is −128, 255 is −1). " +
        "The flags are the two end cells, framed: each starts at 128; " +
        "a program loses when its flag has been 0 at the end of two cycles running. " +
        "Under a flag: its value 0–255 · signed.",
    );
    this.cells = [];
    this.length = 0;
    this.lastPointers = null;
  }

  // the cells of a tape of `length`, and a slot off each end
  setLength(length) {
    this.length = length;
    this.cells = [];
    for (let i = -1; i <= length; i++) {
      const off = i < 0 || i === length;
      const flag = i === 0 || i === length - 1;
      const cell = element("div", {
        class: `dbg-cell${off ? " off" : ""}${flag ? " flag" : ""}`,
        role: "listitem",
      });
      cell.dataset.cell = i;
      const slot = {
        cell,
        markers: element("span", { class: "dbg-pointers" }),
        value: element("span", { class: "dbg-value" }),
        second: element("span", { class: "dbg-second" }),
      };
      const index = element("span", { class: "dbg-index", text: off ? "off" : String(i) });
      cell.append(slot.markers, slot.value, slot.second, index);
      this.cells.push(slot);
    }
    this.tape.replaceChildren(...this.cells.map((slot) => slot.cell));
    this.lastPointers = null;
  }

  // the state after `cycle` cycles; format(value) -> the text of a value
  draw(trace, cycle, format, names) {
    const length = this.length;
    const base = cycle * length;
    const pointers = [trace.left_pointer[cycle], trace.right_pointer[cycle]];
    for (let i = -1; i <= length; i++) {
      const slot = this.cells[i + 1];
      const here = SIDES.filter((_, s) => pointers[s] === i);
      slot.markers.textContent = here.map((side) => MARKERS[side]).join("");
      slot.cell.classList.toggle("left-here", here.includes("left"));
      slot.cell.classList.toggle("right-here", here.includes("right"));
      const whose = here.map((side) => `, ${names[side]}'s pointer`).join("");
      if (i < 0 || i === length) {
        slot.cell.hidden = here.length === 0;
        slot.cell.setAttribute("aria-label", `off the tape${whose}`);
        continue;
      }
      const value = trace.tapes[base + i];
      slot.value.textContent = format(value);
      slot.cell.dataset.value = value;
      slot.cell.title = `cell ${i}: ${value} (${signed(value)})`;
      slot.cell.setAttribute("aria-label", `${slot.cell.title}${whose}`);
      const flag = i === 0 || i === length - 1;
      slot.second.textContent = flag ? `${value} · ${signed(value)}` : "";
      slot.cell.classList.toggle("zero", value === 0);
    }
    this.follow(pointers);
  }

  // scroll the tape (not the page) to a pointer that moved out of sight
  follow(pointers) {
    const moved = pointers.filter((p, s) => p !== this.lastPointers?.[s]);
    this.lastPointers = pointers;
    const wrap = this.wrap;
    for (const pointer of moved) {
      const cell = this.cells[pointer + 1]?.cell;
      if (!cell || cell.hidden) continue;
      const left = cell.offsetLeft - this.tape.offsetLeft;
      if (left < wrap.scrollLeft || left + cell.offsetWidth > wrap.scrollLeft + wrap.clientWidth) {
        wrap.scrollLeft = Math.max(0, left - (wrap.clientWidth - cell.offsetWidth) / 2);
      }
    }
  }
}
