/* Council view: the seven votes of a day beside its chart and the moderator's decision,
   and a heat map of every vote of the episode by role × day. */
"use strict";

const council = { episode: null, data: null, day: 0, chartUrl: null };
const $ = (id) => document.getElementById(id);

async function loadEpisode(event) {
  if (event) event.preventDefault();
  const episode = pickedEpisode($("episode-select"), $("episode-key"));
  const votes = $("vote-set").value || null;
  notice("loading " + episode + " …");
  try {
    const qs = new URLSearchParams({ episode });
    if (votes) qs.set("votes", votes);
    const data = await api("api/council/episode?" + qs.toString());
    council.episode = episode;
    council.data = data;
    $("vote-set").replaceChildren(...data.vote_sets.map((s) => el("option", { value: s.id }, `${s.backend} · ${s.model_id}`)));
    if (data.vote_set) $("vote-set").value = data.vote_set;
    $("day-select").replaceChildren(...data.days.map((d, i) => el("option", { value: String(i) }, `${d} (day ${i + 1})`)));
    const ep = data.episode;
    $("council-summary").textContent = `${ep.key} · ${ep.start} … ${ep.end} · ${ep.trading_days} days · ` +
      (data.vote_set ? `votes from ${data.vote_set} (cache version ${data.vote_version})` : "no votes stored");
    $("council-view").hidden = false;
    notice(data.empty || (data.replay_stopped_at ? `votes stop at ${data.replay_stopped_at}: later days have no moderator decision` : ""), data.empty ? "empty" : "info");
    const wanted = query().get("date");
    const index = wanted ? data.days.indexOf(wanted) : 0;
    setQuery({ episode, votes });
    await pickDay(index >= 0 ? index : 0);
  } catch (error) { showError(error); }
}

function drawHeatmap() {
  const data = council.data;
  if (!data.heatmap) { $("heatmap").replaceChildren(el("p", { class: "empty" }, data.empty || "no votes")); return; }
  heatMap($("heatmap"), data.heatmap.roles, data.days, data.heatmap.signal, data.heatmap.confidence, {
    selected: council.day, onPick: (c) => pickDay(c), label: "votes by role and day",
  });
}

async function pickDay(index) {
  const data = council.data;
  if (!data || index < 0 || index >= data.days.length) return;
  council.day = index;
  $("day-select").value = String(index);
  drawHeatmap();
  const date = data.days[index];
  setQuery({ date });
  try {
    const qs = new URLSearchParams({ episode: council.episode, date });
    if (data.vote_set) qs.set("votes", data.vote_set);
    const day = await api("api/council/day?" + qs.toString());
    if (council.day !== index) return;  // another day was picked meanwhile
    renderVotes(day);
    await renderChart(day);
    clearError();
  } catch (error) { if (council.day === index) showError(error); }
}

function renderVotes(day) {
  if (!day.votes.length) {
    $("votes-table").replaceChildren(el("caption", {}, day.empty || `no votes on ${day.date}`));
  } else {
    fillTable($("votes-table"), [
      { key: "role", label: "role", format: (v) => v.replace(/_/g, " ") },
      { key: "signal", label: "signal", format: (v) => signed(v, 2) },
      { key: "confidence", label: "confidence", format: (v) => fmt(v, 2) },
      { key: "rationale", label: "rationale", format: (v, r) => (r.parse_error ? "⚠ unparsed reply: " : "") + v, className: "text" },
    ], day.votes, `${day.date} · ${day.vote_set}`);
  }
  const d = day.decision;
  $("decision").textContent = d
    ? `${d.side.toUpperCase()} ${d.quantity} — ${d.rationale}. After the close: cash ${money(d.cash)}, ${d.position} shares, value ${money(d.value)}, reward ${signed(d.reward)}.`
    : day.decision_note;
}

async function renderChart(day) {
  if (council.chartUrl) { URL.revokeObjectURL(council.chartUrl); council.chartUrl = null; }
  $("chart-caption").textContent = `Chart of ${day.ticker} on ${day.date} (60 sessions up to the decision day)`;
  if (!day.chart) { $("day-chart").replaceChildren(el("p", { class: "empty" }, day.chart_hint)); return; }
  council.chartUrl = await blobUrl(day.chart);
  $("day-chart").replaceChildren(el("img", { src: council.chartUrl, alt: `candlestick chart of ${day.ticker} up to ${day.date}`, width: 768, height: 768 }));
}

function onKey(event) {
  const tag = (event.target.tagName || "").toLowerCase();
  if (!council.data || ["input", "select", "textarea"].includes(tag)) return;
  if (event.key === "ArrowLeft") { event.preventDefault(); pickDay(council.day - 1); }
  if (event.key === "ArrowRight") { event.preventDefault(); pickDay(council.day + 1); }
}

async function init() {
  const params = query();
  try {
    await fillEpisodePicker($("episode-select"), $("episode-key"), params.get("episode"));
  } catch (error) { showError(error); return; }
  if (params.get("votes")) $("vote-set").append(el("option", { value: params.get("votes") }, params.get("votes")));
  $("council-form").addEventListener("submit", loadEpisode);
  $("episode-select").addEventListener("change", () => { $("episode-key").value = ""; $("vote-set").replaceChildren(); });
  $("day-select").addEventListener("change", () => pickDay(Number($("day-select").value)));
  $("prev-day").addEventListener("click", () => pickDay(council.day - 1));
  $("next-day").addEventListener("click", () => pickDay(council.day + 1));
  document.addEventListener("keydown", onKey);
  loadEpisode();
}

document.addEventListener("DOMContentLoaded", init);
