// The battle viewer: plays back one battle from /api/trace (typed arrays, see
// README), drawing only the current state, so 100000 cycles cost nothing
// until shown.  Sources are shown as a window around the current instruction,
// so an 800 KB program never reaches the DOM whole.
"use strict";

const $ = (id) => document.getElementById(id);
const viewer = $("viewer");

function decode(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

async function fetchOk(url, as) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response[as]();
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
  constructor(trace, leftCode, rightCode) {
    this.trace = trace;
    this.length = trace.tape_length;
    this.cycles = trace.cycles;
    this.tapes = decode(trace.tapes);
    this.pointers = [trace.left_pointer, trace.right_pointer].map((b) => new Int16Array(decode(b).buffer));
    this.offsets = [trace.left_source, trace.right_source].map((b) => new Int32Array(decode(b).buffer));
    this.sources = [
      new Source(leftCode, $("left-source"), $("left-where")),
      new Source(rightCode, $("right-source"), $("right-where")),
    ];
    this.cycle = 0;
    this.playing = false;
    this.mode = "signed";
    this.buildTape();
    this.drawOverview();
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

  // The whole battle as one picture: column x is cycle x * cycles / width,
  // row band i is cell i; drawn once, the current cycle marked over it.
  drawOverview() {
    const canvas = $("overview");
    const width = canvas.width;
    const band = Math.max(2, Math.floor(canvas.height / this.length));
    canvas.height = band * this.length;
    const context = canvas.getContext("2d");
    const image = context.createImageData(width, canvas.height);
    const paint = (x, y, [r, g, b], alpha) => {
      for (let dy = 0; dy < band; dy++) {
        const at = ((y * band + dy) * width + x) * 4;
        image.data.set([r, g, b, alpha], at);
      }
    };
    for (let x = 0; x < width; x++) {
      const k = Math.round((x * this.cycles) / (width - 1));
      for (let i = 0; i < this.length; i++) {
        const value = this.tapes[k * this.length + i];
        const size = value > 127 ? 256 - value : value;
        paint(x, i, [99, 102, 241], Math.round((size / 128) * 255));
      }
      const [left, right] = this.pointers.map((p) => p[k]);
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

  show(cycle) {
    this.cycle = Math.max(0, Math.min(this.cycles, cycle));
    const k = this.cycle;
    const base = k * this.length;
    const [left, right] = this.pointers.map((p) => p[k]);
    for (let i = 0; i < this.length; i++) {
      const value = this.tapes[base + i];
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
    this.sources.forEach((source, side) => source.show(this.offsets[side][at], k === this.cycles));
    $("cycle").textContent = k;
    $("seek").value = k;
    this.markOverview();
    const outcome = $("outcome");
    const over = k === this.cycles;
    outcome.textContent = over ? this.trace.summary : "";
    outcome.className = "outcome" + (over ? [" loss", "", " win"][this.trace.outcome + 1] : "");
    if (over) this.pause();
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
        this.show(this.cycle + steps);
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
    const [trace, left, right] = await Promise.all([
      fetchOk(viewer.dataset.trace, "json"),
      fetchOk(viewer.dataset.leftSource, "arrayBuffer"),
      fetchOk(viewer.dataset.rightSource, "arrayBuffer"),
    ]);
    window.battle = new Viewer(trace, new Uint8Array(left), new Uint8Array(right));
    $("loading").remove();
    viewer.dataset.ready = "true";
  } catch (error) {
    $("loading").textContent = `The battle could not be loaded: ${error.message}`;
  }
}

if (viewer) start();
