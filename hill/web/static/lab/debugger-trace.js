// The Lab debugger's link to its worker (debug-worker.js, which hosts the
// engine and holds the engine.debug session): asks for a battle's trace,
// shows that it is tracing (time so far, a Cancel button; "Trace again" after
// a cancel or a failure), and asks for the live repeat counters of one cycle
// at a time, the latest asked winning.
import { element } from "./debugger-dom.js";

export class Tracer {
  // root: the element marked aria-busy while tracing; traced(trace), failed
  // (error, side) and counted() are called back
  constructor(root, { traced, failed, counted }) {
    this.root = root;
    this.callbacks = { traced, failed, counted };
    this.worker = null;
    this.request = 0; // id of the trace asked for
    this.asked = null; // what the last trace asked
    this.known = { cycle: -1, values: [[], []] };
    this.asking = false;
    this.text = element("span");
    this.cancelButton = element("button", { type: "button", text: "Cancel" });
    this.retryButton = element("button", { type: "button", text: "Trace again" });
    this.element = element(
      "div",
      { class: "dbg-progress", hidden: "" },
      this.text,
      " ",
      this.cancelButton,
      this.retryButton,
    );
    this.cancelButton.addEventListener("click", () => this.cancel());
    this.retryButton.addEventListener("click", () => this.trace(this.asked));
  }

  // asked: {left, right, tapeLength, polarity} (sources as text)
  trace(asked) {
    this.asked = asked;
    this.request += 1;
    this.known = { cycle: -1, values: [[], []] };
    this.asking = false;
    this.worker ??= this.start();
    this.worker.postMessage({ type: "trace", id: this.request, ...asked });
    this.busy(true);
  }

  start() {
    const worker = new Worker(new URL("./debug-worker.js", import.meta.url), { type: "module" });
    worker.onmessage = (event) => this.message(event.data);
    worker.onerror = (event) => {
      event.preventDefault?.();
      this.stopped(`the engine did not start: ${event.message ?? "worker error"}`, true);
    };
    return worker;
  }

  busy(on) {
    clearInterval(this.ticker);
    this.element.hidden = !on;
    this.cancelButton.hidden = !on;
    this.retryButton.hidden = true;
    this.root.setAttribute("aria-busy", on ? "true" : "false");
    if (on) {
      const started = performance.now();
      this.text.textContent = "tracing…";
      this.ticker = setInterval(() => {
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        this.text.textContent = `tracing… ${seconds} s`;
      }, 200);
    }
  }

  cancel() {
    this.worker?.terminate();
    this.worker = null;
    this.request += 1;
    this.stopped("Tracing cancelled.", true);
  }

  stopped(text, retry) {
    this.busy(false);
    this.element.hidden = false;
    this.text.textContent = text;
    this.retryButton.hidden = !retry;
  }

  message(data) {
    if (data.type === "counters") {
      this.asking = false;
      if (data.id === this.request) this.known = { cycle: data.cycle, values: data.counters };
      this.callbacks.counted();
      return;
    }
    if (data.id !== this.request) return;
    if (data.type === "error") {
      const e = data.error;
      const place = e.line ? ` at line ${e.line}, column ${e.column}` : "";
      this.stopped(this.callbacks.failed(e, data.side) + place, !data.side);
      return;
    }
    this.busy(false);
    this.callbacks.traced(data.trace);
  }

  // the counters [left's, right's] of `cycle` if known, else null (and asked)
  counters(cycle) {
    if (this.known.cycle === cycle) return this.known.values;
    if (!this.asking && this.worker) {
      this.asking = true;
      this.worker.postMessage({ type: "counters", id: this.request, cycle });
    }
    return null;
  }

  destroy() {
    clearInterval(this.ticker);
    this.worker?.terminate();
    this.worker = null;
  }
}
