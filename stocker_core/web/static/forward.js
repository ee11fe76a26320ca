/* Forward view: each policy's forward equity from the scored ledger, live and replayed apart,
   with the forward record (days, excess over buy-and-hold, CI, p, minimum detectable edge). */
"use strict";

const $ = (id) => document.getElementById(id);
const STYLES = ["solid", "dotted"];

function pct(value, digits = 2) {
  return value === null || value === undefined ? "–" : `${value >= 0 ? "+" : ""}${(value * 100).toFixed(digits)}%`;
}

function modeSection(mode, data, rows) {
  const chart = el("div", { class: "chart wide", id: `forward-${mode}-chart` });
  const table = el("table", { id: `forward-${mode}-table` });
  const section = el("section", { "aria-labelledby": `forward-${mode}-title` },
    el("h2", { id: `forward-${mode}-title` }, mode === "live" ? "Live" : "Replayed (simulated clock)"),
    el("figure", {}, el("figcaption", {}, `Equity from 1.0 over ${data.sessions.length} scored sessions (axis: change since the start)`), chart),
    el("div", { class: "scroll" }, table));
  $("forward-modes").append(section);
  // buy_and_hold is the benchmark: drawn once, dashed, behind the policies
  const names = Object.keys(data.equity).filter((p) => p !== "buy_and_hold");
  const series = names.map((p, k) => ({ name: p, values: data.equity[p], style: STYLES[k % 2], cls: `c${k % 8}` }));
  series.push({ name: "buy_and_hold", values: data.benchmark, style: "dashed", cls: "c7" });
  lineChart(chart, series, data.sessions.map((d) => d.slice(2)),
    { width: 900, height: 300, rightPad: 120, label: `${mode} forward equity of each policy`, yFormat: tickPercentFrom(1.0) });
  fillTable(table, [
    { key: "policy", label: "policy", format: (v) => v },
    { key: "days", label: "days", format: (v) => v },
    { key: "tickers", label: "tickers", format: (v) => v },
    { key: "cumulative_return", label: "cumulative return", format: (v) => pct(v) },
    { key: "excess_cumulative", label: "excess over buy-and-hold", format: (v) => pct(v) },
    { key: "mean_daily_excess", label: "mean daily excess [95% CI]",
      format: (v, r) => `${pct(v, 3)} [${pct(r.ci_low, 3)}, ${pct(r.ci_high, 3)}]` },
    { key: "p_value", label: "p", format: (v) => (v === null ? "–" : v.toFixed(3)) },
    { key: "min_detectable_edge", label: "min. detectable edge / day", format: (v) => pct(v, 3),
      help: "daily excess a two-sided 5% test detects with 80% power at this many days" },
  ], rows, `${data.sessions[0]} … ${data.sessions[data.sessions.length - 1]}`);
}

async function loadForward() {
  try {
    const data = await api("api/forward");
    if (data.empty) { $("forward-empty").textContent = data.empty; $("forward-empty").hidden = false; return; }
    for (const mode of ["live", "replayed"]) {
      if (data.modes[mode]) modeSection(mode, data.modes[mode], data.record.filter((r) => r.mode === mode));
    }
  } catch (error) { showError(error); }
}

document.addEventListener("DOMContentLoaded", loadForward);
