// Contests: the countdowns, and a page that follows its contest.
//
// Each countdown (a .countdown with data-closes, the closing time in UTC,
// and data-now, the server's time when it sent the page) counts down every
// second by the server's clock, and says "closed" at the time; then a
// contest's page swaps what it says before the close (.before-close) for
// what it says while closing (.closing-note).
//
// A page with a [data-watch] element (data-json: the page's JSON twin;
// data-state: where the page says its contests stand) asks its twin, from
// the moment something may have changed (a countdown is over, a tournament
// is being played), with what it shows (?seen=): the server holds the answer
// until that changes (or 25 s pass), so the page asks again at once, and
// waits only after a failed ask (a few seconds, then longer). It updates a
// tournament's progress in place, and reloads when the twin says something
// else. It never reloads in a loop: it reloads only
// for a state the page does not show, and once for each (sessionStorage): a
// page that comes back still saying the old state (a cache in between) says
// "reload" and waits. A contest past its time but not closed yet (the bot
// plays the entries heard before it, or is down) is no change: no reload.
"use strict";

function timeLeft(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60;
  const two = (n) => String(n).padStart(2, "0");
  return (d ? `${d} d ` : "") + `${two(h)}:${two(m)}:${two(s % 60)}`;
}

const countdowns = [...document.querySelectorAll(".countdown[data-closes]")];
const skew = countdowns.length ? Date.parse(countdowns[0].dataset.now) - Date.now() : 0;
const watched = document.querySelector("[data-watch][data-json]");
const FIRST_RETRY = 2, LONGEST_RETRY = 30, GROWTH = 1.5;  // seconds after a failed ask
let asking = false;

function tick() {
  let over = false;
  countdowns.forEach((element) => {
    const left = (Date.parse(element.dataset.closes) - (Date.now() + skew)) / 1000;
    element.textContent = left > 0 ? timeLeft(left) : "closed";
    element.classList.toggle("over", left <= 0);
    over = over || left <= 0;
  });
  document.querySelectorAll(".before-close").forEach((part) => { part.hidden = over; });
  document.querySelectorAll(".closing-note").forEach((part) => { part.hidden = !over; });
  if (over) watch();
}

// where the contests stand, as words: "NAME:STATE ..." in any order
function stateWords(text) {
  return text.split(/\s+/).filter(Boolean).sort().join(" ");
}

function stateOf(twin) {
  const contests = twin.contests || [twin];
  return stateWords(contests.map((c) => `${c.name}:${c.state}`).join(" "));
}

function update(twin) {  // what changes without a new state: a tournament's progress
  const progress = twin.progress;
  if (!progress) return;
  document.querySelectorAll(".matches-committed").forEach((e) => { e.textContent = progress.matches_committed; });
  document.querySelectorAll(".matches-percent").forEach((e) => { e.textContent = progress.percent; });
  document.querySelectorAll("progress.matches").forEach((e) => { e.value = progress.matches_committed; });
}

// what the server compares with where the contests stand
// (hill/web/tournaments/contests.py, watch_key)
function keyOf(twin) {
  const progress = twin.progress;
  return (stateOf(twin) || "none") + (progress ? ` progress:${progress.matches_committed}` : "");
}

function changed(now) {
  const key = `contest-reload:${location.pathname}`;
  if (sessionStorage.getItem(key) === now) {  // reloaded for it already: the page came back stale
    document.querySelectorAll(".reload-note").forEach((note) => { note.hidden = false; });
    return false;
  }
  sessionStorage.setItem(key, now);
  window.location.reload();
  return true;
}

async function ask(seen, retry) {
  if (document.hidden) {  // asked once the page is seen again
    document.addEventListener("visibilitychange", () => ask(seen, retry), { once: true });
    return;
  }
  try {
    const url = new URL(watched.dataset.json, window.location.href);
    url.searchParams.set("seen", seen);
    const response = await fetch(url, { cache: "no-store" });
    if (response.ok) {
      const twin = await response.json();
      const now = stateOf(twin);
      if (now !== stateWords(watched.dataset.state)) {
        if (changed(now)) return;
      } else {
        update(twin);
      }
      ask(keyOf(twin), FIRST_RETRY);  // at once: the answer is held until something moves
      return;
    }
  } catch (error) {
    // the server is away for now: ask again later
  }
  window.setTimeout(() => ask(seen, Math.min(LONGEST_RETRY, retry * GROWTH)), retry * 1000);
}

function watch() {
  if (!watched || asking) return;
  asking = true;
  ask(stateWords(watched.dataset.state) || "none", FIRST_RETRY);
}

if (countdowns.length) {
  tick();
  window.setInterval(tick, 1000);
}
if (watched && watched.dataset.watch === "now") watch();
