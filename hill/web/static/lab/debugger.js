// The Lab's debugger: one battle, cycle by cycle, forward and back.
//
//   import { mountDebugger } from "./debugger.js";
//   const dbg = mountDebugger(container, {left, right, tapeLength, polarity,
//                                         cycle, breakpoints, onChange});
//   dbg.getState()   // {tapeLength, polarity, cycle, breakpoints}
//   dbg.setState(state); dbg.setPrograms(left, right); dbg.destroy();
//
// The engine runs in a module worker (debug-worker.js) holding an
// engine.debug session; the page keeps the whole trace (every cycle's tape,
// pointers and instructions), so stepping and seeking in either direction are
// array lookups, and breakpoints are searched in those arrays.  Only the live
// repeat counters come from the worker, one question per shown cycle.
import { describe, findBreak, normalize, same } from "./debugger-breakpoints.js";
import { SourcePane } from "./debugger-source.js";

const STEPS = [1, 10, 100, 1000];
const SIDES = ["left", "right"];
const KEYS = [
  ["→ or .", "one cycle on (← or , back)"],
  ["Shift / Ctrl / Ctrl+Shift with those", "10 / 100 / 1000 cycles"],
  ["Home, End", "the first, the last cycle"],
  ["] and [", "run forward, backward to a breakpoint"],
  ["b, Shift+B", "toggle a breakpoint at the left's, the right's current instruction"],
  ["g", "type a cycle to go to"],
];

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

const signed = (value) => (value > 127 ? value - 256 : value);

function styleSheet() {
  const href = new URL("./debugger.css", import.meta.url).href;
  if (![...document.styleSheets].some((sheet) => sheet.href === href)) {
    if (!document.querySelector(`link[href="${href}"]`)) {
      document.head.append(element("link", { rel: "stylesheet", href }));
    }
  }
}

class Debugger {
  constructor(container, options) {
    this.container = container;
    this.names = {
      left: options.left?.name || "left",
      right: options.right?.name || "right",
    };
    this.sources = { left: options.left?.source ?? "", right: options.right?.source ?? "" };
    this.tapeLength = Math.min(30, Math.max(10, Number(options.tapeLength) || 10));
    this.polarity = options.polarity === "kettle" ? "kettle" : "sieve";
    this.cycle = Math.max(0, Number(options.cycle) || 0);
    this.breakpoints = [];
    this.onChange = options.onChange ?? (() => {});
    this.trace = null;
    this.worker = null;
    this.request = 0; // id of the trace asked for
    this.counters = { cycle: -1, values: [[], []], asking: false };
    this.frame = 0;
    styleSheet();
    this.build();
    this.setBreakpoints(options.breakpoints ?? [], false);
    this.load();
  }

  // ---- the page ------------------------------------------------------------

  build() {
    const root = element("section", {
      class: "dbg",
      "aria-label": "Debugger",
      tabindex: "-1",
    });
    this.root = root;
    this.status = element("p", { class: "dbg-status", "aria-live": "polite" });
    this.progress = element("div", { class: "dbg-progress", hidden: "" });
    this.progressText = element("span", { text: "tracing…" });
    this.cancelButton = element("button", { type: "button", text: "Cancel" });
    this.retryButton = element("button", { type: "button", text: "Trace again", hidden: "" });
    this.progress.append(this.progressText, " ", this.cancelButton, this.retryButton);
    this.cancelButton.addEventListener("click", () => this.cancel());
    this.retryButton.addEventListener("click", () => this.load());

    const battle = element("div", { class: "dbg-battle" });
    this.tapeSelect = element("select", { "aria-label": "tape length" });
    for (let n = 10; n <= 30; n++) this.tapeSelect.append(element("option", { text: String(n) }));
    this.polaritySelect = element("select", { "aria-label": "polarity" });
    for (const p of ["sieve", "kettle"]) this.polaritySelect.append(element("option", { text: p }));
    this.valuesSelect = element("select", { "aria-label": "cell values shown" });
    for (const [value, label] of [["signed", "signed"], ["unsigned", "0–255"], ["hex", "hex"]]) {
      this.valuesSelect.append(element("option", { value, text: label }));
    }
    battle.append(
      element("label", {}, "Tape ", this.tapeSelect),
      element("label", {}, "Polarity ", this.polaritySelect),
      element("label", {}, "Values ", this.valuesSelect),
    );
    this.tapeSelect.addEventListener("change", () =>
      this.setState({ tapeLength: Number(this.tapeSelect.value) }),
    );
    this.polaritySelect.addEventListener("change", () =>
      this.setState({ polarity: this.polaritySelect.value }),
    );
    this.valuesSelect.addEventListener("change", () => this.schedule());

    this.tape = element("div", { class: "dbg-tape", role: "list", "aria-label": "the tape" });
    const tapeWrap = (this.tapeWrap = element(
      "div",
      { class: "dbg-tape-wrap", tabindex: "0", "aria-label": "the tape (scrolls sideways)" },
      this.tape,
    ));
    this.labels = { left: [], right: [] }; // the elements that show a side's name
    const name = (side, prefix = "") => {
      const text = prefix + this.names[side];
      const label = element("span", { class: `dbg-marker ${side}`, text });
      label.dataset.prefix = prefix;
      this.labels[side].push(label);
      return label;
    };
    this.name = name;
    const legend = element(
      "p",
      { class: "dbg-legend" },
      name("left", "▼ "),
      " ",
      name("right", "▲ "),
      element("br"),
      "Cells are bytes, 0–255, also shown signed (−128–127: 128 is −128, 255 is −1). " +
        "The flags are the two end cells, framed: each starts at 128; " +
        "a program loses when its flag has been 0 at the end of two cycles running. " +
        "Under a flag: its value 0–255 · signed.",
    );

    root.append(this.status, this.progress, battle, tapeWrap, legend, this.buildControls());
    root.append(this.buildBreakpoints(), this.buildSources(), this.buildKeys());
    root.addEventListener("keydown", (event) => this.key(event));
    this.container.append(root);
  }

  buildControls() {
    const controls = element("div", {
      class: "dbg-controls",
      role: "group",
      "aria-label": "Steps",
    });
    const button = (text, label, action) => {
      const b = element("button", { type: "button", text, "aria-label": label, title: label });
      b.addEventListener("click", action);
      controls.append(b);
      return b;
    };
    button("|◀", "the first cycle (Home)", () => this.go(0));
    this.runBack = button("◀●", "run back to a breakpoint ([)", () => this.run(-1));
    for (const n of [...STEPS].reverse()) {
      button(`−${n}`, `${n} cycle${n > 1 ? "s" : ""} back`, () => this.step(-n)).dataset.step =
        -n;
    }
    for (const n of STEPS) {
      button(`+${n}`, `${n} cycle${n > 1 ? "s" : ""} on`, () => this.step(n)).dataset.step = n;
    }
    this.runForward = button("●▶", "run to a breakpoint (])", () => this.run(1));
    button("▶|", "the last cycle (End)", () => this.go(Infinity));
    this.cycleInput = element("input", {
      type: "number",
      min: "0",
      value: "0",
      class: "dbg-cycle",
      "aria-label": "go to cycle",
    });
    this.cycleInput.addEventListener("change", () => this.go(Number(this.cycleInput.value)));
    this.slider = element("input", {
      type: "range",
      min: "0",
      max: "0",
      value: "0",
      class: "dbg-slider",
      "aria-label": "seek to a cycle",
    });
    this.slider.addEventListener("input", () => this.go(Number(this.slider.value)));
    const seek = element(
      "div",
      { class: "dbg-seek" },
      element("label", {}, "Cycle ", this.cycleInput),
      this.slider,
    );
    this.hit = element("p", { class: "dbg-hit", "aria-live": "polite" });
    return element("div", {}, controls, seek, this.hit);
  }

  buildBreakpoints() {
    const box = element("details", { class: "dbg-breaks", open: "" });
    box.append(element("summary", { text: "Breakpoints" }));
    this.breakList = element("ul", { class: "dbg-break-list" });
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
    for (const s of SIDES) {
      const option = element("option", { value: s, text: this.names[s] });
      option.dataset.prefix = "";
      this.labels[s].push(option);
      side.append(option);
    }
    const cell = element("input", { type: "number", value: "0", "aria-label": "cell" });
    const value = element("input", { type: "number", value: "0", "aria-label": "value" });
    const sideLabel = element("label", {}, "side ", side);
    const cellLabel = element("label", {}, "cell ", cell);
    const valueLabel = element("label", {}, "value ", value);
    const add = element("button", { type: "submit", text: "Add" });
    const form = element("form", { class: "dbg-break-form" }, kind, sideLabel, cellLabel);
    form.append(valueLabel, add);
    const fields = () => {
      const k = kind.value;
      sideLabel.hidden = !["flag", "pointer", "position"].includes(k);
      cellLabel.hidden = !["cell", "pointer"].includes(k);
      valueLabel.hidden = k !== "cell";
    };
    kind.addEventListener("change", fields);
    fields();
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const offset =
        kind.value === "position" && this.trace
          ? this.trace[`${side.value}_source`][Math.min(this.cycle, this.trace.cycles - 1)]
          : -1;
      this.addBreakpoint({
        kind: kind.value,
        side: side.value,
        cell: Number(cell.value),
        value: Number(value.value),
        offset,
      });
    });
    box.append(
      this.breakList,
      form,
      element("p", {
        class: "dbg-hint",
        text: "Click a character of a source to set or clear a breakpoint there.",
      }),
    );
    return box;
  }

  buildSources() {
    const sources = element("div", { class: "dbg-sources" });
    this.panes = {};
    this.where = {};
    for (const side of SIDES) {
      const pre = element("pre", {
        class: `dbg-source ${side}`,
        tabindex: "0",
        "aria-label": `${this.names[side]}'s source`,
      });
      const note = element("span", { class: "dbg-window" });
      this.where[side] = element("span", { class: "dbg-where" });
      const caption = element(
        "figcaption",
        {},
        this.name(side),
        " ",
        this.where[side],
        " ",
        note,
      );
      sources.append(element("figure", { class: `dbg-pane ${side}` }, caption, pre));
      this.panes[side] = new SourcePane(pre, note, (offset) =>
        this.toggleBreakpoint({ kind: "position", side, offset }),
      );
    }
    const hint = element("p", {
      class: "dbg-hint",
      text:
        "Highlighted: the instruction each program runs next. The small numbers are the " +
        "live repeat counters: beside a ( the copies of its repeat left to run (this one " +
        "included); beside the } of (a{b}c)%n the copy of c that runs.",
    });
    return element("div", {}, sources, hint);
  }

  buildKeys() {
    const list = element("dl", { class: "dbg-keys" });
    for (const [keys, what] of KEYS) {
      list.append(element("dt", { text: keys }), element("dd", { text: what }));
    }
    const summary = element("summary", { text: "Keyboard" });
    return element("details", { class: "dbg-help" }, summary, list);
  }

  // ---- tracing ---------------------------------------------------------------

  load() {
    this.request += 1;
    const id = this.request;
    this.trace = null;
    this.counters = { cycle: -1, values: [[], []], asking: false };
    for (const side of SIDES) this.panes[side].setText(this.sources[side]);
    this.listBreakpoints(); // positions are named by line and column of these sources
    this.tapeSelect.value = String(this.tapeLength);
    this.polaritySelect.value = this.polarity;
    this.worker ??= this.startWorker();
    this.worker.postMessage({
      type: "trace",
      id,
      left: this.sources.left,
      right: this.sources.right,
      tapeLength: this.tapeLength,
      polarity: this.polarity,
    });
    this.busy(true);
    this.schedule();
  }

  startWorker() {
    const worker = new Worker(new URL("./debug-worker.js", import.meta.url), { type: "module" });
    worker.onmessage = (event) => this.message(event.data);
    worker.onerror = (event) => {
      event.preventDefault?.();
      this.failed(`the engine did not start: ${event.message ?? "worker error"}`);
    };
    return worker;
  }

  busy(on) {
    clearInterval(this.ticker);
    this.progress.hidden = !on;
    this.cancelButton.hidden = !on;
    this.retryButton.hidden = true;
    this.root.setAttribute("aria-busy", on ? "true" : "false");
    if (on) {
      const started = performance.now();
      this.progressText.textContent = "tracing…";
      this.ticker = setInterval(() => {
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        this.progressText.textContent = `tracing… ${seconds} s`;
      }, 200);
    }
  }

  cancel() {
    this.worker?.terminate();
    this.worker = null;
    this.request += 1;
    this.busy(false);
    this.progress.hidden = false;
    this.progressText.textContent = "Tracing cancelled.";
    this.retryButton.hidden = false;
    this.schedule();
  }

  failed(text) {
    this.busy(false);
    this.progress.hidden = false;
    this.progressText.textContent = text;
    this.retryButton.hidden = false;
  }

  message(data) {
    if (data.type === "counters") {
      this.counters.asking = false;
      if (data.id === this.request) {
        this.counters.cycle = data.cycle;
        this.counters.values = data.counters;
      }
      this.schedule();
      return;
    }
    if (data.id !== this.request) return;
    if (data.type === "error") {
      const e = data.error;
      const place = e.line ? ` at line ${e.line}, column ${e.column}` : "";
      const whose = data.side ? `${this.names[data.side]}: ` : "";
      this.failed(`${whose}${e.message}${place}`);
      this.retryButton.hidden = true;
      if (data.side && e.offset >= 0) this.panes[data.side].render(-1, [], [], e.offset);
      return;
    }
    this.busy(false);
    this.trace = data.trace;
    this.slider.max = String(this.trace.cycles);
    this.cycleInput.max = String(this.trace.cycles);
    this.cycle = Math.min(this.cycle, this.trace.cycles);
    this.buildTape();
    this.schedule();
  }

  // ---- moving ------------------------------------------------------------------

  go(cycle, hit = "") {
    if (!this.trace) return; // still tracing: nothing to move over yet
    const next = Math.max(0, Math.min(this.trace.cycles, Math.round(Number(cycle) || 0)));
    this.hit.textContent = hit;
    if (next === this.cycle) return this.schedule();
    this.cycle = next;
    this.schedule();
    this.changed();
  }

  step(n) {
    this.go(this.cycle + n);
  }

  run(direction) {
    if (!this.trace) return;
    const found = findBreak(this.trace, this.breakpoints, this.cycle, direction);
    if (found) {
      this.go(found.cycle, `Stopped at ${describe(found.breakpoint, this.names, this.whereOf)}.`);
    } else {
      const edge = direction > 0 ? this.trace.cycles : 0;
      this.go(edge, `No breakpoint ${direction > 0 ? "ahead" : "behind"}.`);
    }
  }

  whereOf = (side, offset) => this.panes[side].source.where(offset);

  changed() {
    this.onChange(this.getState());
  }

  // ---- breakpoints -------------------------------------------------------------

  setBreakpoints(list, notify = true) {
    this.breakpoints = [];
    for (const b of list) {
      const plain = normalize(b, this.tapeLength);
      if (plain && !this.breakpoints.some((o) => same(o, plain))) this.breakpoints.push(plain);
    }
    this.listBreakpoints();
    this.schedule();
    if (notify) this.changed();
  }

  addBreakpoint(b) {
    this.setBreakpoints([...this.breakpoints, b]);
  }

  toggleBreakpoint(b) {
    const plain = normalize(b, this.tapeLength);
    if (!plain) return;
    if (this.breakpoints.some((o) => same(o, plain))) {
      this.setBreakpoints(this.breakpoints.filter((o) => !same(o, plain)));
    } else {
      this.addBreakpoint(plain);
    }
  }

  listBreakpoints() {
    this.breakList.replaceChildren();
    for (const b of this.breakpoints) {
      const remove = element("button", { type: "button", text: "×", "aria-label": "remove" });
      remove.addEventListener("click", () =>
        this.setBreakpoints(this.breakpoints.filter((o) => o !== b)),
      );
      const item = element("li", {}, describe(b, this.names, this.whereOf), " ", remove);
      item.dataset.kind = b.kind;
      this.breakList.append(item);
    }
    if (!this.breakpoints.length) {
      this.breakList.append(element("li", { class: "dbg-hint", text: "none yet" }));
    }
  }

  // ---- drawing -------------------------------------------------------------------

  buildTape() {
    const length = this.trace.tape_length;
    this.cells = [];
    const slots = [];
    for (let i = -1; i <= length; i++) {
      const off = i < 0 || i === length;
      const cell = element("div", {
        class: `dbg-cell${off ? " off" : ""}${i === 0 || i === length - 1 ? " flag" : ""}`,
        role: "listitem",
      });
      cell.dataset.cell = i;
      const value = element("span", { class: "dbg-value" });
      const second = element("span", { class: "dbg-second" });
      const index = element("span", { class: "dbg-index", text: off ? "off" : String(i) });
      const markers = element("span", { class: "dbg-pointers" });
      cell.append(markers, value, second, index);
      slots.push(cell);
      this.cells.push({ cell, value, second, markers });
    }
    this.tape.replaceChildren(...slots);
  }

  // draw at the next frame; ask for the counters now, so that they usually
  // come back before that frame and the state is drawn once, whole
  schedule() {
    if (this.trace && this.counters.cycle !== this.cycle) this.askCounters();
    if (!this.frame) this.frame = requestAnimationFrame(() => this.draw());
  }

  format(value) {
    const mode = this.valuesSelect.value;
    if (mode === "unsigned") return String(value);
    if (mode === "hex") return value.toString(16).padStart(2, "0");
    return String(signed(value));
  }

  draw() {
    this.frame = 0;
    const trace = this.trace;
    this.cycleInput.value = String(this.cycle);
    this.slider.value = String(this.cycle);
    if (!trace) {
      this.status.textContent = "No battle traced yet.";
      return;
    }
    const { cycles, tape_length: length } = trace;
    const c = this.cycle;
    const ended = { left: "left wins", right: "right wins", tie: "a tie" }[trace.winner];
    const winner = trace.winner === "tie" ? ended : `${this.names[trace.winner]} (${ended})`;
    this.status.replaceChildren(
      "cycle ",
      element("strong", { class: "dbg-now", text: String(c) }),
      " of ",
      element("strong", { class: "dbg-cycles", text: String(cycles) }),
      " · ",
      element("span", { class: "dbg-outcome", text: `${winner}: ${trace.reason}` }),
    );
    const base = c * length;
    const pointers = [trace.left_pointer[c], trace.right_pointer[c]];
    for (let i = -1; i <= length; i++) {
      const slot = this.cells[i + 1];
      const here = SIDES.filter((_, s) => pointers[s] === i);
      slot.markers.textContent = here.map((s) => (s === "left" ? "▼" : "▲")).join("");
      slot.cell.classList.toggle("left-here", here.includes("left"));
      slot.cell.classList.toggle("right-here", here.includes("right"));
      if (i < 0 || i === length) {
        slot.cell.hidden = here.length === 0;
        continue;
      }
      const value = trace.tapes[base + i];
      slot.value.textContent = this.format(value);
      slot.cell.dataset.value = value;
      slot.cell.title = `cell ${i}: ${value} (${signed(value)})`;
      const whose = here.map((side) => `${this.names[side]}'s pointer`).join(", ");
      slot.cell.setAttribute("aria-label", `${slot.cell.title}${whose ? `, ${whose}` : ""}`);
      const flag = i === 0 || i === length - 1;
      slot.second.textContent = flag ? `${value} · ${signed(value)}` : "";
      slot.cell.classList.toggle("zero", value === 0);
    }
    this.follow(pointers);
    this.drawSources();
  }

  // on a narrow screen, scroll the tape to a pointer that moved out of sight
  follow(pointers) {
    const moved = pointers.filter((p, s) => p !== this.lastPointers?.[s]);
    this.lastPointers = pointers;
    const wrap = this.tapeWrap;
    for (const pointer of moved) {
      const cell = this.cells[pointer + 1]?.cell;
      if (!cell || cell.hidden) continue;
      const left = cell.offsetLeft - this.tape.offsetLeft;
      if (left < wrap.scrollLeft || left + cell.offsetWidth > wrap.scrollLeft + wrap.clientWidth) {
        wrap.scrollLeft = Math.max(0, left - (wrap.clientWidth - cell.offsetWidth) / 2);
      }
    }
  }

  drawSources() {
    const trace = this.trace;
    const c = this.cycle;
    if (this.counters.cycle !== c) this.askCounters();
    const live = this.counters.cycle === c ? this.counters.values : [[], []];
    this.root.dataset.countersCycle = this.counters.cycle === c ? c : -1;
    SIDES.forEach((side, s) => {
      const offsets = trace[`${side}_source`];
      const current = c < trace.cycles ? offsets[c] : -1;
      const breaks = this.breakpoints
        .filter((b) => b.kind === "position" && b.side === side)
        .map((b) => b.offset);
      this.panes[side].render(current, breaks, live[s]);
      const source = this.panes[side].source;
      this.where[side].textContent =
        current >= 0
          ? `next: ${source.text[source.charOf(current)]} at ${source.where(current)}`
          : c >= trace.cycles
            ? "(the battle is over)"
            : "(past its end)";
      this.where[side].dataset.offset = current;
    });
  }

  askCounters() {
    if (this.counters.asking || !this.worker) return;
    this.counters.asking = true;
    this.worker.postMessage({ type: "counters", id: this.request, cycle: this.cycle });
  }

  // ---- keyboard ------------------------------------------------------------------

  key(event) {
    const target = event.target;
    if (target.matches("input, select, textarea") || event.altKey || event.metaKey) return;
    const size = (event.shiftKey ? 10 : 1) * (event.ctrlKey ? 100 : 1);
    const keys = {
      ArrowRight: () => this.step(size),
      Period: () => this.step(size),
      ArrowLeft: () => this.step(-size),
      Comma: () => this.step(-size),
      Home: () => this.go(0),
      End: () => this.go(Infinity),
      BracketRight: () => this.run(1),
      BracketLeft: () => this.run(-1),
      KeyB: () => this.breakHere(event.shiftKey ? "right" : "left"),
      KeyG: () => this.cycleInput.focus(),
    };
    const action = keys[event.code];
    if (!action) return;
    event.preventDefault();
    action();
  }

  breakHere(side) {
    if (!this.trace || this.cycle >= this.trace.cycles) return;
    const offset = this.trace[`${side}_source`][this.cycle];
    if (offset >= 0) this.toggleBreakpoint({ kind: "position", side, offset });
  }

  // ---- the interface -------------------------------------------------------------

  getState() {
    return {
      tapeLength: this.tapeLength,
      polarity: this.polarity,
      cycle: this.cycle,
      breakpoints: this.breakpoints.map((b) => ({ ...b })),
    };
  }

  setState(state) {
    const tapeLength = Math.min(30, Math.max(10, Number(state.tapeLength ?? this.tapeLength)));
    const polarity = ["sieve", "kettle"].includes(state.polarity) ? state.polarity : this.polarity;
    const retrace = tapeLength !== this.tapeLength || polarity !== this.polarity;
    this.tapeLength = tapeLength;
    this.polarity = polarity;
    if (state.cycle !== undefined) this.cycle = Math.max(0, Math.round(Number(state.cycle) || 0));
    if (state.breakpoints) this.setBreakpoints(state.breakpoints, false);
    if (retrace) this.load();
    else if (this.trace) this.cycle = Math.min(this.cycle, this.trace.cycles);
    this.schedule();
    this.changed();
  }

  setPrograms(left, right) {
    this.sources = { left: left.source, right: right.source };
    this.names = { left: left.name || "left", right: right.name || "right" };
    for (const side of SIDES) {
      for (const label of this.labels[side]) {
        label.textContent = label.dataset.prefix + this.names[side];
      }
    }
    this.listBreakpoints();
    this.load();
  }

  destroy() {
    cancelAnimationFrame(this.frame);
    clearInterval(this.ticker);
    this.worker?.terminate();
    this.worker = null;
    this.root.remove();
  }
}

export function mountDebugger(container, options = {}) {
  const dbg = new Debugger(container, options);
  return {
    getState: () => dbg.getState(),
    setState: (state) => dbg.setState(state),
    setPrograms: (left, right) => dbg.setPrograms(left, right),
    destroy: () => dbg.destroy(),
  };
}
