// The Lab debugger's controls: the step buttons, the cycle box and slider,
// the breakpoint list and its form, and the keyboard's help.  They only call
// back the debugger (debugger.js), which holds the state.
import { SIDES, element } from "./debugger-dom.js";

const STEPS = [1, 10, 100, 1000];

export const KEYS = [
  ["→ or .", "one cycle on (← or , back)"],
  ["Shift / Ctrl / Ctrl+Shift with those", "10 / 100 / 1000 cycles"],
  ["Home, End", "the first, the last cycle"],
  ["] and [", "run forward, backward to a breakpoint"],
  ["b, Shift+B", "toggle a breakpoint at the left's, the right's current instruction"],
  ["g", "type a cycle to go to"],
];

// the battle (tape length, polarity) and how values are shown; act:
// {tapeLength(n), polarity(p), values(mode)}
export function battleControls(act) {
  const select = (label, options, change) => {
    const node = element("select", { "aria-label": label });
    for (const [value, text] of options) node.append(element("option", { value, text }));
    node.addEventListener("change", () => change(node.value));
    return node;
  };
  const lengths = [];
  for (let n = 10; n <= 30; n++) lengths.push([n, n]);
  const tapeSelect = select("tape length", lengths, (n) => act.tapeLength(Number(n)));
  const polarities = [
    ["sieve", "sieve"],
    ["kettle", "kettle"],
  ];
  const polaritySelect = select("polarity", polarities, act.polarity);
  const modes = [
    ["signed", "signed"],
    ["unsigned", "0–255"],
    ["hex", "hex"],
  ];
  const valuesSelect = select("cell values shown", modes, act.values);
  const controls = element(
    "div",
    { class: "dbg-battle" },
    element("label", {}, "Tape ", tapeSelect),
    element("label", {}, "Polarity ", polaritySelect),
    element("label", {}, "Values ", valuesSelect),
  );
  return { element: controls, tapeSelect, polaritySelect, valuesSelect };
}

const plural = (n) => `${n} cycle${n > 1 ? "s" : ""}`;

// act: {go(cycle), step(n), run(direction)}
export function stepControls(act) {
  const controls = element("div", { class: "dbg-controls", role: "group", "aria-label": "Steps" });
  const button = (text, label, action) => {
    const b = element("button", { type: "button", text, "aria-label": label, title: label });
    b.addEventListener("click", action);
    controls.append(b);
  };
  button("|◀", "the first cycle (Home)", () => act.go(0));
  button("◀●", "run back to a breakpoint ([)", () => act.run(-1));
  for (const n of [...STEPS].reverse()) button(`−${n}`, `${plural(n)} back`, () => act.step(-n));
  for (const n of STEPS) button(`+${n}`, `${plural(n)} on`, () => act.step(n));
  button("●▶", "run to a breakpoint (])", () => act.run(1));
  button("▶|", "the last cycle (End)", () => act.go(Infinity));
  const number = { min: "0", value: "0" };
  const cycleInput = element("input", {
    type: "number",
    ...number,
    class: "dbg-cycle",
    "aria-label": "go to cycle",
  });
  cycleInput.addEventListener("change", () => act.go(Number(cycleInput.value)));
  const slider = element("input", {
    type: "range",
    ...number,
    max: "0",
    class: "dbg-slider",
    "aria-label": "seek to a cycle",
  });
  slider.addEventListener("input", () => act.go(Number(slider.value)));
  const seek = element(
    "div",
    { class: "dbg-seek" },
    element("label", {}, "Cycle ", cycleInput),
    slider,
  );
  const hit = element("p", { class: "dbg-hit", "aria-live": "polite" });
  return { element: element("div", {}, controls, seek, hit), cycleInput, slider, hit };
}

export function keysHelp() {
  const list = element("dl", { class: "dbg-keys" });
  for (const [keys, what] of KEYS) {
    list.append(element("dt", { text: keys }), element("dd", { text: what }));
  }
  const summary = element("summary", { text: "Keyboard" });
  return element("details", { class: "dbg-help" }, summary, list);
}

// The breakpoints: their list (each with a remove button) and a form to add one.
export class BreakpointPanel {
  // name(side): an element showing the side's name; act: {add(b), remove(b),
  // offset(side): the byte offset of the side's current instruction, or -1}
  constructor(name, act) {
    this.list = element("ul", { class: "dbg-break-list" });
    const kind = element("select", { "aria-label": "breakpoint kind" });
    for (const [value, text] of [
      ["cell", "a cell reaches a value"],
      ["flag", "a flag reaches zero"],
      ["pointer", "a pointer reaches a cell"],
      ["position", "the current instruction of"],
      ["end", "the end"],
    ]) {
      kind.append(element("option", { value, text }));
    }
    const side = element("select", { "aria-label": "side" });
    for (const s of SIDES) side.append(name(s, "", "option", { value: s }));
    const cell = element("input", { type: "number", value: "0", "aria-label": "cell" });
    const value = element("input", { type: "number", value: "0", "aria-label": "value" });
    const fields = {
      side: element("label", {}, "side ", side),
      cell: element("label", {}, "cell ", cell),
      value: element("label", {}, "value ", value),
    };
    const add = element("button", { type: "submit", text: "Add" });
    const form = element("form", { class: "dbg-break-form" }, kind, ...Object.values(fields), add);
    const shown = () => {
      fields.side.hidden = !["flag", "pointer", "position"].includes(kind.value);
      fields.cell.hidden = !["cell", "pointer"].includes(kind.value);
      fields.value.hidden = kind.value !== "cell";
    };
    kind.addEventListener("change", shown);
    shown();
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      act.add({
        kind: kind.value,
        side: side.value,
        cell: Number(cell.value),
        value: Number(value.value),
        offset: kind.value === "position" ? act.offset(side.value) : -1,
      });
    });
    const hint = element("p", {
      class: "dbg-hint",
      text: "Click a character of a source to set or clear a breakpoint there.",
    });
    this.element = element("details", { class: "dbg-breaks", open: "" });
    this.element.append(element("summary", { text: "Breakpoints" }), this.list, form, hint);
    this.remove = act.remove;
  }

  // breakpoints: plain objects; describe(b): its words
  show(breakpoints, describe) {
    this.list.replaceChildren();
    for (const b of breakpoints) {
      const remove = element("button", { type: "button", text: "×", "aria-label": "remove" });
      remove.addEventListener("click", () => this.remove(b));
      const item = element("li", {}, describe(b), " ", remove);
      item.dataset.kind = b.kind;
      this.list.append(item);
    }
    if (!breakpoints.length) {
      this.list.append(element("li", { class: "dbg-hint", text: "none yet" }));
    }
  }
}
