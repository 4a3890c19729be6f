// The Lab debugger's worker: hosts the engine (engine.js + engine.wasm) and
// holds one engine.debug session, so the page's main thread never runs the
// engine.  The page asks:
//   {type: "trace", id, left, right, tapeLength, polarity, maxCycles}
//     -> {type: "traced", id, trace: {...every field of a trace, arrays
//        transferred...}}  or {type: "error", id, side, error}
//   {type: "counters", id, cycle}
//     -> {type: "counters", id, cycle, counters: [left's, right's]}
// A trace that takes too long is cancelled by terminating this worker.
import { loadEngine } from "./engine.js";

let engine = null;
let session = null;

const ready = loadEngine().then((loaded) => {
  engine = loaded;
});

const FIELDS = ["tape_length", "polarity", "outcome", "winner", "reason", "cycles"];
const ARRAYS = ["left_source", "right_source", "left_pointer", "right_pointer", "tapes"];

function trace(message) {
  if (session) {
    session.free();
    session = null;
  }
  for (const side of ["left", "right"]) {
    const error = engine.check(message[side]);
    if (error) return { type: "error", id: message.id, side, error };
  }
  session = engine.debug(message.left, message.right, message.tapeLength, message.polarity, {
    maxCycles: message.maxCycles ?? engine.MAX_CYCLES,
  });
  const result = { type: "traced", id: message.id, trace: {} };
  for (const field of FIELDS) result.trace[field] = session[field];
  const transfer = [];
  for (const field of ARRAYS) {
    // a copy of our own (the session's arrays may live in the engine's memory)
    const copy = session[field].slice();
    result.trace[field] = copy;
    transfer.push(copy.buffer);
  }
  return [result, transfer];
}

function counters(message) {
  const at = (side) => {
    if (!session || message.cycle < 0 || message.cycle > session.cycles) return [];
    try {
      return session.counters(message.cycle, side);
    } catch {
      return []; // past a program's end: nothing live
    }
  };
  return { type: "counters", id: message.id, cycle: message.cycle, counters: [at(0), at(1)] };
}

self.onmessage = async (event) => {
  const message = event.data;
  try {
    await ready;
    if (message.type === "trace") {
      const answer = trace(message);
      if (Array.isArray(answer)) self.postMessage(answer[0], answer[1]);
      else self.postMessage(answer);
    } else if (message.type === "counters") {
      self.postMessage(counters(message));
    }
  } catch (error) {
    self.postMessage({
      type: "error",
      id: message.id,
      side: null,
      error: { message: String(error?.message ?? error), kind: error?.kind ?? null },
    });
  }
};
