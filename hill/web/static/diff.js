// Marks the changed characters of the diffs (pre.code[data-marks]: "start-end ...",
// offsets in characters) with the CSS Custom Highlight API, so that each
// excerpt stays one text node, the code exactly as submitted: copied,
// searched or read aloud, it is the program.  Without the API the two
// versions are still there side by side, unmarked.
"use strict";
(function () {
  if (!window.CSS || !CSS.highlights || typeof Highlight !== "function") return;
  const marked = { old: new Highlight(), new: new Highlight() };
  for (const pre of document.querySelectorAll("pre.code[data-marks]")) {
    const node = pre.firstChild;
    if (!node || node.nodeType !== Node.TEXT_NODE || !pre.dataset.marks) continue;
    const offset = utf16Offsets(node.data);
    const side = pre.classList.contains("old") ? marked.old : marked.new;
    for (const mark of pre.dataset.marks.split(" ")) {
      const [start, end] = mark.split("-").map(Number);
      const range = new Range();
      range.setStart(node, offset(start));
      range.setEnd(node, offset(end));
      side.add(range);
    }
  }
  CSS.highlights.set("diff-old", marked.old);
  CSS.highlights.set("diff-new", marked.new);

  // the server counts characters (code points); the DOM counts UTF-16 units
  function utf16Offsets(text) {
    if (!/[\uD800-\uDFFF]/.test(text)) return (i) => i;
    const units = [0];
    for (const character of text) units.push(units[units.length - 1] + character.length);
    return (i) => units[Math.min(i, units.length - 1)];
  }
})();
