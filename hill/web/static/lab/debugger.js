// The Lab's debugger: one battle, cycle by cycle, forward and back.
//
//   import { mountDebugger } from "./debugger.js";
//   const dbg = mountDebugger(container, {left, right, tapeLength, polarity,
//                                         cycle, breakpoints, onChange});
//   dbg.getState()   // {tapeLength, polarity, cycle, breakpoints}
//   dbg.setState(state); dbg.setPrograms(left, right); dbg.destroy();
//
// left and right are {name, source}; breakpoints are the plain objects of
// debugger-breakpoints.js; onChange(getState()) is called whenever the cycle,
// the battle or the breakpoints change.
//
// The engine runs in a module worker (debug-worker.js) holding an
// engine.debug session; the page keeps the whole trace (every cycle's tape,
// pointers and instructions), so stepping and seeking in either direction are
// array lookups, and breakpoints are searched in those arrays.  Only the live
// repeat counters come from the worker, one question per shown cycle.
import { describe, findBreak, normalize, same } from "./debugger-breakpoints.js";
import { BreakpointPanel, battleControls, keysHelp, stepControls } from "./debugger-controls.js";
import { SIDES, element, signed } from "./debugger-dom.js";
import { Sources } from "./debugger-source.js";
import { TapeView } from "./debugger-tape.js";
import { Tracer } from "./debugger-trace.js";

const TAPES = [10, 30]; // the shortest and longest tape

function styleSheet() {
  const href = new URL("./debugger.css", import.meta.url).href;
  const loaded = [...document.styleSheets].some((sheet) => sheet.href === href);
  if (!loaded && !document.querySelector(`link[href="${href}"]`)) {
    document.head.append(element("link", { rel: "stylesheet", href }));
  }
}

const tapeLength = (value, otherwise) => {
  const n = Math.round(Number(value));
  return Number.isFinite(n) ? Math.min(TAPES[1], Math.max(TAPES[0], n)) : otherwise;
};

const cycleOf = (value) => Math.max(0, Math.round(Number(value)) || 0);

class Debugger {
  constructor(container, options) {
    this.names = { left: options.left?.name || "left", right: options.right?.name || "right" };
    this.programs = { left: options.left?.source ?? "", right: options.right?.source ?? "" };
    this.tapeLength = tapeLength(options.tapeLength, TAPES[0]);
    this.polarity = options.polarity === "kettle" ? "kettle" : "sieve";
    this.cycle = cycleOf(options.cycle);
    this.breakpoints = [];
    this.onChange = options.onChange ?? (() => {});
    this.trace = null;
    this.frame = 0;
    styleSheet();
    this.build(container);
    this.setBreakpoints(options.breakpoints ?? [], false);
    this.load();
  }

  // ---- the page ------------------------------------------------------------

  build(container) {
    this.labels = []; // the elements showing a side's name: [side, prefix, element]
    const name = (side, prefix = "", tag = "span", attributes = {}) => {
      const text = prefix + this.names[side];
      const label = element(tag, { class: `dbg-marker ${side}`, ...attributes, text });
      this.labels.push([side, prefix, label]);
      return label;
    };
    this.root = element("section", { class: "dbg", "aria-label": "Debugger", tabindex: "-1" });
    this.status = element("p", { class: "dbg-status", "aria-live": "polite" });
    this.tracer = new Tracer(this.root, {
      traced: (trace) => this.traced(trace),
      failed: (error, side) => this.failed(error, side),
      counted: () => this.schedule(),
    });
    this.tape = new TapeView(name);
    this.steps = stepControls({
      go: (cycle) => this.go(cycle),
      step: (n) => this.go(this.cycle + n),
      run: (direction) => this.run(direction),
    });
    this.panel = new BreakpointPanel(name, {
      add: (b) => this.setBreakpoints([...this.breakpoints, b]),
      remove: (b) => this.setBreakpoints(this.breakpoints.filter((o) => o !== b)),
      offset: (side) => this.currentOffset(side),
    });
    this.battle = battleControls({
      tapeLength: (n) => this.setState({ tapeLength: n }),
      polarity: (polarity) => this.setState({ polarity }),
      values: () => this.schedule(),
    });
    this.root.append(this.status, this.tracer.element, this.battle.element, this.tape.wrap);
    this.root.append(this.tape.legend, this.steps.element, this.panel.element);
    this.sources = new Sources(name, (side, offset) =>
      this.toggleBreakpoint({ kind: "position", side, offset }),
    );
    this.root.append(this.sources.element, keysHelp());
    this.root.addEventListener("keydown", (event) => this.key(event));
    container.append(this.root);
  }

  // ---- tracing ---------------------------------------------------------------

  load() {
    this.trace = null;
    this.sources.setTexts(this.programs);
    this.listBreakpoints(); // positions are named by line and column of these sources
    this.battle.tapeSelect.value = String(this.tapeLength);
    this.battle.polaritySelect.value = this.polarity;
    this.tracer.trace({ ...this.programs, tapeLength: this.tapeLength, polarity: this.polarity });
    this.schedule();
  }

  traced(trace) {
    this.trace = trace;
    this.steps.slider.max = String(trace.cycles);
    this.steps.cycleInput.max = String(trace.cycles);
    this.cycle = Math.min(this.cycle, trace.cycles);
    this.tape.setLength(trace.tape_length);
    this.schedule();
  }

  // a program that does not parse: its error marked in its source; the words
  failed(error, side) {
    if (side && error.offset >= 0) this.sources.error(side, error.offset);
    return `${side ? `${this.names[side]}: ` : ""}${error.message}`;
  }

  // ---- moving ------------------------------------------------------------------

  go(cycle, hit = "") {
    if (!this.trace) return; // still tracing: nothing to move over yet
    const next = Math.min(this.trace.cycles, cycleOf(cycle));
    this.steps.hit.textContent = hit;
    if (next === this.cycle) return this.schedule();
    this.cycle = next;
    this.schedule();
    this.changed();
  }

  run(direction) {
    if (!this.trace) return;
    const found = findBreak(this.trace, this.breakpoints, this.cycle, direction);
    if (found) {
      this.go(found.cycle, `Stopped at ${this.describe(found.breakpoint)}.`);
    } else {
      const edge = direction > 0 ? this.trace.cycles : 0;
      this.go(edge, `No breakpoint ${direction > 0 ? "ahead" : "behind"}.`);
    }
  }

  changed() {
    this.onChange(this.getState());
  }

  // the byte offset of the instruction a side runs next, or -1
  currentOffset(side) {
    if (!this.trace || this.cycle >= this.trace.cycles) return -1;
    return this.trace[`${side}_source`][this.cycle];
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

  toggleBreakpoint(b) {
    const plain = normalize(b, this.tapeLength);
    if (!plain) return;
    const others = this.breakpoints.filter((o) => !same(o, plain));
    this.setBreakpoints(others.length < this.breakpoints.length ? others : [...others, plain]);
  }

  describe(b) {
    return describe(b, this.names, (side, offset) => this.sources.where(side, offset));
  }

  listBreakpoints() {
    this.panel.show(this.breakpoints, (b) => this.describe(b));
  }

  // ---- drawing -------------------------------------------------------------------

  // draw at the next frame; ask for the counters now, so that they usually
  // come back before that frame and the state is drawn once, whole
  schedule() {
    if (this.trace) this.tracer.counters(this.cycle);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.draw());
  }

  format(value) {
    const mode = this.battle.valuesSelect.value;
    if (mode === "unsigned") return String(value);
    if (mode === "hex") return value.toString(16).padStart(2, "0");
    return String(signed(value));
  }

  draw() {
    this.frame = 0;
    const trace = this.trace;
    this.steps.cycleInput.value = String(this.cycle);
    this.steps.slider.value = String(this.cycle);
    if (!trace) {
      this.status.textContent = "No battle traced yet.";
      return;
    }
    const ended = { left: "left wins", right: "right wins", tie: "a tie" }[trace.winner];
    const winner = trace.winner === "tie" ? ended : `${this.names[trace.winner]} (${ended})`;
    this.status.replaceChildren(
      "cycle ",
      element("strong", { class: "dbg-now", text: String(this.cycle) }),
      " of ",
      element("strong", { class: "dbg-cycles", text: String(trace.cycles) }),
      " · ",
      element("span", { class: "dbg-outcome", text: `${winner}: ${trace.reason}` }),
    );
    this.tape.draw(trace, this.cycle, (value) => this.format(value), this.names);
    this.drawSources();
  }

  drawSources() {
    const counters = this.tracer.counters(this.cycle);
    this.root.dataset.countersCycle = counters ? this.cycle : -1;
    const offsets = SIDES.map((side) => this.currentOffset(side));
    const over = this.cycle >= this.trace.cycles;
    this.sources.draw(offsets, over, this.breakpoints, counters ?? [[], []]);
  }

  // ---- keyboard ------------------------------------------------------------------

  key(event) {
    if (event.target.matches("input, select, textarea") || event.altKey || event.metaKey) return;
    const size = (event.shiftKey ? 10 : 1) * (event.ctrlKey ? 100 : 1);
    const keys = {
      ArrowRight: () => this.go(this.cycle + size),
      Period: () => this.go(this.cycle + size),
      ArrowLeft: () => this.go(this.cycle - size),
      Comma: () => this.go(this.cycle - size),
      Home: () => this.go(0),
      End: () => this.go(Infinity),
      BracketRight: () => this.run(1),
      BracketLeft: () => this.run(-1),
      KeyB: () => this.breakHere(event.shiftKey ? "right" : "left"),
      KeyG: () => this.steps.cycleInput.focus(),
    };
    const action = keys[event.code];
    if (!action) return;
    event.preventDefault();
    action();
  }

  breakHere(side) {
    const offset = this.currentOffset(side);
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
    const length = tapeLength(state.tapeLength ?? this.tapeLength, this.tapeLength);
    const polarity = ["sieve", "kettle"].includes(state.polarity) ? state.polarity : this.polarity;
    const retrace = length !== this.tapeLength || polarity !== this.polarity;
    this.tapeLength = length;
    this.polarity = polarity;
    if (state.cycle !== undefined) this.cycle = cycleOf(state.cycle);
    // breakpoints are kept only where they make sense on this tape
    this.setBreakpoints(state.breakpoints ?? this.breakpoints, false);
    if (retrace) this.load();
    else if (this.trace) this.cycle = Math.min(this.cycle, this.trace.cycles);
    this.schedule();
    this.changed();
  }

  setPrograms(left, right) {
    this.programs = { left: left.source, right: right.source };
    this.names = { left: left.name || "left", right: right.name || "right" };
    for (const [side, prefix, label] of this.labels) label.textContent = prefix + this.names[side];
    this.load();
  }

  destroy() {
    cancelAnimationFrame(this.frame);
    this.tracer.destroy();
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
