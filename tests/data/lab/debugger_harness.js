// Test harness for the Lab debugger (tests/test_lab_debugger.py): mounts the
// component alone and exposes it, and the engine itself, to the test.
import { mountDebugger } from "/static/lab/debugger.js";
import { loadEngine } from "/static/lab/engine.js";

const container = document.getElementById("debugger");
let dbg = null;
let engine = null;

window.harness = {
  changes: [],
  mount(options) {
    dbg?.destroy();
    window.harness.changes = [];
    dbg = mountDebugger(container, {
      ...options,
      onChange: (state) => window.harness.changes.push(state),
    });
  },
  state: () => dbg.getState(),
  setState: (state) => dbg.setState(state),
  setPrograms: (left, right) => dbg.setPrograms(left, right),
  destroy: () => dbg.destroy(),
  // the engine's own counters for a battle at a cycle: [left's, right's]
  async counters(left, right, tapeLength, polarity, cycle) {
    engine ??= await loadEngine(new URL("/static/lab/engine.wasm", location.href));
    const session = engine.debug(left, right, tapeLength, polarity);
    try {
      return [session.counters(cycle, 0), session.counters(cycle, 1)];
    } finally {
      session.free();
    }
  },
};
window.harnessReady = true;
