// The Lab's engine (hill/web/static/lab/engine.js) for the Python tests: one
// Node process answers many requests, a JSON object a line on stdin, an
// answer a line on stdout (tests/support/labnode.py is the other end).
// Sources travel as base64 of their bytes, typed arrays as base64 of theirs.
//
//   node tests/node/serve.mjs [ENGINE_JS]
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const enginePath = process.argv[2]
  ? pathToFileURL(process.argv[2])
  : new URL("../../hill/web/static/lab/engine.js", import.meta.url);
const { loadEngine } = await import(enginePath);
const engine = await loadEngine();

const bytes = (b64) => Buffer.from(b64, "base64");
const b64 = (array) =>
  Buffer.from(array.buffer, array.byteOffset, array.byteLength).toString("base64");
const TRACE_ARRAYS = ["left_source", "right_source", "left_pointer", "right_pointer", "tapes"];

// a thrown parse error as plain data
function failure(error) {
  if (!error.kind) throw error;
  const { kind, offset, other, line, column, otherLine, otherColumn, message } = error;
  return { error: { kind, offset, other, line, column, otherLine, otherColumn, message } };
}

function traceData(trace) {
  const data = { ...trace };
  for (const key of TRACE_ARRAYS) data[key] = b64(trace[key]);
  delete data.counters;
  delete data.free;
  return data;
}

const handlers = {
  constants() {
    const names = ["MIN_TAPE", "MAX_TAPE", "BATTLES", "MAX_CYCLES", "MAX_NEST", "MAX_SOURCE"];
    return Object.fromEntries(
      [...names, "PARSE_ERRORS", "ERROR_MESSAGES"].map((name) => [name, engine[name]]),
    );
  },

  // every ordered pair of the programs in these files, left-major: classic lines
  matrix({ paths }) {
    const programs = paths.map((path) => engine.compile(readFileSync(path)));
    const lines = [];
    for (const left of programs) {
      for (const right of programs) lines.push(engine.joust(left, right).text);
    }
    programs.forEach((program) => program.free());
    return { lines };
  },

  // jousts of sources: [left, right, maxCycles, stats] each
  jousts({ pairs }) {
    return pairs.map(([left, right, maxCycles, stats]) => {
      try {
        return engine.joust(bytes(left), bytes(right), { maxCycles, stats });
      } catch (error) {
        return failure(error);
      }
    });
  },

  // check() of each source, and compile()'s error or instruction count
  check({ sources }) {
    return sources.map((source) => {
      const checked = engine.check(bytes(source));
      try {
        const program = engine.compile(bytes(source));
        program.free();
        return { check: checked, instructions: program.instructions };
      } catch (error) {
        return { check: checked, ...failure(error) };
      }
    });
  },

  trace({ left, right, tape, polarity, maxCycles }) {
    return traceData(engine.trace(bytes(left), bytes(right), tape, polarity, { maxCycles }));
  },

  // a debug session, and its counters at the cycles `at` ([cycle, side] each;
  // "all": every cycle of both sides)
  debug({ left, right, tape, polarity, maxCycles, at }) {
    const session = engine.debug(bytes(left), bytes(right), tape, polarity, { maxCycles });
    try {
      const cycles = [];
      if (at === "all") {
        for (let cycle = 0; cycle <= session.cycles; cycle++) cycles.push([cycle, 0], [cycle, 1]);
      }
      const counters = (at === "all" ? cycles : at).map(([cycle, side]) =>
        session.counters(cycle, side).map(({ open, value }) => [open, value]),
      );
      return { ...traceData(session), counters };
    } finally {
      session.free();
    }
  },
};

for await (const line of createInterface({ input: process.stdin })) {
  let answer;
  try {
    const request = JSON.parse(line);
    answer = { ok: handlers[request.op](request) };
  } catch (error) {
    answer = { fail: `${error.name}: ${error.message}` };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
