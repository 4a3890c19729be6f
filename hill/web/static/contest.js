// Contests: each countdown (a .countdown with data-closes, the closing time
// in UTC, and data-now, the server's time when it sent the page) counts
// down every second by the server's clock; with data-reload, a page loaded
// before the close reloads itself (once) a few seconds after it, to show the
// contest closed.
"use strict";

function timeLeft(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60;
  const two = (n) => String(n).padStart(2, "0");
  return (d ? `${d} d ` : "") + `${two(h)}:${two(m)}:${two(s % 60)}`;
}

const countdowns = [...document.querySelectorAll(".countdown[data-closes]")];
const skew = countdowns.length ? Date.parse(countdowns[0].dataset.now) - Date.now() : 0;
const openAtLoad = countdowns.map((e) => Date.parse(e.dataset.closes) > Date.parse(e.dataset.now));

function tick() {
  countdowns.forEach((element, i) => {
    const left = (Date.parse(element.dataset.closes) - (Date.now() + skew)) / 1000;
    element.textContent = left > 0 ? timeLeft(left) : "closed";
    element.classList.toggle("over", left <= 0);
    if (left <= -3 && element.dataset.reload && openAtLoad[i]) {
      openAtLoad[i] = false;
      window.location.reload();
    }
  });
}

if (countdowns.length) {
  tick();
  window.setInterval(tick, 1000);
}
