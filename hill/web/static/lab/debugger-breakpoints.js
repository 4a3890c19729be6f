// The Lab debugger's breakpoints: plain JSON objects, and the search for the
// next (or previous) cycle where one fires, straight over the trace's typed
// arrays (no engine call, no message per cycle).
//
//   {kind: "position", side: "left"|"right", offset}  the program is about to
//       execute the instruction at that byte offset of its source
//   {kind: "cell", cell, value}      the cell reaches the value (0..255)
//   {kind: "flag", side}             the side's flag reaches zero
//   {kind: "pointer", side, cell}    the side's pointer reaches the cell
//   {kind: "end"}                    the battle's last cycle
//
// "Reaches" fires at cycle c when the condition holds after c cycles and did
// not after c - 1; a position fires at every cycle that executes it next.

const SIDES = ["left", "right"];

// a breakpoint made plain and valid for a tape of `length` cells, or null
export function normalize(breakpoint, length) {
  const b = breakpoint ?? {};
  const side = SIDES.includes(b.side) ? b.side : null;
  const cell = Number.isInteger(b.cell) && b.cell >= 0 && b.cell < length ? b.cell : null;
  switch (b.kind) {
    case "position":
      return side && Number.isInteger(b.offset) && b.offset >= 0
        ? { kind: "position", side, offset: b.offset }
        : null;
    case "cell":
      return cell !== null && Number.isInteger(b.value) && b.value >= -128 && b.value <= 255
        ? { kind: "cell", cell, value: (b.value + 256) % 256 }
        : null;
    case "flag":
      return side ? { kind: "flag", side } : null;
    case "pointer":
      return side && Number.isInteger(b.cell) && b.cell >= -1 && b.cell <= length
        ? { kind: "pointer", side, cell: b.cell }
        : null;
    case "end":
      return { kind: "end" };
    default:
      return null;
  }
}

export function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// a short description, `sources` naming offsets as "line l, column c"
export function describe(b, names, where) {
  switch (b.kind) {
    case "position":
      return `${names[b.side]} at ${where(b.side, b.offset)}`;
    case "cell":
      return `cell ${b.cell} reaches ${b.value} (${b.value > 127 ? b.value - 256 : b.value})`;
    case "flag":
      return `${names[b.side]}'s flag reaches zero`;
    case "pointer":
      return `${names[b.side]}'s pointer reaches cell ${b.cell}`;
    default:
      return "the end of the battle";
  }
}

// the condition of a level breakpoint after c cycles, as a function of c
function condition(trace, b) {
  const length = trace.tape_length;
  const tapes = trace.tapes;
  switch (b.kind) {
    case "cell":
      return (c) => tapes[c * length + b.cell] === b.value;
    case "flag": {
      const cell = b.side === "left" ? 0 : length - 1;
      return (c) => tapes[c * length + cell] === 0;
    }
    case "pointer": {
      const pointer = trace[`${b.side}_pointer`];
      return (c) => pointer[c] === b.cell;
    }
    default:
      return null;
  }
}

// whether `b` fires at cycle c (0..cycles)
function firing(trace, b) {
  if (b.kind === "end") return (c) => c === trace.cycles;
  if (b.kind === "position") {
    const offsets = trace[`${b.side}_source`];
    return (c) => c < trace.cycles && offsets[c] === b.offset;
  }
  const holds = condition(trace, b);
  return (c) => c > 0 && holds(c) && !holds(c - 1);
}

// The nearest cycle after `from` (direction +1) or before it (-1) where one of
// the breakpoints fires: {cycle, breakpoint}, or null when none does.
export function findBreak(trace, breakpoints, from, direction) {
  let best = null;
  for (const b of breakpoints) {
    const fires = firing(trace, b);
    const stop = direction > 0 ? (best ? best.cycle : trace.cycles + 1) : best ? best.cycle : -1;
    for (let c = from + direction; c !== stop; c += direction) {
      if (fires(c)) {
        best = { cycle: c, breakpoint: b };
        break;
      }
    }
  }
  return best;
}
