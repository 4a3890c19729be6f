// A BF Joust editor: a textarea over a layer that colours the code, shows the
// bracket matching the one at the caret and marks a parse error at its place.
// Plain DOM, no third-party code.

const COLOURING_LIMIT = 200000; // characters: a bigger program is shown plain
const BRACKETS = { "[": "]", "(": ")", "{": "}" };
const CLOSERS = { "]": "[", ")": "(", "}": "{" };
const CLASS = {
  "+": "k-data", "-": "k-data", "<": "k-move", ">": "k-move", ".": "k-nop",
  "[": "k-loop", "]": "k-loop", "(": "k-rep", ")": "k-rep", "{": "k-rep", "}": "k-rep",
  "*": "k-rep", "%": "k-rep",
};

function escapeHtml(text) {
  return text.replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"));
}

function classOf(source, i) {
  const c = source[i];
  if (c >= "0" && c <= "9") return "k-num";
  return CLASS[c] || "k-comment";
}

// the index of the bracket matching the one at `at` (-1: none)
export function matching(source, at) {
  const c = source[at];
  const open = BRACKETS[c];
  const close = CLOSERS[c];
  if (!open && !close) return -1;
  const step = open ? 1 : -1;
  const same = c;
  const other = open || close;
  let depth = 0;
  for (let i = at; i >= 0 && i < source.length; i += step) {
    if (source[i] === same) depth++;
    else if (source[i] === other && --depth === 0) return i;
  }
  return -1;
}

// the character index of UTF-8 byte offset `offset` in `source`
export function charIndex(source, offset) {
  if (offset < 0) return -1;
  let bytes = 0;
  let i = 0;
  while (i < source.length && bytes < offset) {
    const code = source.codePointAt(i);
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    i += code >= 0x10000 ? 2 : 1;
  }
  return i;
}

export class Editor {
  constructor(textarea, layer, onChange) {
    this.textarea = textarea;
    this.layer = layer;
    this.marks = new Map(); // index -> extra class
    this.error = [];
    this.onChange = onChange;
    this.onNumber = null;
    textarea.addEventListener("input", () => {
      this.error = [];
      this.render();
      this.onChange(this.value);
    });
    textarea.addEventListener("scroll", () => this.sync());
    for (const type of ["keyup", "click", "focus"]) {
      textarea.addEventListener(type, () => this.caretMoved());
    }
    new ResizeObserver(() => this.sync()).observe(textarea);
  }

  get value() {
    return this.textarea.value;
  }

  set(value, readOnly = false) {
    this.textarea.value = value;
    this.textarea.readOnly = readOnly;
    this.textarea.classList.toggle("readonly", readOnly);
    this.error = [];
    this.render();
  }

  // mark the parse error's places (character indices) or none
  showError(places) {
    this.error = places.filter((i) => i >= 0);
    this.render();
  }

  select(start, end) {
    this.textarea.focus();
    this.textarea.setSelectionRange(start, end);
    this.caretMoved();
  }

  caretMoved() {
    const source = this.value;
    if (source.length > COLOURING_LIMIT) return;
    const at = this.textarea.selectionStart;
    let pair = [];
    for (const i of [at, at - 1]) {
      const j = i >= 0 ? matching(source, i) : -1;
      if (j >= 0) {
        pair = [i, j];
        break;
      }
    }
    const key = pair.join(",");
    if (key !== this.pairKey) {
      this.pairKey = key;
      this.pair = pair;
      this.render();
    }
    if (this.onNumber) this.onNumber(at);
  }

  render() {
    const source = this.value;
    const plain = source.length > COLOURING_LIMIT;
    this.textarea.classList.toggle("plain", plain);
    if (plain) {
      this.layer.textContent = "";
      return;
    }
    const extra = new Map();
    for (const i of this.pair || []) extra.set(i, "match");
    for (const i of this.error) extra.set(Math.min(i, Math.max(0, source.length - 1)), "err");
    const parts = [];
    let i = 0;
    while (i < source.length) {
      const cls = classOf(source, i);
      let j = i + 1;
      while (j < source.length && !extra.has(j) && !extra.has(i) && classOf(source, j) === cls) j++;
      const mark = extra.get(i);
      const text = escapeHtml(source.slice(i, j));
      parts.push(`<span class="${cls}${mark ? " " + mark : ""}">${text}</span>`);
      i = j;
    }
    if (this.error.some((e) => e >= source.length)) parts.push('<span class="err eof"> </span>');
    parts.push("\n"); // a last empty line keeps its height
    this.layer.innerHTML = parts.join("");
    this.sync();
  }

  sync() {
    this.layer.scrollTop = this.textarea.scrollTop;
    this.layer.scrollLeft = this.textarea.scrollLeft;
  }
}
