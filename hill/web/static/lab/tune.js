// Tuning: the repeat counts of a program, a program with one of them changed,
// the plot of points and score by value, and the battles that flip.

const SVG = "http://www.w3.org/2000/svg";
const COUNT = /([)}])(\s*)([*%])(\s*)(-?\d+)/g;

// every repeat count: {start, end, value, line, text}
export function repeatCounts(source) {
  const found = [];
  for (const m of source.matchAll(COUNT)) {
    const start = m.index + m[1].length + m[2].length + m[3].length + m[4].length;
    const end = start + m[5].length;
    const line = source.slice(0, start).split("\n").length;
    const context = source.slice(Math.max(0, start - 14), end).replace(/\s+/g, " ");
    found.push({ start, end, value: parseInt(m[5], 10), line, text: context });
  }
  return found;
}

export function withValue(source, count, value) {
  return source.slice(0, count.start) + String(value) + source.slice(count.end);
}

export function values(from, to, step, limit) {
  const out = [];
  if (!(step > 0) || !Number.isFinite(from) || !Number.isFinite(to)) return out;
  for (let v = from; v <= to && out.length < limit; v += step) out.push(v);
  return out;
}

function el(name, attrs, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function ticks(lo, hi, count) {
  if (hi === lo) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) out.push(+t.toFixed(10));
  return out;
}

// an SVG plot of `series` ([{label, values, dashed}]) over `xs`, two y axes
export function plot(xs, points, scores) {
  const W = 640, H = 280, L = 56, R = 56, T = 16, B = 44;
  const svg = el("svg", {
    viewBox: `0 0 ${W} ${H}`, role: "img", class: "plot",
    "aria-label": "points and score against the hill, by value",
  });
  const xlo = Math.min(...xs), xhi = Math.max(...xs);
  const x = (v) => L + (xhi === xlo ? (W - L - R) / 2 : ((v - xlo) / (xhi - xlo)) * (W - L - R));
  const axis = (vals, side) => {
    let lo = Math.min(...vals), hi = Math.max(...vals);
    if (lo === hi) { lo -= 1; hi += 1; }
    const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
    const at = side === "left" ? L : W - R;
    svg.append(el("line", { x1: at, x2: at, y1: T, y2: H - B, class: "axis" }));
    for (const t of ticks(lo, hi, 5)) {
      svg.append(el("line", { x1: at - 4, x2: at + 4, y1: y(t), y2: y(t), class: "axis" }));
      svg.append(el("text", {
        x: side === "left" ? at - 7 : at + 7, y: y(t) + 4,
        "text-anchor": side === "left" ? "end" : "start", class: "tick",
      }, String(t)));
    }
    return y;
  };
  svg.append(el("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }));
  for (const t of ticks(xlo, xhi, 8)) {
    if (!Number.isInteger(t)) continue;
    svg.append(el("line", { x1: x(t), x2: x(t), y1: H - B, y2: H - B + 4, class: "axis" }));
    svg.append(el("text", { x: x(t), y: H - B + 17, "text-anchor": "middle", class: "tick" }, String(t)));
  }
  svg.append(el("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", class: "label" }, "value"));
  svg.append(el("text", { x: 14, y: T + (H - T - B) / 2, transform: `rotate(-90 14 ${T + (H - T - B) / 2})`, "text-anchor": "middle", class: "label points" }, "points"));
  svg.append(el("text", { x: W - 10, y: T + (H - T - B) / 2, transform: `rotate(90 ${W - 10} ${T + (H - T - B) / 2})`, "text-anchor": "middle", class: "label score" }, "score"));
  for (const [vals, side, cls] of [[points, "left", "points"], [scores, "right", "score"]]) {
    const y = axis(vals, side);
    svg.append(el("polyline", { points: xs.map((v, i) => `${x(v)},${y(vals[i])}`).join(" "), class: `line ${cls}` }));
    xs.forEach((v, i) => {
      const dot = el("circle", { cx: x(v), cy: y(vals[i]), r: 3.5, class: `dot ${cls}` });
      dot.append(el("title", {}, `value ${v}: ${cls} ${vals[i].toFixed(2)}`));
      svg.append(dot);
    });
  }
  return svg;
}

// the battles whose outcome differs between two runs' rows: [{opponent, battle, from, to}]
export function flips(before, after, names) {
  const out = [];
  for (let j = 0; j < before.length; j++) {
    for (let b = 0; b < before[j].length; b++) {
      if (before[j][b] !== after[j][b]) {
        out.push({ opponent: names[j], battle: b, from: before[j][b], to: after[j][b] });
      }
    }
  }
  return out;
}
