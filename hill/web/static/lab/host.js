// The page's side of worker.js: requests as promises, progress callbacks, and
// stop() (terminate the worker, reject what it was doing, start a new one).

export class Stopped extends Error {
  constructor() {
    super("stopped");
    this.stopped = true;
  }
}

export class EngineHost {
  constructor(url, onState) {
    this.url = url;
    this.onState = onState || (() => {});
    this.start();
  }

  start() {
    this.pending = new Map();
    this.next = 1;
    this.worker = new Worker(this.url, { type: "module" });
    this.ready = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.ready.catch(() => {});
    this.worker.onmessage = (event) => this.receive(event.data);
    this.worker.onerror = (event) => {
      const error = new Error(event.message || "the engine could not be loaded");
      this.settle.reject(error);
      for (const job of this.pending.values()) job.reject(error);
      this.pending.clear();
      this.onState();
    };
  }

  receive(message) {
    if (message.type === "ready") return this.settle.resolve();
    if (message.type === "failed") return this.settle.reject(errorFrom(message.error));
    const job = this.pending.get(message.id);
    if (!job) return;
    if (message.type === "progress") {
      if (job.onProgress) job.onProgress(message.done, message.total);
      return;
    }
    this.pending.delete(message.id);
    this.onState();
    if (message.type === "error") job.reject(errorFrom(message.error));
    else job.resolve(message);
  }

  get busy() {
    return this.pending.size > 0;
  }

  run(op, args, onProgress) {
    const id = this.next++;
    const promise = new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
    });
    this.worker.postMessage({ id, op, ...args });
    this.onState();
    return promise;
  }

  stop() {
    this.worker.terminate();
    for (const job of this.pending.values()) job.reject(new Stopped());
    this.start();
    this.onState();
  }
}

function errorFrom(fields) {
  return Object.assign(new Error(fields.message), fields);
}
