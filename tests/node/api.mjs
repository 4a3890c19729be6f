// The engine.js API itself, beyond the results (tests/test_lab_engine.py runs
// this file and reads its one line of JSON): the ways to load the module,
// Programs compiled once and jousted many times, bad arguments, freed
// handles.  Each failed check throws (exit status 1).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadEngine } from "../../hill/web/static/lab/engine.js";

const wasmUrl = new URL("../../hill/web/static/lab/engine.wasm", import.meta.url);
const engine = await loadEngine();
const fromBytes = await loadEngine(readFileSync(wasmUrl));
const fromUrl = await loadEngine(wasmUrl);
const fromModule = await loadEngine(new WebAssembly.Module(readFileSync(wasmUrl)));
const rush = "(>)*9([-]>)*21";
const expected = engine.joust(rush, "[]").text;
for (const other of [fromBytes, fromUrl, fromModule]) {
  assert.equal(other.joust(rush, "[]").text, expected);
}

// compile once, joust many times, on either side, with strings or bytes
const program = engine.compile(rush);
const idle = engine.compile(new TextEncoder().encode("[]"));
assert.ok(program.instructions > 0);
assert.equal(engine.joust(program, idle).text, expected);
assert.equal(engine.joust(program, "[]").text, expected);
assert.equal(engine.joust("[]", program).sum, -42);
assert.equal(engine.trace(program, idle, 10, "sieve").outcome, 1);
assert.throws(() => fromBytes.joust(program, idle), /its own engine/);

// a debug session keeps working after the sources it compiled are gone
const session = engine.debug(program, "(-)*5", 10, "kettle", { maxCycles: 50 });
assert.deepEqual(session.counters(0, 1), [{ open: 0, value: 5 }]);
assert.throws(() => session.counters(51, 0), RangeError);
assert.throws(() => session.counters(0, 2), RangeError);
session.free();
session.free(); // twice is harmless
assert.throws(() => session.counters(0, 0), /freed/);

// bad arguments
assert.throws(() => engine.joust(rush, rush, { maxCycles: 0 }), RangeError);
assert.throws(() => engine.joust(rush, rush, { maxCycles: 100001 }), RangeError);
assert.throws(() => engine.trace(rush, rush, 9, "sieve"), RangeError);
assert.throws(() => engine.trace(rush, rush, 31, "sieve"), RangeError);
assert.throws(() => engine.trace(rush, rush, 10, "sideways"), RangeError);
assert.throws(() => engine.joust(42, rush), TypeError);

// a parse error on either side names its kind; the other side's program is freed
for (const [left, right, kind] of [
  ["(", rush, "unmatched_open_paren"],
  [rush, "]", "unmatched_close_bracket"],
]) {
  assert.throws(() => engine.joust(left, right), (error) => error.kind === kind);
}

// a source longer than the engine's offsets allow: refused by the core
// before it reads a byte (engine.js refuses it before copying it in)
const x = engine._x;
const [source, error] = [x.alloc(16), x.alloc(12)];
assert.equal(x.compile(source, engine.MAX_SOURCE + 1, error), 0);
const [kind, offset, other] = new Int32Array(x.memory.buffer, error, 3);
assert.equal(engine._string(x.error_name(kind)), "source_too_large");
assert.deepEqual([offset, other], [engine.MAX_SOURCE, -1]);
x.release(source);
x.release(error);

program.free();
program.free();
assert.throws(() => engine.joust(program, idle), /freed/);
idle.free();

// many jousts of sources do not leak: memory stays where it was
const before = engine._x.memory.buffer.byteLength;
for (let i = 0; i < 2000; i++) {
  engine.joust(rush, "(+)*100(-)*100", { maxCycles: 300, stats: true });
}
for (let i = 0; i < 200; i++) engine.debug(rush, "[]", 30, "sieve", { maxCycles: 3000 }).free();
assert.equal(engine._x.memory.buffer.byteLength, before);

console.log(JSON.stringify({ ok: true }));
