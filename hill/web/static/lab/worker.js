// The Lab's engine, off the page's main thread: a module worker hosting the
// hill's engine (engine.js, WebAssembly).  The page sends {id, op, ...} and
// gets back {id, type: "progress", done, total} while long work runs, then
// {id, type: "result", ...} or {id, type: "error", error}.  The page stops
// long work by terminating this worker and starting another.
import { loadEngine } from "./engine.js";
import { withValue } from "./tune.js";

const ready = loadEngine();
const compiled = new Map(); // source -> Program, the hill's programs kept across runs
const KEEP = 400;
let queue = Promise.resolve();

function errorOf(error) {
  const out = { message: String(error && error.message ? error.message : error) };
  for (const key of ["kind", "offset", "other", "line", "column", "otherLine", "otherColumn"]) {
    if (error && error[key] !== undefined) out[key] = error[key];
  }
  return out;
}

function program(engine, source) {
  let p = compiled.get(source);
  if (!p) {
    if (compiled.size >= KEEP) {
      for (const old of compiled.values()) old.free();
      compiled.clear();
    }
    p = engine.compile(source);
    compiled.set(source, p);
  }
  return p;
}

// outcomes (+1/0/-1 from the tested side) as the rank endpoint's rows: "+0-"
const SYMBOL = { 1: "+", 0: "0", "-1": "-" };
function row(outcomes) {
  let text = "";
  for (const o of outcomes) text += SYMBOL[o];
  return text;
}

function against(engine, tested, opponents, report, base, total) {
  const rows = [];
  let last = 0;
  for (let i = 0; i < opponents.length; i++) {
    rows.push(row(engine.joust(tested, program(engine, opponents[i])).outcomes));
    const now = Date.now();
    if (now - last > 50 || i === opponents.length - 1) {
      report(base + i + 1, total);
      last = now;
    }
  }
  return rows;
}

const OPS = {
  check(engine, { source }) {
    return { error: engine.check(source) };
  },
  joust(engine, { left, right, maxCycles }) {
    const r = engine.joust(left, right, { stats: true, maxCycles });
    const battles = r.battles.map((b) => ({
      tape: b.tape,
      polarity: b.polarity,
      outcome: b.outcome,
      cycles: b.cycles,
      ended: b.ended,
    }));
    return { text: r.text, sum: r.sum, outcomes: Array.from(r.outcomes), battles };
  },
  hill(engine, { source, opponents }, report) {
    const tested = engine.compile(source);
    try {
      return { rows: against(engine, tested, opponents, report, 0, opponents.length) };
    } finally {
      tested.free();
    }
  },
  // the program with its characters start..end replaced by each value in turn
  tune(engine, { source, start, end, values, opponents }, report) {
    const total = values.length * opponents.length;
    const runs = values.map((value, i) => {
      let tested;
      try {
        tested = engine.compile(withValue(source, { start, end }, value));
      } catch (error) {
        report((i + 1) * opponents.length, total);
        return { error: errorOf(error) };
      }
      try {
        return { rows: against(engine, tested, opponents, report, i * opponents.length, total) };
      } finally {
        tested.free();
      }
    });
    return { runs };
  },
};

async function handle({ id, op, ...args }) {
  try {
    const engine = await ready;
    const report = (done, total) => postMessage({ id, type: "progress", done, total });
    postMessage({ id, type: "result", ...OPS[op](engine, args, report) });
  } catch (error) {
    postMessage({ id, type: "error", error: errorOf(error) });
  }
}

ready.then(
  () => postMessage({ type: "ready" }),
  (error) => postMessage({ type: "failed", error: errorOf(error) }),
);

self.onmessage = (event) => {
  queue = queue.then(() => handle(event.data));
};
