// The Lab's state in the address's fragment (never sent to the server).
// Keys, `&`-separated (LAB.md's plain form is a subset):
//   left=NAME / right=NAME        a hill program by full name
//   left-event=N / right-event=N  ... in hill state N (default: the page's)
//   left-hash=H / right-hash=H    any program ever submitted, by code hash
//   left-code=B64 / right-code=B64  code: unpadded base64url of its UTF-8 bytes
//   left-z=B64 / right-z=B64      code deflated (deflate-raw), then base64url
//   vs=hill                       the left program against the whole hill
//   event=N                       the hill state (the page's ?event=N, which wins)
//   tape=N&polarity=P             the battle open in the debugger
//   cycle=N, bp=B64               the debugger's cycle and breakpoints (JSON)

const PLAIN_LIMIT = 1500; // bytes of code kept uncompressed in a link

export function toBase64url(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function fromBase64url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(b64 + "===".slice((b64.length + 3) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

async function through(stream, bytes) {
  const piped = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(piped).arrayBuffer());
}

export async function encodeCode(source) {
  const bytes = new TextEncoder().encode(source);
  if (bytes.length <= PLAIN_LIMIT || typeof CompressionStream === "undefined") {
    return ["code", toBase64url(bytes)];
  }
  return ["z", toBase64url(await through(new CompressionStream("deflate-raw"), bytes))];
}

export async function decodeCode(kind, text) {
  let bytes = fromBase64url(text);
  if (kind === "z") bytes = await through(new DecompressionStream("deflate-raw"), bytes);
  return new TextDecoder().decode(bytes);
}

export function readFragment(hash) {
  const out = {};
  for (const part of hash.replace(/^#/, "").split("&")) {
    if (!part) continue;
    const at = part.indexOf("=");
    const key = at < 0 ? part : part.slice(0, at);
    let value = at < 0 ? "" : part.slice(at + 1);
    try {
      value = decodeURIComponent(value);
    } catch {
      // a malformed escape: keep the text as it is
    }
    out[key] = value;
  }
  return out;
}

export function writeFragment(pairs) {
  return pairs
    .filter(([, value]) => value !== undefined && value !== null && value !== "")
    .map(([key, value]) => `${key}=${encodeURIComponent(String(value)).replace(/%2C/g, ",")}`)
    .join("&");
}

// a side from the fragment: {kind: "code", code} | {kind: "hill", name, event}
// | {kind: "hash", hash} | {kind: "none"}
export async function readSide(fragment, side) {
  const f = fragment;
  if (f[`${side}-z`] || f[`${side}-code`] !== undefined) {
    const kind = f[`${side}-z`] ? "z" : "code";
    try {
      return { kind: "code", code: await decodeCode(kind, f[`${side}-${kind}`]) };
    } catch {
      return { kind: "code", code: "", broken: `the link's ${side} code cannot be read` };
    }
  }
  if (f[`${side}-hash`]) return { kind: "hash", hash: f[`${side}-hash`], name: f[side] || "" };
  if (f[side]) return { kind: "hill", name: f[side], event: f[`${side}-event`] || "" };
  return null;
}

export async function sidePairs(side, state) {
  if (state.kind === "hill") {
    return [[side, state.name], [`${side}-event`, state.event]];
  }
  if (state.kind === "hash") return [[`${side}-hash`, state.hash], [side, state.name]];
  if (state.kind === "code") {
    const [kind, text] = await encodeCode(state.code);
    return [[`${side}-${kind}`, text]];
  }
  return [];
}
