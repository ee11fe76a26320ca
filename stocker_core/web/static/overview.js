/* Overview: what the warehouse holds, with a link to the view that shows it. */
"use strict";

const CARDS = [
  ["episodes", "episode", "Episodes", "stored episodes to play (tasks always listed)"],
  ["votes", "council", "Council", "cached specialist votes"],
  ["backtests", "compare", "Compare", "backtest rows (policy × episode)"],
  ["training_runs", "training", "Training", "training runs"],
  ["prices", "corpus", "Corpus", "daily bars"],
];

async function init() {
  try {
    const status = await api("api/status");
    const cards = CARDS.map(([count, href, title, what]) => {
      const n = status.counts[count] || 0;
      return el("a", { class: "card", href }, el("h2", {}, title), el("p", { class: "count" }, fmt(n)), el("p", {}, what),
        n ? null : el("p", { class: "empty" }, "nothing yet: run `stocker materialize`"));
    });
    document.getElementById("cards").replaceChildren(...cards,
      el("p", { class: "hint" }, status.exists ? `warehouse ${status.warehouse}` : `no warehouse at ${status.warehouse}: run \`stocker materialize\``));
  } catch (error) { showError(error); }
}

document.addEventListener("DOMContentLoaded", init);
