/* Corpus view: tickers, months and which assets are materialized, with Dagster UI links. */
"use strict";

const $ = (id) => document.getElementById(id);

async function init() {
  try {
    const data = await api("api/corpus");
    const dag = data.dagster;
    $("dagster").replaceChildren(dag.running
      ? el("span", {}, "Dagster UI: ", el("a", { href: dag.url, rel: "noopener" }, dag.url))
      : dag.hint);
    if (data.empty) { $("corpus-empty").hidden = false; $("corpus-empty").textContent = data.empty; }
    fillTable($("tickers-table"), [
      { key: "ticker", label: "ticker", format: (v) => v }, { key: "first_date", label: "first day", format: (v) => v },
      { key: "last_date", label: "last day", format: (v) => v }, { key: "days", label: "trading days" },
      { key: "sources", label: "source", format: (v) => v },
    ], data.tickers, "Stored bars (market.prices)");
    const sections = Object.entries(data.months).map(([ticker, months]) => {
      const table = el("table", { class: "compact" });
      const columns = [{ key: "month", label: "month", format: (v) => v.slice(0, 7) }].concat(data.columns.map((asset) => ({
        key: asset, label: dag.assets[asset] ? el("a", { href: dag.assets[asset], rel: "noopener" }, asset) : asset,
        format: (v, row) => (row.assets.includes(asset) ? "✓" : "·"),
      }))).concat([{ key: "quality", label: "quality", format: (v) => (v === "failed" ? "✗ quarantined" : v || "–") }]);
      fillTable(table, columns, months.map((m) => Object.assign({ _class: m.quality === "failed" ? "invalid" : null }, m)));
      return el("details", { open: Object.keys(data.months).length === 1 ? true : null },
        el("summary", {}, `${ticker}: ${months.length} months`), el("div", { class: "scroll" }, table));
    });
    $("months").replaceChildren(el("h2", {}, "Materialized per month (✓ materialized, · not yet)"), ...sections);
  } catch (error) { showError(error); }
}

document.addEventListener("DOMContentLoaded", init);
