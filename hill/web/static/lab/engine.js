// The hill's own engine in the browser (and in Node 18+): an ES module over
// engine.wasm, the WebAssembly build of hill/engine/core/bfjoust.c through the
// thin binding hill/engine/wasm.c (built by `make setup`).  The API is the
// Lab's contract for tools:
//
//   import { loadEngine } from "./engine.js";
//   const engine = await loadEngine();   // or loadEngine(url), loadEngine(bytes)
//   engine.joust(left, right).text;      // "<<<>>>... <<<>>>... 10"
//
// Sources are strings (encoded as UTF-8) or bytes (Uint8Array); every offset
// is a byte offset in the UTF-8 source.  A compiled Program, a debug session
// hold wasm memory: free() them.  No engine logic lives here: only the
// reading of the module's memory, the words of the errors and of how a
// battle ended (the same as hill.engine's), the classic text form.

// What each parse error says (hill.engine.ERROR_MESSAGES, word for word;
// tests/test_lab_engine.py checks it): {other} is "line L, column C" of the
// error's second place, {nest} and {source} the engine's limits.
const MESSAGES = {
  unmatched_open_paren: "unmatched '(': no ')' closes it",
  unmatched_close_paren: "unmatched ')': no '(' opens it",
  brace_without_paren: "'{' outside any '(...)' that could own it",
  second_brace: "second '{' in one '(...)' (the first is at {other})",
  unmatched_close_brace: "unmatched '}': no '{' opens it",
  unclosed_brace: "'{' has no '}' before the ')' at {other} closes its level",
  unmatched_open_bracket: "unmatched '[': no ']' closes it",
  unmatched_close_bracket: "unmatched ']': no '[' opens it",
  bracket_crosses_out:
    "this closes a '(' or '{' level that the '[' at {other} is inside of; " +
    "a loop cannot cross out of a repeat level",
  bracket_crosses_in:
    "this ']' closes the loop inside the '(' or '{' level opened at " +
    "{other}; a loop cannot cross into a repeat level",
  paren_too_deep: "'(' nested deeper than {nest} levels",
  bracket_too_deep: "'[' nested deeper than {nest} levels",
  source_too_large:
    "the program is longer than {source} bytes, the most the engine's offsets can hold",
};

const POLARITIES = ["sieve", "kettle"];
const WINNERS = { 1: "left", 0: "tie", "-1": "right" };
const SYMBOLS = { 1: "<", 0: "X", "-1": ">" };

// bfj_stats (core/bfjoust.h; wasm.c asserts these offsets)
const STATS = { heat: 4, tape: 244, decoy: 274, ended: 334 };
const END_BITS = { leftFlag: 1, rightFlag: 2, leftFell: 4, rightFell: 8, limit: 16 };

const thousands = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

// 1-based line and column (in characters) of a byte offset (hill.engine.line_column)
function lineColumn(bytes, offset) {
  let line = 1;
  let start = 0;
  const end = Math.min(offset, bytes.length);
  for (let i = 0; i < end; i++) {
    if (bytes[i] === 10) {
      line++;
      start = i + 1;
    }
  }
  // characters: code points, as Python counts them (invalid bytes as U+FFFD)
  let column = 1;
  const text = new TextDecoder().decode(bytes.subarray(start, end));
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xd800 || code > 0xdbff) column++;
  }
  return [line, column];
}

function asBytes(source) {
  if (typeof source === "string") return new TextEncoder().encode(source);
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) {
    return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  }
  throw new TypeError("a program's source is a string or bytes");
}

async function wasmModule(from) {
  if (from instanceof WebAssembly.Module) return from;
  if (from instanceof ArrayBuffer || ArrayBuffer.isView(from)) return WebAssembly.compile(from);
  const url = new URL(from ?? "./engine.wasm", import.meta.url);
  if (url.protocol === "file:") {
    const { readFile } = await import("node:fs/promises");
    return WebAssembly.compile(await readFile(url));
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return WebAssembly.compile(await response.arrayBuffer());
}

/**
 * The engine: loads engine.wasm beside this file, or `from` (a URL, the
 * module's bytes or a compiled WebAssembly.Module).
 */
export async function loadEngine(from) {
  const instance = await WebAssembly.instantiate(await wasmModule(from), {});
  return new Engine(instance.exports);
}

// A compiled program: compile once, joust many times; free() it when done
// (one the page forgets is freed when it is collected, if ever).
class Program {
  constructor(engine, handle, bytes) {
    this._engine = engine;
    this._handle = handle;
    this.source = bytes;
    this.instructions = engine._x.instructions(handle);
    engine._programs?.register(this, handle, this);
  }

  get handle() {
    if (!this._handle) throw new Error("this program was freed");
    return this._handle;
  }

  free() {
    if (this._handle) {
      this._engine._programs?.unregister(this);
      this._engine._x.program_free(this._handle);
    }
    this._handle = 0;
  }
}

class Engine {
  constructor(exports) {
    const x = (this._x = exports);
    if (x._initialize) x._initialize();
    if (typeof FinalizationRegistry === "function") {
      this._programs = new FinalizationRegistry((handle) => x.program_free(handle));
    }
    this.MIN_TAPE = x.min_tape();
    this.MAX_TAPE = x.max_tape();
    this.BATTLES = x.battles();
    this.MAX_CYCLES = x.max_cycles();
    this.MAX_NEST = x.max_nest();
    this.MAX_SOURCE = x.max_source();
    const names = [];
    for (let kind = 1; kind < x.error_count(); kind++) {
      names[kind] = this._string(x.error_name(kind));
    }
    this._names = names;
    // the parse errors (all but running out of memory), as _engine.PARSE_ERRORS
    this.PARSE_ERRORS = names.filter((name) => name && name in MESSAGES);
    const limits = { nest: String(this.MAX_NEST), source: thousands(this.MAX_SOURCE) };
    this.ERROR_MESSAGES = Object.fromEntries(
      this.PARSE_ERRORS.map((name) => [
        name,
        MESSAGES[name].replace(/\{(nest|source)\}/g, (_, key) => limits[key]),
      ]),
    );
    // scratch buffers: a compile error (3 int32), a joust's outcomes and cycles
    this._error = this._alloc(12);
    this._outcomes = this._alloc(this.BATTLES);
    this._cycles = this._alloc(16);
    this._stats = 0;
  }

  _alloc(size) {
    const pointer = this._x.alloc(size);
    if (!pointer) throw new Error("out of memory");
    return pointer;
  }

  _string(pointer) {
    const bytes = new Uint8Array(this._x.memory.buffer, pointer);
    return new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0)));
  }

  _int32(pointer, count) {
    return new Int32Array(this._x.memory.buffer, pointer, count);
  }

  // compile, or the error {kind, offset, other} where it is
  _compile(bytes) {
    if (bytes.length > this.MAX_SOURCE) {
      return { error: { kind: "source_too_large", offset: this.MAX_SOURCE, other: -1 } };
    }
    const source = this._alloc(bytes.length);
    new Uint8Array(this._x.memory.buffer, source, bytes.length).set(bytes);
    const handle = this._x.compile(source, bytes.length, this._error);
    this._x.release(source);
    if (handle) return { handle };
    const [kind, offset, other] = this._int32(this._error, 3);
    if (!this._names[kind] || !(this._names[kind] in MESSAGES)) throw new Error("out of memory");
    return { error: { kind: this._names[kind], offset, other } };
  }

  _located(bytes, { kind, offset, other }) {
    const [line, column] = lineColumn(bytes, offset);
    const [otherLine, otherColumn] = other >= 0 ? lineColumn(bytes, other) : [0, 0];
    const where = other >= 0 ? `line ${otherLine}, column ${otherColumn}` : "";
    const message = this.ERROR_MESSAGES[kind].replace("{other}", where);
    return { kind, offset, other, line, column, otherLine, otherColumn, message };
  }

  /** null when `source` parses, else the error where it is. */
  check(source) {
    const bytes = asBytes(source);
    const { handle, error } = this._compile(bytes);
    if (handle) {
      this._x.program_free(handle);
      return null;
    }
    return this._located(bytes, error);
  }

  /** A compiled Program (free() it); a parse error throws an Error with the
   * fields of check()'s answer (its message prefixed with the place). */
  compile(source) {
    const bytes = asBytes(source);
    const { handle, error } = this._compile(bytes);
    if (handle) return new Program(this, handle, bytes);
    // the message says where, as str(hill.errors.ParseError): "line 1, column 2: ..."
    const { message, ...where } = this._located(bytes, error);
    throw Object.assign(new Error(`line ${where.line}, column ${where.column}: ${message}`), where);
  }

  // the two sides as Programs of this engine: [left, right, those compiled
  // here, which the caller frees]
  _sides(left, right) {
    const owned = [];
    try {
      const sides = [left, right].map((side) => {
        if (!(side instanceof Program)) {
          owned.push(this.compile(side));
          return owned[owned.length - 1];
        }
        if (side._engine !== this) throw new Error("a Program runs only in its own engine");
        return side;
      });
      return [...sides, owned];
    } catch (error) {
      owned.forEach((program) => program.free());
      throw error;
    }
  }

  // run `use` on the two sides compiled (and those compiled for it freed after)
  _with(left, right, use) {
    const [a, b, owned] = this._sides(left, right);
    try {
      return use(a, b);
    } finally {
      owned.forEach((program) => program.free());
    }
  }

  _maxCycles(options) {
    const maxCycles = options?.maxCycles ?? this.MAX_CYCLES;
    if (!Number.isInteger(maxCycles) || maxCycles < 1 || maxCycles > this.MAX_CYCLES) {
      throw new RangeError(`maxCycles must be within 1..${this.MAX_CYCLES}`);
    }
    return maxCycles;
  }

  _battle(tapeLength, polarity) {
    if (!Number.isInteger(tapeLength) || tapeLength < this.MIN_TAPE || tapeLength > this.MAX_TAPE) {
      throw new RangeError(`tape length must be within ${this.MIN_TAPE}..${this.MAX_TAPE}`);
    }
    const kettle = POLARITIES.indexOf(polarity);
    if (kettle < 0) throw new RangeError(`polarity must be "sieve" or "kettle", not ${polarity}`);
    return kettle;
  }

  /** The 42 battles of left against right (sources or Programs). */
  joust(left, right, options = {}) {
    const maxCycles = this._maxCycles(options);
    const stats = Boolean(options.stats);
    if (stats && !this._stats) this._stats = this._alloc(this.BATTLES * this._x.stats_size());
    return this._with(left, right, (a, b) => {
      const x = this._x;
      const status = x.joust(
        a.handle,
        b.handle,
        maxCycles,
        this._outcomes,
        this._cycles,
        stats ? this._stats : 0,
      );
      if (status < 0) throw new Error("out of memory");
      const outcomes = Array.from(new Int8Array(x.memory.buffer, this._outcomes, this.BATTLES));
      const [cycles, gameCycles] = new Float64Array(x.memory.buffer, this._cycles, 2);
      const result = { text: classicText(outcomes), sum: sum(outcomes), outcomes };
      Object.assign(result, { cycles, gameCycles });
      if (stats) result.battles = outcomes.map((outcome, i) => this._battleStats(i, outcome));
      return result;
    });
  }

  // battle i's statistics record, as hill.engine.BattleStats (and how it ended)
  _battleStats(index, outcome) {
    const tapes = this.MAX_TAPE - this.MIN_TAPE + 1;
    const tape = this.MIN_TAPE + (index % tapes);
    const base = this._stats + index * this._x.stats_size();
    const memory = this._x.memory.buffer;
    const view = new DataView(memory, base, this._x.stats_size());
    const row = (Type, at, side, size) =>
      Array.from(new Type(memory, base + at + side * this.MAX_TAPE * size, tape));
    const bits = view.getInt16(STATS.ended, true);
    return {
      tape,
      polarity: POLARITIES[Math.floor(index / tapes)],
      outcome,
      cycles: view.getInt32(0, true),
      ended: Object.fromEntries(Object.entries(END_BITS).map(([k, bit]) => [k, !!(bits & bit)])),
      tape_end: row(Int8Array, STATS.tape, 0, 1),
      heat: [0, 1].map((side) => row(Int32Array, STATS.heat, side, 4)),
      decoy: [0, 1].map((side) => row(Uint8Array, STATS.decoy, side, 1)),
    };
  }

  // a trace's fields, copied out of wasm memory
  _traceFields(pointer, tapeLength, polarity, maxCycles) {
    const x = this._x;
    const cycles = x.trace_cycles(pointer);
    const memory = x.memory.buffer;
    const source = (side) => new Int32Array(memory, x.trace_source(pointer, side), cycles).slice();
    const position = (side) =>
      Int16Array.from(new Int8Array(memory, x.trace_pointer(pointer, side), cycles + 1));
    const outcome = x.trace_outcome(pointer);
    const trace = {
      tape_length: tapeLength,
      polarity,
      outcome,
      winner: WINNERS[outcome],
      reason: "",
      cycles,
      max_cycles: maxCycles,
      left_source: source(0),
      right_source: source(1),
      left_pointer: position(0),
      right_pointer: position(1),
      tapes: new Uint8Array(memory, x.trace_tapes(pointer), (cycles + 1) * tapeLength).slice(),
    };
    trace.reason = reason(trace);
    return trace;
  }

  /** One battle, every cycle (as hill.engine.trace and `bfjoust trace`). */
  trace(left, right, tapeLength, polarity = "sieve", options = {}) {
    const kettle = this._battle(tapeLength, polarity);
    const maxCycles = this._maxCycles(options);
    return this._with(left, right, (a, b) => {
      const pointer = this._x.trace(a.handle, b.handle, tapeLength, kettle, maxCycles);
      if (!pointer) throw new Error("out of memory");
      try {
        return this._traceFields(pointer, tapeLength, polarity, maxCycles);
      } finally {
        this._x.trace_free(pointer);
      }
    });
  }

  /** A trace plus the repeat counters of any cycle (counters(cycle, side)); free() it. */
  debug(left, right, tapeLength, polarity = "sieve", options = {}) {
    const kettle = this._battle(tapeLength, polarity);
    const maxCycles = this._maxCycles(options);
    // the session needs its programs alive: it owns those it compiles
    const [a, b, owned] = this._sides(left, right);
    const x = this._x;
    const handle = x.debug_new(a.handle, b.handle, tapeLength, kettle, maxCycles);
    if (!handle) {
      owned.forEach((p) => p.free());
      throw new Error("out of memory");
    }
    const session = this._traceFields(x.debug_trace(handle), tapeLength, polarity, maxCycles);
    let room = 0;
    let buffer = 0;
    let live = handle;
    session.counters = (cycle, side) => {
      if (!live) throw new Error("this debug session was freed");
      for (;;) {
        const count = x.debug_counters(live, cycle, side, buffer, buffer + 4 * room, room);
        if (count < 0) throw new RangeError(`no cycle ${cycle} or side ${side} in this battle`);
        if (count <= room) {
          const opens = this._int32(buffer, count);
          const values = this._int32(buffer + 4 * room, count);
          return Array.from(opens, (open, i) => ({ open, value: values[i] }));
        }
        if (buffer) x.release(buffer);
        buffer = room = 0;
        buffer = this._alloc(8 * Math.max(count, 64));
        room = Math.max(count, 64);
      }
    };
    // (its programs stay referenced here, out of reach of the collector)
    const programs = [a, b];
    session.free = () => {
      if (live) x.debug_free(live);
      if (buffer) x.release(buffer);
      live = buffer = 0;
      programs.length = 0;
      owned.forEach((p) => p.free());
    };
    return session;
  }
}

function sum(outcomes) {
  return outcomes.reduce((total, outcome) => total + outcome, 0);
}

// The classic text form: `<<>X... <<>X... 10` (sieve, kettle, sum)
function classicText(outcomes) {
  const half = outcomes.length / 2;
  const symbols = (part) => part.map((outcome) => SYMBOLS[outcome]).join("");
  return `${symbols(outcomes.slice(0, half))} ${symbols(outcomes.slice(half))} ${sum(outcomes)}`;
}

// How a battle ended, in words (hill.engine.Trace.reason)
function reason(trace) {
  const { cycles, tape_length: length, outcome, max_cycles: maxCycles } = trace;
  const pointers = [
    ["left", trace.left_pointer[cycles]],
    ["right", trace.right_pointer[cycles]],
  ];
  const fell = pointers.filter(([, p]) => p < 0 || p >= length).map(([side]) => side);
  if (fell.length) return `${fell.join(" and ")} ran off the tape`;
  if (outcome === 0 && cycles >= maxCycles) return `no decision in ${maxCycles} cycles`;
  const final = trace.tapes.subarray(cycles * length);
  const dead = [
    ["left", final[0]],
    ["right", final[length - 1]],
  ].filter(([, cell]) => cell === 0);
  const flags = dead.map(([side]) => `${side}'s flag`).join(" and ");
  return `${flags} stayed at zero for two cycles`;
}
