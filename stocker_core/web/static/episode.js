/* Episode view: load an episode, step it by hand or let a policy play, watch the charts. */
"use strict";

const view = { session: null, episode: null, state: null, steps: [], playing: false, busy: false };
window.stockerTimings = { steps: [] };

const $ = (id) => document.getElementById(id);

async function start(event) {
  if (event) event.preventDefault();
  stopPlaying();
  const episode = pickedEpisode($("episode-select"), $("episode-key"));
  const policy = $("policy-select").value || null;
  const seed = $("seed").value === "" ? null : Number($("seed").value);
  notice("loading " + episode + " …");
  try {
    // the session this page played before is closed by the server as this one starts
    const data = await api("api/play", { episode, policy, seed, replaces: view.session });
    view.session = data.state.session_id;
    view.episode = data.episode;
    view.state = data.state;
    view.steps = data.state.steps;
    setQuery({ episode, policy, seed });
    $("play").hidden = false;
    notice("");
    render();
  } catch (error) { showError(error); }
}

function trades() {
  return view.steps.filter((s) => s.traded !== 0).map((s) => ({ i: s.step, side: s.traded > 0 ? "buy" : "sell", qty: Math.abs(s.traded) }));
}

function render() {
  const ep = view.episode, st = view.state;
  const policyText = st.policy ? `policy ${st.policy}${st.policy_upper_bound ? " (hindsight upper bound)" : ""}` : "by hand";
  $("episode-summary").textContent = `${ep.key}${ep.task_id ? " (" + ep.task_id + ")" : ""} · ${ep.ticker} ${ep.start} … ${ep.end} · ` +
    `${ep.trading_days} trading days · ${policyText} · ideal total ${fmt(ep.ideal.total * 100, 3)}% · buy-and-hold final ${money(ep.buy_and_hold.final)} · source ${ep.source}`;
  const cursor = Math.min(st.step, ep.trading_days - 1);
  candleChart($("price-chart"), ep.bars, { trades: trades(), band: ep.ideal.long, cursor: st.done ? null : cursor, label: `${ep.ticker} daily candles with trades` });
  lineChart($("value-chart"), [
    { name: "you", values: view.steps.map((s) => s.value), style: "solid", cls: "c0" },
    { name: "buy & hold", values: ep.buy_and_hold.value, style: "dashed", cls: "c1" },
    { name: "ideal", values: ep.ideal.value, style: "dotted", cls: "c2" },
  ], ep.bars.date.map((d) => d.slice(5)), { cursor: st.done ? null : cursor, label: "portfolio value against buy-and-hold and the ideal path" });
  renderAccount();
  renderTerms();
  renderSteps();
  const hasPolicy = Boolean(st.policy);
  for (const id of ["policy-step", "play-pause", "run-all"]) $(id).disabled = !hasPolicy || st.done;
  for (const id of ["buy", "sell", "hold"]) $(id).disabled = st.done;
  $("play-pause").firstChild.textContent = view.playing ? "Pause " : "Play ";
}

function renderAccount() {
  const st = view.state, ep = view.episode;
  const day = Math.min(st.step, ep.trading_days - 1);
  const bh = st.step > 0 ? ep.buy_and_hold.value[st.step - 1] : ep.params.starting_cash;
  const items = [
    ["Day", st.done ? `done (${st.total_steps} of ${st.total_steps})` : `${st.step + 1} of ${st.total_steps}`],
    ["Date", st.date], ["Close", money(st.close)], ["Cash", money(st.cash)],
    ["Position", `${st.position} shares`], ["Value", money(st.value)],
    ["Buy-and-hold value", money(bh)], ["Ideal value", money(st.step > 0 ? ep.ideal.value[st.step - 1] : ep.params.starting_cash)],
    ["Total reward", signed(st.total_reward)], ["Invalid actions", String(st.invalid_count)],
  ];
  $("account").replaceChildren(...items.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-field": k.toLowerCase().replace(/ /g, "-") }, v)]));
  $("account").setAttribute("data-step", String(day));
}

function renderTerms() {
  const last = view.steps[view.steps.length - 1];
  if (!last) { $("terms").replaceChildren(el("tbody", {}, el("tr", {}, el("td", {}, "no step yet")))); return; }
  // the signed parts that add up to the reward (a penalty shows as ▼ −), then the inputs
  const t = last.terms;
  const rows = Object.entries(last.contributions || {})
    .map(([term, value]) => ({ term, value, text: signed(value) }))
    .concat([{ term: "= raw reward", text: signed(t.raw) }, { term: "reward (clipped)", text: signed(t.reward) }])
    .concat(["nominal", "real", "ideal", "gap", "scale", "perf", "infl_factor"].filter((k) => k in t)
      .map((k) => ({ term: `input: ${k}`, text: fmt(t[k], 4) })));
  fillTable($("terms"), [{ key: "term", label: "term", format: (v) => v }, { key: "text", label: "value", format: (v) => v }], rows,
    `${last.date}: ${last.side} ${last.quantity}${last.invalid ? " (invalid: not executed)" : ""}`);
}

function renderSteps() {
  const rows = view.steps.slice().reverse().map((s) => Object.assign({ _class: s.invalid ? "invalid" : null }, s));
  fillTable($("steps-table"), [
    { key: "step", label: "day", format: (v) => String(v + 1) },
    { key: "date", label: "date", format: (v) => v },
    { key: "price", label: "close", format: money },
    { key: "side", label: "action", format: (v, r) => `${v} ${r.quantity}` },
    { key: "by", label: "by", format: (v) => v },
    { key: "traded", label: "traded", format: (v) => (v > 0 ? "▲ +" + v : v < 0 ? "▼ " + v : "0") },
    { key: "invalid", label: "valid", format: (v) => (v ? "✗ invalid" : "✓") },
    { key: "reward", label: "reward", format: (v) => signed(v) },
    { key: "value", label: "value", format: money },
  ], rows);
}

async function step(action) {
  if (view.busy || !view.session || view.state.done) return;
  view.busy = true;
  const began = performance.now();
  try {
    const data = await api(`api/play/${view.session}/step`, action || {});
    window.stockerTimings.steps.push(performance.now() - began);
    view.steps.push(data.record);
    view.state = Object.assign({}, data.state, { steps: view.steps });
    clearError();
    render();
  } catch (error) { stopPlaying(); showError(error); }
  finally { view.busy = false; }
}

function byHand(side) {
  const quantity = side === "hold" ? 0 : Math.max(0, Math.floor(Number($("quantity").value) || 0));
  return step({ side, quantity });
}

function stopPlaying() { view.playing = false; if (view.episode) render(); }

async function playLoop() {
  view.playing = true;
  render();
  while (view.playing && view.state && !view.state.done) {
    await step(null);
    await new Promise((resolve) => setTimeout(resolve, 80));
  }
  view.playing = false;
  if (view.state && view.state.done) notice(`episode over: total reward ${fmt(view.state.total_reward)}, final value ${money(view.state.value)}`);
  render();
}

function togglePlay() { if (view.playing) stopPlaying(); else if (view.state && view.state.policy) playLoop(); }

async function runAll() {
  stopPlaying();
  try {
    const data = await api(`api/play/${view.session}/run`, {});
    view.state = data.state;
    view.steps = data.state.steps;
    render();
    notice(`episode over: total reward ${fmt(view.state.total_reward)}, final value ${money(view.state.value)}`);
  } catch (error) { showError(error); }
}

async function restart() {
  stopPlaying();
  try {
    view.state = await api(`api/play/${view.session}/reset`, {});
    view.steps = view.state.steps;
    notice("");
    render();
  } catch (error) { showError(error); }
}

/* The page leaves (or goes into the back-forward cache): close its play session, so a page
   loaded again and again never fills this client's quota. keepalive lets the request finish. */
function closeSession() {
  if (!view.session) return;
  const headers = {};
  const key = sessionStorage.getItem(KEY_STORE);
  if (key) headers.Authorization = "Bearer " + key;
  fetch(`api/play/${view.session}`, { method: "DELETE", headers, keepalive: true }).catch(() => {});
  view.session = null;
  view.closed = true;
}

/* Back to a page whose session was closed when it was left: play the same episode again. */
function onPageShow(event) {
  if (event.persisted && view.closed) { view.closed = false; start(); }
}

function maxBuy() {
  const st = view.state, cost = view.episode.params.transaction_cost;
  $("quantity").value = Math.max(0, Math.floor(st.cash / (st.close * (1 + cost))));
}

function onKey(event) {
  if (!view.session || event.ctrlKey || event.metaKey || event.altKey) return;
  const tag = (event.target.tagName || "").toLowerCase();
  if (["input", "select", "textarea"].includes(tag) || document.querySelector("dialog[open]")) return;
  const actions = {
    " ": togglePlay, n: () => step(null), ArrowRight: () => step(null),
    b: () => byHand("buy"), s: () => byHand("sell"), h: () => byHand("hold"), r: restart,
  };
  const run = actions[event.key];
  if (!run) return;
  const needsPolicy = [" ", "n", "ArrowRight"].includes(event.key);
  if (needsPolicy && !view.state.policy) return;
  event.preventDefault();
  run();
}

async function init() {
  const params = query();
  try {
    const choices = await fillEpisodePicker($("episode-select"), $("episode-key"), params.get("episode"));
    $("policy-select").append(...choices.policies.map((p) => el("option", { value: p.name }, p.label)));
    if (params.get("policy")) $("policy-select").value = params.get("policy");
    if (params.get("seed")) $("seed").value = params.get("seed");
  } catch (error) { showError(error); return; }
  $("start-form").addEventListener("submit", start);
  $("buy").addEventListener("click", () => byHand("buy"));
  $("sell").addEventListener("click", () => byHand("sell"));
  $("hold").addEventListener("click", () => byHand("hold"));
  $("policy-step").addEventListener("click", () => step(null));
  $("play-pause").addEventListener("click", togglePlay);
  $("run-all").addEventListener("click", runAll);
  $("restart").addEventListener("click", restart);
  $("max-buy").addEventListener("click", maxBuy);
  $("max-sell").addEventListener("click", () => { $("quantity").value = view.state.position; });
  document.addEventListener("keydown", onKey);
  window.addEventListener("pagehide", closeSession);
  window.addEventListener("pageshow", onPageShow);
  if (params.get("episode")) start();
}

document.addEventListener("DOMContentLoaded", init);
