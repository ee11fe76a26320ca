/* Compare view: stored backtests of one episode (metrics and equity curves), the rolling
   windows with confidence intervals and p-values, and links to the HTML reports. */
"use strict";

const cmp = { data: null, shown: new Set() };
const $ = (id) => document.getElementById(id);
const STYLES = ["solid", "dashed", "dotted"];

async function loadEpisode() {
  const key = $("backtest-select").value;
  if (!key) return;
  try {
    cmp.data = await api("api/compare/episode?key=" + encodeURIComponent(key));
    setQuery({ key });
    const policies = cmp.data.metrics.map((m) => m.policy);
    if (!cmp.shown.size || ![...cmp.shown].some((p) => policies.includes(p))) {
      // not `ideal` (the hindsight upper bound): its curve would flatten every other one
      cmp.shown = new Set(policies.filter((p) => ["buy_and_hold", "council", "zmr"].includes(p)));
      if (!cmp.shown.size) cmp.shown = new Set(policies.slice(0, 3));
    }
    renderBoxes();
    renderCurves();
    renderMetrics();
    clearError();
  } catch (error) { showError(error); }
}

function renderBoxes() {
  const boxes = cmp.data.metrics.map((m) => el("label", { class: "box" },
    el("input", { type: "checkbox", value: m.policy, checked: cmp.shown.has(m.policy), onchange: (e) => {
      if (e.target.checked) cmp.shown.add(m.policy); else cmp.shown.delete(m.policy);
      renderCurves();
    } }), " " + m.label));
  $("policy-boxes").replaceChildren(el("legend", {}, "Policies on the chart"), ...boxes);
}

function renderCurves() {
  const curves = cmp.data.curves;
  const names = Object.keys(curves).filter((p) => cmp.shown.has(p));
  const first = curves[names[0]] || Object.values(curves)[0];
  const labels = first ? first.date.map((d) => (d ? d.slice(2) : "start")) : [];
  lineChart($("equity-chart"), names.map((p, k) => ({ name: p, values: curves[p].value, style: STYLES[k % 3], cls: `c${k % 8}` })), labels,
    { width: 900, height: 300, rightPad: 120, label: "equity curves of the chosen policies" });
}

function renderMetrics() {
  const d = cmp.data;
  const shown = ["total_return", "arr", "sharpe", "sortino", "mdd", "calmar", "volatility", "win_rate", "trades", "turnover", "exposure", "final_value"];
  const columns = [{ key: "label", label: "policy", format: (v) => v }]
    .concat(shown.filter((m) => d.metric_names.includes(m)).map((m) => ({ key: m, label: m, help: d.metric_help[m] || null })))
    // a policy that buys once and stays invested (buy_and_hold) makes no timing decision
    .concat([{ key: "timing_share", label: "timing share", format: (v, r) => (r.trades <= 1 && r.exposure >= 0.95 ? "–" : fmt(v)),
      help: "share of shuffles of the policy's own daily exposures it beats (0.5 = no timing skill); – for a policy that buys once and holds" },
    { key: "method", label: "method", format: (v) => v || "–" }]);
  fillTable($("metrics-table"), columns, d.metrics, `${d.key} (${d.scope}) · ${d.start_date} … ${d.end_date}`);
  showClones($("episode-clones"), d.clones);
}

/* "a2c: identical to buy_and_hold on every window": one policy's numbers, not two results */
function showClones(list, lines) {
  list.replaceChildren(...(lines || []).map((line) => el("li", { class: "clone" }, `${line}: one policy's numbers, not two results.`)));
}

async function loadRolling() {
  try {
    const data = await api("api/compare/rolling");
    if (data.empty) { $("rolling-note").textContent = data.empty; return; }
    const windows = data.windows.map((w) => `${w.ticker}: ${w.windows} windows, ${w.first_start} … ${w.last_end}`).join("; ");
    $("rolling-note").textContent = `Mean [95% block-bootstrap CI] over windows; wins and two-sided sign-test p-values on total return. ${windows}`;
    const columns = Object.keys(data.table[0] || {}).map((k) => ({ key: k, label: k.replace(/_/g, " "), format: (v) => v }));
    fillTable($("rolling-table"), columns, data.table);
    showClones($("rolling-clones"), data.clones);
  } catch (error) { showError(error); }
}

async function loadReports() {
  try {
    const data = await api("api/reports");
    if (data.empty) { $("reports").replaceChildren(el("li", { class: "empty" }, data.empty)); return; }
    $("reports").replaceChildren(...data.reports.map((r) => el("li", {},
      el("a", { href: r.url, onclick: async (event) => {
        if (!sessionStorage.getItem(KEY_STORE)) return;
        event.preventDefault();
        window.open(await blobUrl(r.url), "_blank", "noopener");
      } }, `${r.name} report`), r.created_at ? ` (written ${r.created_at})` : "")));
  } catch (error) { showError(error); }
}

async function init() {
  try {
    const data = await api("api/compare/episodes");
    if (data.empty) {
      $("compare-empty").hidden = false;
      $("compare-empty").textContent = data.empty;
    } else {
      $("backtest-select").replaceChildren(...data.episodes.map((e) => el("option", { value: e.key },
        `${e.key}${e.scope === "test_period" ? " (whole test period)" : ""} · ${e.start_date} … ${e.end_date}`)));
      const wanted = query().get("key");
      if (wanted && data.episodes.some((e) => e.key === wanted)) $("backtest-select").value = wanted;
      $("backtest-select").addEventListener("change", loadEpisode);
      await loadEpisode();
    }
  } catch (error) { showError(error); }
  await loadRolling();
  await loadReports();
}

document.addEventListener("DOMContentLoaded", init);
