// One program's source in the Lab debugger: the mapping between the engine's
// UTF-8 byte offsets and the string's character (UTF-16) positions, lines and
// columns, and the pane that shows it with the current instruction, the
// breakpoints and the live repeat counters.  A long source (an 800 KB
// program) is shown as a window around the current instruction, so the page
// never lays out the whole of it on each step.

import { SIDES, element } from "./debugger-dom.js";

const FULL = 40000; // sources up to this many characters are shown whole
const HALF_WINDOW = 4000; // else this many characters either side of the instruction
const BADGES = 100; // the innermost live repeats shown beside their '(' (deep nesting)

export class SourceText {
  constructor(text) {
    this.text = text;
    let bytes = 0;
    const charToByte = new Int32Array(text.length + 1);
    for (let i = 0; i < text.length; ) {
      const code = text.codePointAt(i);
      const units = code > 0xffff ? 2 : 1;
      const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
      for (let u = 0; u < units; u++) charToByte[i + u] = bytes;
      bytes += size;
      i += units;
    }
    charToByte[text.length] = bytes;
    this.byteLength = bytes;
    this.ascii = bytes === text.length;
    if (!this.ascii) {
      this.charToByte = charToByte;
      this.byteToChar = new Int32Array(bytes + 1).fill(-1);
      for (let i = text.length; i >= 0; i--) this.byteToChar[charToByte[i]] = i;
    }
    const starts = [0];
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
    this.lineStarts = Int32Array.from(starts);
  }

  // the character position of a byte offset (-1 for none)
  charOf(byte) {
    if (byte < 0 || byte > this.byteLength) return -1;
    if (this.ascii) return byte;
    for (let b = byte; b >= 0; b--) if (this.byteToChar[b] >= 0) return this.byteToChar[b];
    return 0;
  }

  byteOf(char) {
    return this.ascii ? char : this.charToByte[char];
  }

  // {line, column}, 1-based, for a character position
  lineColumn(char) {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.lineStarts[middle] <= char) low = middle;
      else high = middle - 1;
    }
    // the column in characters (code points), as the engine's messages count it
    let column = char - this.lineStarts[low] + 1;
    if (!this.ascii) {
      for (let i = this.lineStarts[low]; i < char; i++) {
        const unit = this.text.charCodeAt(i);
        if (unit >= 0xdc00 && unit <= 0xdfff && i > 0) {
          const before = this.text.charCodeAt(i - 1);
          if (before >= 0xd800 && before <= 0xdbff) column -= 1;
        }
      }
    }
    return { line: low + 1, column };
  }

  where(byte) {
    const { line, column } = this.lineColumn(this.charOf(byte));
    return `line ${line}, column ${column}`;
  }
}

// The pane: a <pre> rebuilt from a few text runs and marked characters.
export class SourcePane {
  constructor(pre, note, onPick) {
    this.pre = pre;
    this.note = note;
    this.source = new SourceText("");
    pre.addEventListener("click", (event) => {
      const char = this.charAt(event.clientX, event.clientY);
      if (char >= 0 && char < this.source.text.length) onPick(this.source.byteOf(char));
    });
  }

  setText(text) {
    this.source = new SourceText(text);
  }

  // the character under a point of the page, or -1
  charAt(x, y) {
    const range = document.caretRangeFromPoint?.(x, y);
    if (!range || !this.pre.contains(range.startContainer)) return -1;
    const holder = range.startContainer.parentElement?.closest("[data-at]");
    if (!holder || range.startContainer.nodeType !== Node.TEXT_NODE) return -1;
    const start = Number(holder.dataset.at);
    const node = range.startContainer;
    // the caret falls between characters: take the one whose box holds the point
    for (const offset of [range.startOffset, range.startOffset - 1]) {
      if (offset < 0 || offset >= node.length) continue;
      const box = document.createRange();
      box.setStart(node, offset);
      box.setEnd(node, offset + 1);
      const rect = box.getBoundingClientRect();
      if (x >= rect.left && x <= rect.right && y >= rect.top && y <= rect.bottom) {
        return start + offset;
      }
    }
    return start + Math.min(range.startOffset, node.length - 1);
  }

  // current: byte offset of the current instruction (-1: none); breaks: set
  // of byte offsets; counters: [{open, value}] (byte offsets); error: the
  // byte offset of a parse error (-1: none)
  render(current, breaks, counters, error = -1) {
    const source = this.source;
    const text = source.text;
    const at = source.charOf(current >= 0 ? current : error);
    let from = 0;
    let to = text.length;
    if (text.length > FULL) {
      const center = at >= 0 ? at : 0;
      from = Math.max(0, center - HALF_WINDOW);
      to = Math.min(text.length, from + 2 * HALF_WINDOW);
      from = Math.max(0, to - 2 * HALF_WINDOW);
    }
    const notes = [];
    if (text.length > FULL) {
      const window = `characters ${from + 1}–${to} of ${text.length}`;
      notes.push(`${window} (a window around the current instruction)`);
    }
    if (counters.length > BADGES) {
      notes.push(`the ${BADGES} innermost of ${counters.length} live repeats' counters shown`);
      counters = counters.slice(-BADGES);
    }
    this.note.textContent = notes.map((note) => `· ${note}`).join(" ");
    const marks = new Map(); // char position: {classes, counters}
    const mark = (char) => {
      if (!marks.has(char)) marks.set(char, { classes: [], counters: [] });
      return marks.get(char);
    };
    if (at >= 0 && at < text.length) mark(at).classes.push(current >= 0 ? "current" : "error");
    for (const byte of breaks) mark(source.charOf(byte)).classes.push("break");
    for (const counter of counters) mark(source.charOf(counter.open)).counters.push(counter);
    const fragment = document.createDocumentFragment();
    let position = from;
    const run = (end) => {
      if (end > position) {
        const span = element("span", { text: text.slice(position, end) });
        span.dataset.at = position;
        fragment.append(span);
      }
    };
    const sorted = [...marks.keys()].filter((c) => c >= from && c < to).sort((a, b) => a - b);
    for (const char of sorted) {
      run(char);
      const { classes, counters: live } = marks.get(char);
      const width = text.codePointAt(char) > 0xffff ? 2 : 1;
      const span = element("span", {
        class: ["ch", ...classes].join(" "),
        text: text.slice(char, char + width),
      });
      span.dataset.at = char;
      fragment.append(span);
      for (const counter of live) {
        const badge = element("sup", { class: "counter", text: String(counter.value) });
        badge.dataset.open = counter.open;
        badge.title =
          text[char] === "}"
            ? `the copy of this (a{b}c)%n's c part that runs, 1 up to n`
            : `the copies of this repeat left to run, this one included`;
        fragment.append(badge);
      }
      position = char + width;
    }
    run(to);
    this.pre.replaceChildren(fragment);
    this.reveal();
  }

  // scroll the pane (not the page) to the current instruction
  reveal() {
    const current = this.pre.querySelector(".current");
    if (!current) return;
    const pane = this.pre;
    const top = current.offsetTop; // the pre is positioned: its children's offsetParent
    if (top < pane.scrollTop || top + current.offsetHeight > pane.scrollTop + pane.clientHeight) {
      pane.scrollTop = Math.max(0, top - pane.clientHeight / 3);
    }
  }
}

// Both programs' panes, with a caption each (the side's name, where its next
// instruction is) and a line saying what the marks mean.
export class Sources {
  // name(side): an element showing the side's name; toggle(side, offset):
  // a character of a source was clicked
  constructor(name, toggle) {
    const panes = element("div", { class: "dbg-sources" });
    this.panes = {};
    this.captions = {};
    for (const side of SIDES) {
      const pre = element("pre", {
        class: `dbg-source ${side}`,
        tabindex: "0",
        "aria-label": `the ${side} program's source`,
      });
      const note = element("span", { class: "dbg-window" });
      this.captions[side] = element("span", { class: "dbg-where" });
      const caption = element("figcaption", {}, name(side), " ", this.captions[side], " ", note);
      panes.append(element("figure", { class: `dbg-pane ${side}` }, caption, pre));
      this.panes[side] = new SourcePane(pre, note, (offset) => toggle(side, offset));
    }
    const hint = element("p", {
      class: "dbg-hint",
      text:
        "Highlighted: the instruction each program runs next. The small numbers are the " +
        "live repeat counters: beside a ( the copies of its repeat left to run (this one " +
        "included); beside the } of (a{b}c)%n the copy of c that runs.",
    });
    this.element = element("div", {}, panes, hint);
  }

  setTexts(texts) {
    for (const side of SIDES) this.panes[side].setText(texts[side]);
  }

  where(side, offset) {
    return this.panes[side].source.where(offset);
  }

  // a parse error's place
  error(side, offset) {
    this.panes[side].render(-1, [], [], offset);
  }

  // offsets: [left's, right's] next instruction (-1: none); over: the battle
  // has ended; breakpoints: all of them; counters: [left's, right's]
  draw(offsets, over, breakpoints, counters) {
    SIDES.forEach((side, s) => {
      const current = offsets[s];
      const breaks = breakpoints
        .filter((b) => b.kind === "position" && b.side === side)
        .map((b) => b.offset);
      const pane = this.panes[side];
      pane.render(current, breaks, counters[s]);
      const caption = this.captions[side];
      caption.textContent =
        current >= 0
          ? `next: ${pane.source.text[pane.source.charOf(current)]} at ${this.where(side, current)}`
          : over
            ? "(the battle is over)"
            : "(past its end)";
      caption.dataset.offset = current;
    });
  }
}
