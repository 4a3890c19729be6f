// The Node half of bench/lab_engine.py: the Lab's engine (engine.js over
// engine.wasm) timed in this process, one run per request line on stdin
// ("matrix" or "debug"), its figures a JSON line on stdout.
//
//   node bench/lab_engine.mjs REFERENCE_FOLDER
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { loadEngine } from "../hill/web/static/lab/engine.js";

const folder = process.argv[2];
const names = readFileSync(join(folder, "index.txt"), "utf8").split(/\s+/).filter(Boolean);
const expected = readFileSync(join(folder, "results.txt"), "utf8").split("\n");
const sources = names.map((name) => readFileSync(join(folder, "warriors", name)));
const started = performance.now();
const engine = await loadEngine();
const loadSeconds = (performance.now() - started) / 1000;

// as bench/matrix.py plays it: compile the 98, joust each pair once
function matrix() {
  const begin = performance.now();
  const cpu = process.cpuUsage();
  const programs = sources.map((source) => engine.compile(source));
  const n = programs.length;
  let jousts = 0;
  let wrong = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      jousts++;
      if (engine.joust(programs[i], programs[j]).text !== expected[i * n + j]) wrong++;
    }
  }
  const seconds = (performance.now() - begin) / 1000;
  const used = process.cpuUsage(cpu);
  programs.forEach((program) => program.free());
  return { seconds, cpu: (used.user + used.system) / 1e6, jousts, wrong };
}

const ms = (since) => performance.now() - since;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// a debug session of a 100000-cycle battle: its making, then the counters
// of both sides read 1000 cycles back from the end, step after step, and
// one cycle back at a time
function debug() {
  const left = "(>)*9((+)*25(-)*25)*2100";
  const right = "(+-)*-1";
  let begin = performance.now();
  const session = engine.debug(left, right, 30, "sieve");
  const made = ms(begin);
  const back1000 = [];
  for (let cycle = session.cycles - 1; cycle >= 0; cycle -= 1000) {
    begin = performance.now();
    session.counters(cycle, 0);
    session.counters(cycle, 1);
    back1000.push(ms(begin));
  }
  const back1 = [];
  for (let cycle = session.cycles - 1; cycle > session.cycles - 2048; cycle--) {
    begin = performance.now();
    session.counters(cycle, 0);
    session.counters(cycle, 1);
    back1.push(ms(begin));
  }
  const cycles = session.cycles;
  session.free();
  return {
    cycles,
    made,
    back1000: { median: median(back1000), max: Math.max(...back1000), steps: back1000.length },
    back1: { median: median(back1), max: Math.max(...back1), steps: back1.length },
  };
}

const runs = { matrix, debug };
process.stdout.write(JSON.stringify({ loadSeconds }) + "\n");
for await (const line of createInterface({ input: process.stdin })) {
  process.stdout.write(JSON.stringify(runs[line.trim()]()) + "\n");
}
