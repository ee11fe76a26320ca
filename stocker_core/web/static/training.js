/* Training view: stored runs (moderators, the agent, deep-RL), their curves, held-out tables
   and the data that trained them (lineage). */
"use strict";

const $ = (id) => document.getElementById(id);
const training = { runs: [], imageUrl: null, shown: null };

/* The run's learning curve (valid reward or return by step), the kept step marked. */
function learningFigure(curve) {
  const values = curve.points.map((p) => p[1]);
  const kept = curve.points.findIndex((p) => p[0] === curve.kept_step);
  const what = `${curve.name} by ${curve.x}`;
  const keptText = kept >= 0 ? ` — kept: step ${curve.kept_step} (${fmt(values[kept])}), marked`
    : curve.x === "timesteps" ? " — the last weights are kept" : "";
  if (values.length < 2) {
    const only = values.length ? `${fmt(values[0])} at ${curve.x} ${curve.points[0][0]}` : "–";
    return el("p", { class: "summary learning" }, `${what}: ${only} (one check, no curve)`);
  }
  const holder = el("div", { class: "chart learning" });
  lineChart(holder, [{ name: "valid", values, style: "solid", cls: "c0" }], curve.points.map((p) => String(p[0])), {
    width: 900, height: 260, label: what + keptText,
    cursor: kept >= 0 ? kept : null, cursorLabel: kept >= 0 ? `kept ${curve.kept_step}` : null,
  });
  return el("figure", { class: "learning" }, el("figcaption", {}, what + keptText), holder);
}

/* Series that never moved, as one line of text. */
function constantLine(flat) {
  const items = flat.map((c) => `${c.name} ${fmt(c.value)}`).join(" · ");
  return el("p", { class: "summary constant" }, `Unchanged over the run: ${items}`);
}

function showRun(index) {
  const run = training.runs[index];
  const box = $("run-detail");
  box.hidden = false;
  training.shown = run.run_id;
  clearError();  // a banner of the run shown before (its image failed) is not about this one
  const parts = [el("h2", {}, `${run.model_name} · ${run.run_id}`),
    el("p", { class: "summary" }, `kind ${run.kind} · base ${run.base_model || "–"} · seed ${fmt(run.seed)} · ` +
      `${fmt(run.wall_seconds, 3)} s · ${run.created_at || "–"} · weights sha256 ${(run.sha256 || "–").slice(0, 12)} · ${run.path || ""}`)];
  if (run.files) parts.push(el("p", { class: "empty" }, run.files));
  parts.push(run.learning ? learningFigure(run.learning) : el("p", { class: "empty" }, "no valid curve saved for this run"));
  if ((run.constant || []).length) parts.push(constantLine(run.constant));
  const curves = Object.entries(run.curves || {});
  for (const [name, points] of curves) {
    const holder = el("div", { class: "chart" });
    parts.push(el("figure", {}, el("figcaption", {}, `${name} by step`), holder));
    lineChart(holder, [{ name: name.split(" ").pop(), values: points.map((p) => p[1]), style: "solid", cls: "c2" }],
      points.map((p) => String(p[0])), { width: 900, height: 200, label: name });
  }
  if (run.image) {
    const holder = el("div", { class: "png" });
    parts.push(el("figure", {}, el("figcaption", {}, "the trainer's own plot"), holder));
    if (training.imageUrl) { URL.revokeObjectURL(training.imageUrl); training.imageUrl = null; }
    blobUrl(`api/training/${encodeURIComponent(run.run_id)}/image`).then((url) => {
      if (training.shown !== run.run_id) { URL.revokeObjectURL(url); return; }  // another run was picked meanwhile
      training.imageUrl = url;
      holder.replaceChildren(el("img", { src: url, alt: `training curve of ${run.model_name}` }));
    }).catch((error) => {
      if (training.shown !== run.run_id) return;
      holder.replaceChildren(el("p", { class: "empty" }, `the trainer's plot did not load: ${error.message}`));
      showError(error);
    });
  }
  if ((run.heldout || []).length) {
    const table = el("table", {});
    const columns = Object.keys(run.heldout[0]).map((k) => ({ key: k, label: k, format: (v) => (typeof v === "number" ? fmt(v) : String(v ?? "–")) }));
    fillTable(table, columns, run.heldout, "held-out (valid split)");
    parts.push(el("div", { class: "scroll" }, table));
  }
  const metrics = run.metrics && typeof run.metrics === "object" ? Object.entries(run.metrics).filter(([, v]) => typeof v !== "object") : [];
  if (metrics.length) parts.push(el("dl", { class: "account" }, metrics.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, fmt(v))])));
  parts.push(el("h3", {}, "What trained it (lineage)"));
  if (!run.lineage.length) parts.push(el("p", { class: "empty" }, "no lineage row for this model (trained outside the pipeline?)"));
  for (const row of run.lineage) {
    const list = el("ul", { class: "lineage" }, row.upstream.map((u) => el("li", {}, `${u.input} @ ${u.version}`)));
    parts.push(el("details", {}, el("summary", {}, `${row.asset} · run ${row.run_id} · ${row.materialized_at} · ${row.upstream_count} inputs`), list));
  }
  parts.push(el("details", {}, el("summary", {}, "config"), el("pre", {}, JSON.stringify(run.config, null, 2))));
  box.replaceChildren(...parts);
}

async function init() {
  try {
    const data = await api("api/training");
    if (data.empty) { $("training-empty").hidden = false; $("training-empty").textContent = data.empty; return; }
    training.runs = data.runs;
    const rows = data.runs.map((r, i) => Object.assign({ _i: i }, r));
    fillTable($("runs-table"), [
      { key: "model_name", label: "model", format: (v, r) => el("button", { type: "button", class: "link", onclick: () => showRun(r._i) }, v) },
      { key: "kind", label: "kind", format: (v) => v },
      { key: "base_model", label: "base", format: (v) => v || "–" },
      { key: "created_at", label: "when", format: (v) => v || "–" },
      { key: "wall_seconds", label: "seconds" },
      { key: "episodes", label: "training data", format: (v) => (v && v.text ? v.text : "–") },
    ], rows, "Training runs (models.runs), newest first — pick one");
    showRun(0);
  } catch (error) { showError(error); }
}

document.addEventListener("DOMContentLoaded", init);
