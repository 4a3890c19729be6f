// The Lab page (/lab): two sides (code, or a hill program of any state or
// version), the joust of the two, the left program against the hill, a
// number tuned over a range, the debugger on a battle, and the whole state
// in the address's fragment (share.js).  Every battle is played in workers
// (worker.js) by the hill's engine; the server only sends a state's programs
// and matrix, and ranks the outcomes played here as `-test` does.
import { SIDES, element } from "./debugger-dom.js";
import { Editor, charIndex } from "./editor.js";
import { EngineHost } from "./host.js";
import * as results from "./results.js";
import * as share from "./share.js";
import * as tune from "./tune.js";

const root = document.getElementById("lab");
const $ = (id) => document.getElementById(id);
const IRC_TEXT_BYTES = 400; // what an IRC line leaves for the text after the server's prefix
const MAX_VALUES = Number(root.dataset.maxRuns); // values of one tuning: one ranking request
const SAMPLE = "(>)*8(>[-])*21";
const MAX_FRAGMENT = 1 << 20; // characters: browsers take addresses up to about 2 MB

const state = {
  sides: { left: { kind: "code", code: SAMPLE }, right: { kind: "none" } },
  vsHill: false,
  battle: null, // {tape, polarity}
  cycle: 0,
  breakpoints: null,
};
const sources = { left: null, right: null }; // the resolved code of each side
const stateData = new Map(); // event ("" the page's) -> Promise of /api/lab/state data
let generation = 0;
let debuggerView = null;
let debuggerKey = "";

// ---- engines: one for the quick work (checks, the joust), one for long runs
function showBusy() {
  const busy = quick.busy || long.busy;
  $("lab-stop").hidden = !busy;
  if (!busy) $("lab-progress").hidden = true;
}
const quick = new EngineHost(root.dataset.worker, showBusy);
const long = new EngineHost(root.dataset.worker, showBusy);

function status(text) {
  $("lab-status").textContent = text;
}

// quick work's news, unless a long run is telling its own
function quickStatus(text) {
  if (!long.busy) status(text);
}

function progress(label) {
  return (done, total) => {
    const bar = $("lab-progress");
    bar.hidden = false;
    bar.max = total;
    bar.value = done;
    status(`${label}: ${done} of ${total}`);
  };
}

$("lab-stop").addEventListener("click", () => {
  if (long.busy) long.stop();
  if (quick.busy) quick.stop();
  status("Stopped.");
});

// ---- the hill's states
function stateUrl(event) {
  const url = new URL(root.dataset.stateUrl, location.href);
  if (event) url.searchParams.set("event", event);
  return url;
}

function hillState(event = "") {
  const key = String(event || "");
  if (!stateData.has(key)) {
    const loading = fetch(stateUrl(key)).then(async (response) => {
      const data = await response.json();
      if (!response.ok) throw new Error(data.error || `state ${key}: ${response.status}`);
      return data;
    });
    loading.catch(() => stateData.delete(key));
    stateData.set(key, loading);
  }
  return stateData.get(key);
}

async function resolve(side) {
  const s = state.sides[side];
  if (s.kind === "code") return s.code;
  if (s.kind === "none") return null;
  if (s.kind === "hash") {
    if (!s.code) {
      const url = root.dataset.codeUrl.replace("0".repeat(64), encodeURIComponent(s.hash));
      const response = await fetch(url);
      if (!response.ok) throw new Error(`no program with code ${s.hash.slice(0, 12)}`);
      s.code = await response.text();
    }
    return s.code;
  }
  const data = await hillState(s.event);
  const program = data.programs.find((p) => p.name === s.name);
  if (!program) throw new Error(`no program ${s.name} in hill state #${data.event ? data.event.id : "?"}`);
  return program.code;
}

// ---- the sides' controls
const editors = {};
for (const side of SIDES) {
  editors[side] = new Editor($(`${side}-code`), $(`${side}-layer`), (code) => {
    state.sides[side] = { kind: "code", code };
    changed();
  });
  $(`${side}-kind`).addEventListener("change", async (event) => {
    const kind = event.target.value;
    if (kind === "code") state.sides[side] = { kind: "code", code: editors[side].value };
    else if (kind === "none") state.sides[side] = { kind: "none" };
    else {
      const data = await hillState("");
      state.sides[side] = { kind: "hill", name: data.programs[0] ? data.programs[0].name : "", event: "" };
    }
    changed(true);
  });
  $(`${side}-name`).addEventListener("change", (event) => {
    const s = state.sides[side];
    state.sides[side] = { kind: "hill", name: event.target.value, event: s.event || "" };
    changed(true);
  });
  $(`${side}-event`).addEventListener("change", (event) => {
    const s = state.sides[side];
    state.sides[side] = { kind: "hill", name: s.name || "", event: event.target.value.trim() };
    changed(true);
  });
  $(`${side}-version`).addEventListener("focus", () => loadVersions(side));
  $(`${side}-version`).addEventListener("change", (event) => {
    const s = state.sides[side];
    const hash = event.target.value;
    state.sides[side] = hash ? { kind: "hash", hash, name: s.name } : { kind: "hill", name: s.name, event: "" };
    changed(true);
  });
  $(`${side}-copy`).addEventListener("click", () => {
    state.sides[side] = { kind: "code", code: editors[side].value };
    changed(true);
    editors[side].select(0, 0);
  });
}

async function loadVersions(side) {
  const s = state.sides[side];
  const select = $(`${side}-version`);
  if (!s.name || select.dataset.loaded === s.name) return;
  select.dataset.loaded = s.name;
  const url = root.dataset.versionsUrl.replace("owner.name", encodeURIComponent(s.name));
  try {
    const data = await (await fetch(url)).json();
    const options = [new Option("as in that state", "")];
    for (const v of data.versions || []) {
      options.push(new Option(`version ${v.number}, ${v.submitted.slice(0, 10)} (${v.status})`, v.hash));
    }
    select.replaceChildren(...options);
    select.value = s.kind === "hash" ? s.hash : "";
  } catch {
    select.dataset.loaded = "";
  }
}

async function showSides() {
  for (const side of SIDES) {
    const s = state.sides[side];
    const kind = s.kind === "hash" ? "hill" : s.kind;
    $(`${side}-kind`).value = kind;
    $(`${side}-hill`).hidden = kind !== "hill";
    $(`${side}-editor`).hidden = kind === "none";
    if (kind !== "hill") continue;
    const data = await hillState(s.kind === "hill" ? s.event : "").catch(() => null);
    const names = data ? data.programs.map((p) => p.name) : [];
    if (s.name && !names.includes(s.name)) names.push(s.name);
    const select = $(`${side}-name`);
    select.replaceChildren(...names.map((n) => new Option(n, n)));
    select.value = s.name;
    $(`${side}-event`).value = s.kind === "hill" ? s.event : "";
    const version = $(`${side}-version`);
    if (version.dataset.loaded && version.dataset.loaded !== s.name) {
      version.replaceChildren(new Option("as in that state", "")); // another program's
      version.dataset.loaded = "";
    }
    if (s.kind === "hash" && ![...version.options].some((o) => o.value === s.hash)) {
      version.append(new Option(`code ${s.hash.slice(0, 10)}`, s.hash));
    }
    version.value = s.kind === "hash" ? s.hash : "";
  }
}

// ---- checking and jousting
function showCheck(side, error) {
  const p = $(`${side}-check`);
  p.replaceChildren();
  p.classList.toggle("err-text", Boolean(error));
  if (!error) {
    editors[side].showError([]);
    return;
  }
  const source = sources[side] || "";
  const at = charIndex(source, error.offset);
  const other = error.other >= 0 ? charIndex(source, error.other) : -1;
  editors[side].showError([at, other]);
  const where = error.line ? `line ${error.line}, column ${error.column}: ` : "";
  p.append(document.createTextNode(`${where}${error.message}`));
  if (at >= 0) {
    const go = element("button", { type: "button", class: "linkish", text: " show it" });
    go.addEventListener("click", () => editors[side].select(at, Math.min(at + 1, source.length)));
    p.append(go);
  }
}

let timer = 0;
function changed(now = false) {
  clearTimeout(timer);
  timer = setTimeout(refresh, now ? 0 : 350);
}

async function refresh() {
  const mine = ++generation;
  const stale = () => mine !== generation;
  await showSides();
  for (const side of SIDES) {
    try {
      sources[side] = await resolve(side);
    } catch (error) {
      sources[side] = null;
      $(`${side}-check`).textContent = error.message;
    }
    if (stale()) return;
    const shown = editors[side].textarea;
    if (state.sides[side].kind !== "code" && sources[side] !== null) {
      if (shown.value !== sources[side] || !shown.readOnly) editors[side].set(sources[side], true);
    } else if (state.sides[side].kind === "code" && editors[side].value !== state.sides[side].code) {
      editors[side].set(state.sides[side].code, false);
    }
  }
  writeFragment();
  updateSubmit();
  updateTuneNumbers();
  if (quick.busy) quick.stop(); // a long joust of an older version: no longer wanted
  const checks = {};
  try {
    for (const side of SIDES) {
      if (sources[side] === null) continue;
      checks[side] = (await quick.run("check", { source: sources[side] })).error;
      if (stale()) return;
      showCheck(side, checks[side]);
    }
  } catch (error) {
    if (!error.stopped) status(`The engine could not be loaded: ${error.message}`);
    return;
  }
  const both = sources.left !== null && sources.right !== null && !checks.left && !checks.right;
  $("joust").hidden = !both;
  if (both) await joust(stale);
  if (stale()) return;
  openDebugger();
  if (state.vsHill && sources.left !== null && !checks.left && sources.left !== hillSource) {
    runHill();
  } else quickStatus("Ready.");
}

async function joust(stale) {
  quickStatus("Jousting…");
  $("joust-result").textContent = ""; // never the line of another version
  $("joust-sum").textContent = "";
  $("joust-verdict").textContent = "…";
  const slow = setTimeout(() => {
    if (long.busy) return; // its bar stays
    $("lab-progress").hidden = false;
    $("lab-progress").removeAttribute("value");
  }, 300);
  try {
    const result = await quick.run("joust", { left: sources.left, right: sources.right });
    if (stale()) return;
    $("joust-result").textContent = result.text;
    $("joust-sum").textContent = results.signed(result.sum);
    const verdict = result.sum > 0 ? "the left program wins" : result.sum < 0 ? "the right program wins" : "a tie";
    $("joust-verdict").textContent = `${verdict} (of ${result.battles.length} battles)`;
    results.grid($("joust-grid"), result, openBattle);
    quickStatus("Ready.");
  } catch (error) {
    if (!error.stopped) quickStatus(`The joust failed: ${error.message}`);
  } finally {
    clearTimeout(slow);
    if (!long.busy) $("lab-progress").hidden = true;
  }
}

// ---- the debugger (debugger.js, loaded when a battle is opened)
function openBattle(i) {
  state.battle = { tape: results.TAPES[i % 21], polarity: results.POLARITIES[Math.floor(i / 21)] };
  state.cycle = 0;
  state.breakpoints = null;
  openDebugger();
  writeFragment();
  $("debug").scrollIntoView({ block: "start" });
}

function sideName(side) {
  const s = state.sides[side];
  if (s.kind === "hill") return s.name;
  if (s.kind === "hash") return s.name ? `${s.name} (${s.hash.slice(0, 8)})` : `code ${s.hash.slice(0, 8)}`;
  return side === "left" ? "left (your code)" : "right (your code)";
}

async function openDebugger() {
  const b = state.battle;
  if (!b || sources.left === null || sources.right === null || $("joust").hidden) return;
  const programs = JSON.stringify([sources.left, sources.right, sideName("left"), sideName("right")]);
  const key = JSON.stringify([programs, b.tape, b.polarity]);
  if (key === debuggerKey) return;
  debuggerKey = key;
  $("debug").hidden = false;
  $("debug-battle").textContent = `tape ${b.tape}, ${b.polarity}`;
  const left = { name: sideName("left"), source: sources.left };
  const right = { name: sideName("right"), source: sources.right };
  if (debuggerView) {
    // the same debugger: another battle, or new programs
    if (debuggerView.programs !== programs) debuggerView.view.setPrograms(left, right);
    debuggerView.programs = programs;
    debuggerView.view.setState({ tapeLength: b.tape, polarity: b.polarity, cycle: state.cycle });
    return;
  }
  const mount = $("debugger");
  try {
    const { mountDebugger } = await import(root.dataset.debugger);
    if (key !== debuggerKey || debuggerView) return;
    mount.replaceChildren();
    const view = mountDebugger(mount, {
      left,
      right,
      tapeLength: b.tape,
      polarity: b.polarity,
      cycle: state.cycle,
      breakpoints: state.breakpoints || [],
      onChange(now) {
        state.cycle = now.cycle;
        state.breakpoints = now.breakpoints;
        if (now.tapeLength && now.polarity) {
          state.battle = { tape: now.tapeLength, polarity: now.polarity };
          $("debug-battle").textContent = `tape ${now.tapeLength}, ${now.polarity}`;
          debuggerKey = JSON.stringify([programs, now.tapeLength, now.polarity]);
        }
        writeFragmentSoon();
      },
    });
    debuggerView = { view, programs };
  } catch (error) {
    const text = `The debugger is not available here (${error.message}).`;
    mount.replaceChildren(element("p", { class: "empty", id: "debugger-placeholder", text }));
  }
}

// the debugger changes its cycle many times a second while it runs: the
// address follows at most a few times a second
let fragmentTimer = 0;
function writeFragmentSoon() {
  clearTimeout(fragmentTimer);
  fragmentTimer = setTimeout(writeFragment, 250);
}

// ---- against the hill
async function rank(runs) {
  const response = await fetch(root.dataset.rankUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name: $("hill-as").value.trim() || null, runs }),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || `ranking failed: ${response.status}`);
  return data.results;
}

let hillSource = null; // the program last run against the hill
async function runHill() {
  if (long.busy) long.stop();
  const source = sources.left;
  hillSource = source;
  $("hill-answer").hidden = true; // never the answer of another version
  for (const id of ["hill-rank", "hill-points", "hill-score"]) $(id).textContent = "";
  try {
    const data = await hillState("");
    $("hill-state").textContent = data.event ? `#${data.event.id}` : "(the hill is empty)";
    if (!data.programs.length) return status("The hill is empty in this state.");
    const opponents = data.programs.map((p) => p.code);
    const started = performance.now();
    const { rows } = await long.run("hill", { source, opponents }, progress("Against the hill"));
    const played = performance.now();
    status("Ranking…");
    const [answer] = await rank([rows]);
    // how long it took, for bench/lab_browser.py: the battles, and all with the ranking
    Object.assign($("hill-answer").dataset, {
      playMs: (played - started).toFixed(1),
      totalMs: (performance.now() - started).toFixed(1),
      sincePageMs: performance.now().toFixed(1),
    });
    results.hillAnswer(
      {
        rank: $("hill-rank"), points: $("hill-points"), score: $("hill-score"),
        method: $("hill-method"), summary: $("hill-summary"), table: $("hill-table"),
      },
      answer, data.programs, rows, pickOpponent,
    );
    $("hill-answer").hidden = false;
    status(`Against the hill: rank ${answer.rank}/${answer.size}.`);
  } catch (error) {
    if (!error.stopped) status(`Against the hill: ${error.message}`);
  }
}

function pickOpponent(name) {
  state.sides.right = { kind: "hill", name, event: "" };
  changed(true);
  $("right-side").scrollIntoView({ block: "start" });
}

// another hill state: the same Lab (its fragment) in that state
$("hill-state-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const number = $("hill-event").value.trim();
  await writing;
  const url = new URL(location.href);
  if (number) url.searchParams.set("event", number);
  else url.searchParams.delete("event");
  location.assign(url.href);
});

$("hill-run").addEventListener("click", () => {
  state.vsHill = true;
  writeFragment();
  if (sources.left !== null) runHill();
});

// ---- tuning
let counts = [];
function updateTuneNumbers() {
  const source = sources.left || "";
  counts = tune.repeatCounts(source);
  const select = $("tune-number");
  const before = select.value;
  select.replaceChildren(...counts.map((c, i) => new Option(`line ${c.line}: …${c.text}`, String(i))));
  if (before && Number(before) < counts.length) select.value = before;
  $("tune-run").disabled = !counts.length;
  if (!counts.length) select.replaceChildren(new Option("(no repeat count in the program)", ""));
  else if (!$("tune-from").value) pickCount(Number(select.value || 0));
}

function pickCount(i) {
  const c = counts[i];
  if (!c) return;
  $("tune-number").value = String(i);
  $("tune-from").value = Math.max(0, c.value - 5);
  $("tune-to").value = c.value + 5;
}

$("tune-number").addEventListener("change", (event) => pickCount(Number(event.target.value)));
editors.left.onNumber = (at) => {
  const i = counts.findIndex((c) => c.start <= at && at <= c.end);
  if (i >= 0 && $("tune-number").value !== String(i)) pickCount(i);
};

$("tune-run").addEventListener("click", async () => {
  const count = counts[Number($("tune-number").value)];
  const source = sources.left;
  if (!count || source === null) return;
  const list = tune.values(Number($("tune-from").value), Number($("tune-to").value), Number($("tune-step").value), MAX_VALUES);
  if (!list.length) return status("Tuning: give a range (from ≤ to) and a step of at least 1.");
  if (long.busy) long.stop();
  try {
    const data = await hillState("");
    const opponents = data.programs.map((p) => p.code);
    const started = performance.now();
    const { start, end } = count; // one copy of the source, each value put in by the worker
    const args = { source, start, end, values: list, opponents };
    const { runs } = await long.run("tune", args, progress("Tuning"));
    const tried = list.map((value, i) => ({ value, rows: runs[i].rows, error: runs[i].error && runs[i].error.message }));
    const played = tried.filter((t) => t.rows);
    status("Ranking…");
    const answers = played.length ? await rank(played.map((t) => t.rows)) : [];
    played.forEach((t, i) => (t.answer = answers[i]));
    results.tuneAnswer($("tune-plot"), $("tune-table"), tried, data.programs.map((p) => p.name));
    $("tune-answer").hidden = false;
    $("tune-answer").dataset.totalMs = (performance.now() - started).toFixed(1); // for the bench
    status(`Tuned ${list.length} values.`);
  } catch (error) {
    if (!error.stopped) status(`Tuning: ${error.message}`);
  }
});

// ---- share and submit
let writing = Promise.resolve();
function writeFragment() {
  writing = writing.then(async () => {
    const pairs = [];
    for (const side of SIDES) pairs.push(...(await share.sidePairs(side, state.sides[side])));
    if (state.vsHill) pairs.push(["vs", "hill"]);
    pairs.push(["event", root.dataset.event]); // the hill state: a link keeps it
    if (state.battle) {
      pairs.push(["tape", state.battle.tape], ["polarity", state.battle.polarity]);
      if (state.cycle) pairs.push(["cycle", state.cycle]);
      if (state.breakpoints && state.breakpoints.length) {
        const json = new TextEncoder().encode(JSON.stringify(state.breakpoints));
        pairs.push(["bp", share.toBase64url(json)]);
      }
    }
    let fragment = share.writeFragment(pairs);
    const fits = fragment.length <= MAX_FRAGMENT;
    if (!fits) fragment = share.writeFragment(pairs.filter(([key]) => !/-(code|z)$/.test(key)));
    history.replaceState(null, "", `${location.pathname}${location.search}#${fragment}`);
    $("share-link").value = location.href;
    $("share-note").textContent = fits ? "" : "The code is too long for a link even compressed: the link leaves it out.";
  });
  return writing;
}

$("share-copy").addEventListener("click", async () => {
  await writing;
  $("share-link").select();
  try {
    await navigator.clipboard.writeText($("share-link").value);
    status("The link is copied.");
  } catch {
    status("Select the link and copy it.");
  }
});

function updateSubmit() {
  const box = $("submit-how");
  const name = $("submit-name").value.trim() || "myprogram";
  const code = (sources.left || "").replace(/\s+/g, " ").trim();
  const line = `!bfjoust ${name} ${code}`;
  const p = element("p");
  if (code && new TextEncoder().encode(line).length <= IRC_TEXT_BYTES) {
    p.append("Paste this line on IRC: ", element("code", { id: "submit-line", text: line }));
  } else {
    p.append("Too long for one IRC line: say ",
      element("code", { id: "submit-line", text: `!bfjoust-upload ${name}` }),
      " (add ", element("code", { text: "test" }),
      " to only test it) to the bot: it sends you a one-time link to a form where you paste the code.");
  }
  box.replaceChildren(p);
}
$("submit-name").addEventListener("input", updateSubmit);

// ---- the fragment, read at load and whenever it changes
async function readFragment() {
  const f = share.readFragment(location.hash);
  const asked = new URL(location.href).searchParams.get("event") || "";
  if (/^\d{1,12}$/.test(f.event || "") && !asked && f.event !== root.dataset.event) {
    // a link made in another hill state: open the page in that state (a
    // ?event=N of the address wins over the fragment's)
    const url = new URL(location.href);
    url.searchParams.set("event", f.event);
    location.replace(url.href);
    return;
  }
  const left = await share.readSide(f, "left");
  const right = await share.readSide(f, "right");
  if (left || right) {
    state.sides.left = left || { kind: "code", code: "" };
    state.sides.right = right || { kind: "none" };
  } else {
    const data = await hillState("").catch(() => null);
    const top = data && data.programs[0];
    state.sides.right = top ? { kind: "hill", name: top.name, event: "" } : { kind: "none" };
  }
  for (const side of SIDES) {
    const s = state.sides[side];
    if (s.broken) $(`${side}-check`).textContent = s.broken;
  }
  state.vsHill = f.vs === "hill";
  const tape = Number(f.tape);
  state.battle = results.TAPES.includes(tape) && results.POLARITIES.includes(f.polarity)
    ? { tape, polarity: f.polarity } : null;
  state.cycle = Math.max(0, Number.parseInt(f.cycle, 10) || 0);
  state.breakpoints = null;
  if (f.bp) {
    try {
      state.breakpoints = JSON.parse(new TextDecoder().decode(share.fromBase64url(f.bp)));
    } catch {
      state.breakpoints = null;
    }
  }
  debuggerKey = "";
  if (debuggerView && state.breakpoints) debuggerView.view.setState({ breakpoints: state.breakpoints });
  changed(true);
}

// "see the current hill" (a past state's note) keeps the Lab's fragment
for (const link of document.querySelectorAll(".state a")) {
  link.addEventListener("click", () => {
    link.hash = location.hash;
  });
}

window.addEventListener("hashchange", readFragment);
quick.ready.then(
  () => status("Ready."),
  (error) => status(`The engine could not be loaded: ${error.message}`),
);
readFragment();
