// The battle viewer: plays back one battle from /api/trace, drawing only the
// current state.  The battle comes in pieces of up to piece_states states
// (see hill/web/trace_pieces.py): the first one with a picture of the whole
// battle, the others fetched when the viewer gets near them, so even a
// 100000-cycle battle shows at once.  Sources are shown as a window around
// the current instruction, so an 800 KB program never reaches the DOM whole.
"use strict";

const $ = (id) => document.getElementById(id);
const viewer = $("viewer");
const BUSY_RETRIES = 10;

function decode(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

const sleep = (seconds) => new Promise((done) => setTimeout(done, seconds * 1000));

// A busy hill answers 503 with Retry-After: wait that long and ask again.
async function fetchOk(url, as) {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url);
    if (response.status === 503 && attempt < BUSY_RETRIES) {
      await sleep(Number(response.headers.get("Retry-After")) || 2);
      continue;
    }
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    return response[as]();
  }
}

// The battle's arrays, filled in piece by piece.
class Battle {
  constructor(first, url) {
    this.url = url;
    this.length = first.tape_length;
    this.cycles = first.cycles;
    this.pieceStates = first.piece_states;
    const states = this.cycles + 1;
    this.tapes = new Uint8Array(states * this.length);
    this.pointers = [new Int8Array(states), new Int8Array(states)];
    this.offsets = [new Int32Array(this.cycles), new Int32Array(this.cycles)];
    this.loaded = new Array(first.pieces).fill(false);
    this.loading = new Map(); // piece index: its promise
    this.add(first);
  }

  piece(cycle) { return Math.floor(cycle / this.pieceStates); }

  has(cycle) { return this.loaded[this.piece(cycle)]; }

  // the piece holding `cycle`, fetched once
  load(cycle) {
    const index = this.piece(cycle);
    if (this.loaded[index]) return Promise.resolve();
    if (!this.loading.has(index)) {
      const url = `${this.url}&from=${index * this.pieceStates}`;
      this.loading.set(index, fetchOk(url, "json").then((piece) => this.add(piece))
        .finally(() => this.loading.delete(index)));
    }
    return this.loading.get(index);
  }

  add(piece) {
    const n = this.length;
    const start = piece.from;
    this.tapes.set(decode(piece.tape), start * n);
    // each later state: the state before, then its changed cells
    const changes = decode(piece.changes);
    const cells = decode(piece.cells);
    const values = decode(piece.values);
    let change = 0;
    for (let k = 1; k < piece.count; k++) {
      const at = (start + k) * n;
      this.tapes.copyWithin(at, at - n, at);
      for (let j = 0; j < changes[k - 1]; j++, change++) this.tapes[at + cells[change]] = values[change];
    }
    [piece.left_pointer, piece.right_pointer].forEach((data, side) =>
      this.pointers[side].set(new Int8Array(decode(data).buffer), start));
    [piece.left_source, piece.right_source].forEach((data, side) =>
      this.offsets[side].set(new Int32Array(decode(data).buffer), start));
    this.loaded[this.piece(start)] = true;
  }
}

// A program's source: byte offsets to line:column, and a window of text.
class Source {
  constructor(bytes, pre, where) {
    this.bytes = bytes;
    this.pre = pre;
    this.where = where;
    this.decoder = new TextDecoder("utf-8");
    const lines = [0];
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) lines.push(i + 1);
    this.lines = Int32Array.from(lines); // offsets where lines start
    this.shown = null;
  }

  line(offset) { // 0-based line of a byte offset (binary search)
    let low = 0, high = this.lines.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.lines[mid] <= offset) low = mid; else high = mid - 1;
    }
    return low;
  }

  text(start, end) { return this.decoder.decode(this.bytes.subarray(start, end)); }

  show(offset, ran) {
    if (this.shown === offset) return;
    this.shown = offset;
    if (offset < 0) {
      this.mark = null;
      this.where.textContent = "ran past its end";
      const start = Math.max(0, this.bytes.length - 400);
      this.pre.replaceChildren((start > 0 ? "…" : "") + this.text(start, this.bytes.length));
      return;
    }
    const line = this.line(offset);
    const column = offset - this.lines[line] + 1;
    this.where.textContent = `${ran ? "last ran" : "next"}: ${String.fromCharCode(this.bytes[offset])} at ${line + 1}:${column}`;
    // up to 5 lines before and 10 after, and at most 300 / 700 bytes
    const first = this.lines[Math.max(0, line - 5)];
    const last = line + 11 < this.lines.length ? this.lines[line + 11] : this.bytes.length;
    const start = Math.max(first, offset - 300);
    const end = Math.min(last, offset + 700);
    const mark = document.createElement("mark");
    mark.textContent = this.text(offset, offset + 1);
    this.pre.replaceChildren(
      (start > 0 ? "…" : "") + this.text(start, offset), mark,
      this.text(offset + 1, end) + (end < this.bytes.length ? "…" : ""));
    this.mark = mark;
    this.center();
  }

  center() { // long lines wrap: keep the instruction in the middle of the box
    if (this.mark) this.pre.scrollTop = this.mark.offsetTop - this.pre.clientHeight / 2;
  }
}

class Viewer {
  constructor(first, url, leftCode, rightCode) {
    this.battle = new Battle(first, url);
    this.summary = first.summary;
    this.outcome = first.outcome;
    this.length = first.tape_length;
    this.cycles = first.cycles;
    this.sources = [
      new Source(leftCode, $("left-source"), $("left-where")),
      new Source(rightCode, $("right-source"), $("right-where")),
    ];
    this.cycle = 0;
    this.playing = false;
    this.mode = "signed";
    this.buildTape();
    this.drawOverview(first.overview);
    $("cycles").textContent = this.cycles;
    $("seek").max = this.cycles;
    this.bind();
    this.show(0);
  }

  buildTape() {
    this.cells = [];
    const tape = $("tape");
    tape.replaceChildren();
    for (let i = 0; i < this.length; i++) {
      const cell = document.createElement("div");
      cell.className = "c" + (i === 0 || i === this.length - 1 ? " flag" : "");
      const parts = ["p l", "v", "p r", "i"].map((name) => {
        const part = document.createElement("span");
        part.className = name;
        cell.append(part);
        return part;
      });
      parts[3].textContent = i;
      tape.append(cell);
      this.cells.push({ cell, left: parts[0], value: parts[1], right: parts[2] });
    }
  }

  // The whole battle as one picture, from the states the first piece samples
  // evenly: column x is sample x * (samples - 1) / (width - 1), row band i
  // is cell i; drawn once, the current cycle marked over it.
  drawOverview(overview) {
    const canvas = $("overview");
    const width = canvas.width;
    const band = Math.max(2, Math.floor(canvas.height / this.length));
    canvas.height = band * this.length;
    const context = canvas.getContext("2d");
    const image = context.createImageData(width, canvas.height);
    const tapes = decode(overview.tapes);
    const pointers = [overview.left_pointer, overview.right_pointer].map((data) => new Int8Array(decode(data).buffer));
    const samples = overview.cycles.length;
    const paint = (x, y, [r, g, b], alpha) => {
      for (let dy = 0; dy < band; dy++) {
        const at = ((y * band + dy) * width + x) * 4;
        image.data.set([r, g, b, alpha], at);
      }
    };
    for (let x = 0; x < width; x++) {
      const s = Math.round((x * (samples - 1)) / (width - 1));
      for (let i = 0; i < this.length; i++) {
        const value = tapes[s * this.length + i];
        const size = value > 127 ? 256 - value : value;
        paint(x, i, [99, 102, 241], Math.round((size / 128) * 255));
      }
      const [left, right] = pointers.map((p) => p[s]);
      if (left >= 0 && left < this.length) paint(x, left, [37, 99, 235], 255);
      if (right >= 0 && right < this.length) paint(x, right, [234, 88, 12], 255);
    }
    this.overview = { context, image, width };
    canvas.addEventListener("click", (event) => {
      const box = canvas.getBoundingClientRect();
      const share = (event.clientX - box.left) / box.width;
      this.pause();
      this.show(Math.round(share * this.cycles));
    });
  }

  markOverview() {
    const { context, image, width } = this.overview;
    context.putImageData(image, 0, 0);
    const x = Math.round((this.cycle / Math.max(1, this.cycles)) * (width - 1));
    context.fillStyle = "rgba(245, 158, 11, 0.9)";
    context.fillRect(Math.max(0, x - 1), 0, 3, context.canvas.height);
  }

  format(value) {
    if (this.mode === "hex") return value.toString(16).padStart(2, "0");
    if (this.mode === "unsigned") return String(value);
    return String(value > 127 ? value - 256 : value);
  }

  // Go to `cycle`: the counters at once, the tape and sources when its
  // piece is there (fetched now if need be).
  show(cycle) {
    this.cycle = Math.max(0, Math.min(this.cycles, cycle));
    const k = this.cycle;
    $("cycle").textContent = k;
    $("seek").value = k;
    this.markOverview();
    const outcome = $("outcome");
    const over = k === this.cycles;
    outcome.textContent = over ? this.summary : "";
    outcome.className = "outcome" + (over ? [" loss", "", " win"][this.outcome + 1] : "");
    if (over) this.pause();
    const battle = this.battle;
    if (!battle.has(k)) {
      viewer.dataset.loading = "true";
      battle.load(k).then(() => { if (this.cycle === k) this.show(k); }, (error) => this.failed(error));
      return;
    }
    delete viewer.dataset.loading;
    this.drawState(k);
    // fetch the next piece while this one plays
    if (k + battle.pieceStates / 2 <= this.cycles && !battle.has(k + battle.pieceStates / 2)) {
      battle.load(k + battle.pieceStates / 2).catch((error) => this.failed(error));
    }
  }

  drawState(k) {
    const battle = this.battle;
    const base = k * this.length;
    const [left, right] = battle.pointers.map((p) => p[k]);
    for (let i = 0; i < this.length; i++) {
      const value = battle.tapes[base + i];
      const c = this.cells[i];
      c.value.textContent = this.format(value);
      const signed = value > 127 ? 256 - value : value;
      c.value.style.setProperty("--heat", Math.round((signed / 128) * 70));
      c.value.classList.toggle("hot", signed > 80);
      c.left.textContent = i === left ? "▼" : "";
      c.right.textContent = i === right ? "▲" : "";
      if (i === 0 || i === this.length - 1) c.cell.classList.toggle("zero", value === 0);
    }
    // the instruction each program runs in the next cycle (the last one at the end)
    const at = Math.min(k, this.cycles - 1);
    this.sources.forEach((source, side) => source.show(battle.offsets[side][at], k === this.cycles));
  }

  failed(error) {
    this.pause();
    $("outcome").textContent = `This part of the battle could not be loaded: ${error.message}`;
  }

  play() {
    if (this.cycle === this.cycles) this.show(0);
    this.playing = true;
    $("play").textContent = "⏸ Pause";
    let last = performance.now();
    let due = 0;
    const tick = (now) => {
      if (!this.playing) return;
      due += ((now - last) / 1000) * Number($("speed").value);
      last = now;
      if (due >= 1) {
        const steps = Math.floor(due);
        due -= steps;
        // wait at the end of what has arrived for the next piece
        if (this.battle.has(Math.min(this.cycles, this.cycle + steps))) this.show(this.cycle + steps);
        else { due = 0; this.battle.load(this.cycle + steps).catch((error) => this.failed(error)); }
      }
      if (this.playing) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }

  pause() {
    this.playing = false;
    $("play").textContent = "▶ Play";
  }

  bind() {
    const on = (id, type, action) => $(id).addEventListener(type, action);
    on("play", "click", () => (this.playing ? this.pause() : this.play()));
    on("step", "click", () => { this.pause(); this.show(this.cycle + 1); });
    on("back", "click", () => { this.pause(); this.show(this.cycle - 1); });
    on("start", "click", () => { this.pause(); this.show(0); });
    on("end", "click", () => this.show(this.cycles));
    on("seek", "input", (event) => this.show(Number(event.target.value)));
    on("values", "change", (event) => { this.mode = event.target.value; this.show(this.cycle); });
    window.addEventListener("resize", () => this.sources.forEach((source) => source.center()));
    document.addEventListener("keydown", (event) => {
      if (event.target.closest("select, input, button") && event.key !== "Escape") return;
      const keys = {
        " ": () => (this.playing ? this.pause() : this.play()),
        ArrowRight: () => this.show(this.cycle + 1),
        ArrowLeft: () => this.show(this.cycle - 1),
        Home: () => this.show(0),
        End: () => this.show(this.cycles),
      };
      if (keys[event.key]) { event.preventDefault(); keys[event.key](); }
    });
  }
}

async function start() {
  try {
    const url = viewer.dataset.trace;
    const [first, left, right] = await Promise.all([
      fetchOk(url, "json"),
      fetchOk(viewer.dataset.leftSource, "arrayBuffer"),
      fetchOk(viewer.dataset.rightSource, "arrayBuffer"),
    ]);
    window.battle = new Viewer(first, url, new Uint8Array(left), new Uint8Array(right));
    $("loading").remove();
    viewer.dataset.ready = "true";
  } catch (error) {
    $("loading").textContent = `The battle could not be loaded: ${error.message}`;
  }
}

if (viewer) start();
