// The small DOM helpers the Lab's modules (the debugger's, results.js) share.

export const SIDES = ["left", "right"];

// an element with attributes ("class", "text" or any attribute) and children
export function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

// a cell's byte as a signed number, -128..127
export const signed = (value) => (value > 127 ? value - 256 : value);
