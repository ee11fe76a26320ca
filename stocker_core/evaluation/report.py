"""The evaluation report: a self-contained HTML page and a Markdown twin, numbers read from
the ``eval.*`` rows in DuckDB only, written to ``$STOCKER_HOME/reports/<name>/``."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pandas as pd

from stocker_core.env.policies import FITTED_ON_TRAIN
from stocker_core.errors import EmptyDataError, InvalidNameError
from stocker_core.evaluation.backtests import TIMING_SHUFFLES, ordered_policies, policy_label
from stocker_core.evaluation.clones import (
    clone_label,
    clone_lines,
    clone_summary,
    identical_to,
    window_clones,
)
from stocker_core.evaluation.forward_report import forward_table, read_forward_record
from stocker_core.evaluation.looks import look_counts
from stocker_core.evaluation.metrics import METRIC_HELP, METRIC_NAMES, format_metric
from stocker_core.evaluation.pooled import (
    Evidence,
    EvidenceConfig,
    headline,
    leaderboard_table,
    pooled_evidence,
)
from stocker_core.evaluation.report_templates import HTML_TEMPLATE, MARKDOWN_TEMPLATE, SECTIONS
from stocker_core.evaluation.rolling import RollingConfig, verdict
from stocker_core.evaluation.store import read_eval, replace_rows
from stocker_core.warehouse.db import Warehouse

TABLE_METRICS = [m for m in METRIC_NAMES if m != "final_value"]
ROLLING_HEADLINE = ("total_return", "sharpe", "mdd")


@dataclass
class ReportData:
    """The ``eval.*`` rows a report is made of."""

    splits: pd.DataFrame
    episodes: pd.DataFrame
    test_period: pd.DataFrame
    curves: pd.DataFrame
    rolling: pd.DataFrame
    summary: pd.DataFrame
    comparisons: pd.DataFrame
    warehouse: str = ""
    looks: pd.DataFrame = field(default_factory=pd.DataFrame)
    forward: pd.DataFrame = field(default_factory=pd.DataFrame)
    """The forward ledger's record per mode and policy (``ledger.record``; empty before any scoring)."""


@dataclass
class ReportFiles:
    """Where the report went."""

    directory: Path
    html: Path
    markdown: Path
    images: list[Path] = field(default_factory=list)
    context: dict[str, object] = field(default_factory=dict)
    """What the templates were given (``report_context``, figures left out)."""


def _dates_as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """``start_date`` / ``end_date`` as ``YYYY-MM-DD`` text."""
    for column in ("start_date", "end_date"):
        if column in frame.columns and len(frame):
            frame[column] = pd.to_datetime(frame[column]).dt.strftime("%Y-%m-%d")
    return frame


def load_report_data(warehouse: Warehouse) -> ReportData:
    """Every evaluation row the report shows; EmptyDataError when there is nothing to report."""
    backtests = _dates_as_text(read_eval(warehouse, "eval.backtests"))
    rolling = _dates_as_text(read_eval(warehouse, "eval.rolling"))
    if backtests.empty and rolling.empty:
        raise EmptyDataError(
            "no evaluation rows in the warehouse: materialize the evaluation group first "
            "(stocker materialize --groups evaluation, after the env and council groups)"
        )
    test_period = backtests.loc[backtests["scope"] == "test_period"] if len(backtests) else backtests
    curves = pd.DataFrame()
    if len(test_period):
        keys = sorted(test_period["key"].unique())
        curves = read_eval(
            warehouse,
            "eval.equity_curves",
            "key IN (SELECT unnest(?::VARCHAR[])) ORDER BY key, policy, step",
            [keys],
        )
    return ReportData(
        splits=_dates_as_text(read_eval(warehouse, "eval.splits")),
        episodes=backtests.loc[backtests["scope"] == "episode"] if len(backtests) else backtests,
        test_period=test_period,
        curves=curves,
        rolling=rolling,
        summary=read_eval(warehouse, "eval.rolling_summary"),
        comparisons=read_eval(warehouse, "eval.rolling_comparisons"),
        warehouse="$STOCKER_HOME/" + warehouse.path.name,  # the report names no absolute path
        looks=read_eval(warehouse, "eval.test_looks"),
        forward=read_forward_record(warehouse),
    )


def episode_splits(episodes: pd.DataFrame, splits: pd.DataFrame) -> pd.Series:
    """The split each episode row lies wholly inside (``None`` when it straddles one)."""
    labels = pd.Series([None] * len(episodes), index=episodes.index, dtype=object)
    for r in splits.itertuples(index=False):
        inside = (
            (episodes["ticker"] == r.ticker)
            & (pd.to_datetime(episodes["start_date"]) >= pd.Timestamp(r.start_date))
            & (pd.to_datetime(episodes["end_date"]) <= pd.Timestamp(r.end_date))
        )
        labels[inside] = r.split
    return labels


def _policy_order(frame: pd.DataFrame) -> list[str]:
    return ordered_policies(list(dict.fromkeys(frame["policy"]))) if len(frame) else []


def mean_metrics_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per policy: episode count and the mean of every metric, formatted."""
    out = []
    for policy in _policy_order(rows):
        part = rows.loc[rows["policy"] == policy]
        line = {"policy": policy_label(policy), "episodes": len(part)}
        for metric in TABLE_METRICS:
            values = pd.to_numeric(part[metric], errors="coerce")
            line[metric] = format_metric(values.mean() if values.notna().any() else None)
        out.append(line)
    return pd.DataFrame(out)


def test_period_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The whole-test-period backtest rows, formatted."""
    out = []
    for ticker, part in rows.groupby("ticker", sort=True):
        for policy in _policy_order(part):
            row = part.loc[part["policy"] == policy].iloc[0]
            line = {
                "ticker": ticker,
                "policy": policy_label(policy),
                "days": f"{row['start_date']} … {row['end_date']}",
            }
            line.update({m: format_metric(row[m]) for m in TABLE_METRICS})
            out.append(line)
    return pd.DataFrame(out)


def _ci(summary: pd.DataFrame, policy: str, metric: str) -> str:
    row = summary.loc[(summary["policy"] == policy) & (summary["metric"] == metric)]
    if row.empty:
        return "–"
    r = row.iloc[0]
    mean = format_metric(r["mean"])
    if pd.isna(r["ci_low"]) or pd.isna(r["ci_high"]):
        return mean
    return f"{mean} [{format_metric(r['ci_low'], 3)}, {format_metric(r['ci_high'], 3)}]"


def _comparison(comparisons: pd.DataFrame, policy: str, baseline: str) -> str:
    row = comparisons.loc[(comparisons["policy"] == policy) & (comparisons["baseline"] == baseline)]
    if row.empty:
        return "–"
    r = row.iloc[0]
    p = "–" if pd.isna(r["p_value"]) else f"{r['p_value']:.2g}"
    return f"{int(r['wins'])}/{int(r['n'])} (p = {p})"


def rolling_table(
    summary: pd.DataFrame,
    comparisons: pd.DataFrame,
    baselines: tuple[str, ...],
    clones: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Headline metrics with CIs and the paired comparisons, one row per policy (a clone,
    ``clones``, named "a2c = buy_and_hold")."""
    clones = clones or {}
    out = []
    for policy in _policy_order(summary):
        line = {"policy": clone_label(policy, clones[policy]) if policy in clones else policy_label(policy)}
        for metric in ROLLING_HEADLINE:
            line[metric] = _ci(summary, policy, metric)
        for baseline in baselines:
            line[f"vs {baseline}: wins (p)"] = (
                "–" if policy == baseline else _comparison(comparisons, policy, baseline)
            )
        line["timing_share"] = _ci(summary, policy, "timing_share") if _times(summary, policy) else "–"
        out.append(line)
    return pd.DataFrame(out)


def rolling_clones(rolling: pd.DataFrame) -> dict[str, str]:
    """Policies whose final value and reward equal an earlier policy's on every window."""
    return window_clones(rolling)


def _times(summary: pd.DataFrame, policy: str) -> bool:
    """Whether a policy makes timing decisions: not one that buys once and stays invested
    (at most one trade and ≥ 95% exposure per window on average: buy_and_hold). Its exposure
    only drifts with the price, so shuffling it measures noise, not timing."""

    def mean(metric: str) -> float | None:
        row = summary.loc[(summary["policy"] == policy) & (summary["metric"] == metric), "mean"]
        return None if row.empty or pd.isna(row.iloc[0]) else float(row.iloc[0])

    trades, exposure = mean("trades"), mean("exposure")
    return trades is None or exposure is None or trades > 1.0 or exposure < 0.95


def rolling_full_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Every summarised metric as ``mean [low, high]``."""
    metrics = list(dict.fromkeys(summary["metric"])) if len(summary) else []
    return pd.DataFrame(
        [
            {"policy": policy_label(p), **{m: _ci(summary, p, m) for m in metrics}}
            for p in _policy_order(summary)
        ]
    )


def timing_table(test_period: pd.DataFrame, rolling: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Per policy: the test-period timing share, the mean over windows, and how often ≥ 0.95."""
    policies = _policy_order(rolling if len(rolling) else test_period)
    out = []
    for policy in policies:
        line = {"policy": policy_label(policy)}
        for ticker, part in test_period.groupby("ticker", sort=True) if len(test_period) else []:
            row = part.loc[part["policy"] == policy]
            line[f"{ticker} test period"] = format_metric(
                row["timing_share"].iloc[0] if len(row) else None, 3
            )
        if len(rolling) and not _times(summary, policy):
            line["windows: mean [CI]"] = "– (buys once and holds: no timing)"
            line["windows beating ≥ 95% of shuffles"] = "–"
        elif len(rolling):
            shares = pd.to_numeric(rolling.loc[rolling["policy"] == policy, "timing_share"], errors="coerce")
            line["windows: mean [CI]"] = _ci(summary, policy, "timing_share")
            line["windows beating ≥ 95% of shuffles"] = (
                f"{int((shares >= 0.95).sum())}/{int(shares.notna().sum())}" if shares.notna().any() else "–"
            )
        out.append(line)
    return pd.DataFrame(out)


def verdict_lines(comparisons: pd.DataFrame, baselines: tuple[str, ...]) -> list[dict[str, str]]:
    """Plain-language verdicts per policy against each baseline."""
    lines = []
    for policy in _policy_order(comparisons):
        for baseline in baselines:
            row = comparisons.loc[(comparisons["policy"] == policy) & (comparisons["baseline"] == baseline)]
            if row.empty:
                continue
            r = row.iloc[0]
            p = None if pd.isna(r["p_value"]) else float(r["p_value"])
            ties = int(r["ties"]) if "ties" in r and not pd.isna(r["ties"]) else 0
            p_holm = None if "p_holm" not in r or pd.isna(r["p_holm"]) else float(r["p_holm"])
            text = verdict(policy, baseline, int(r["wins"]), int(r["n"]), p, ties=ties, p_holm=p_holm)
            decisive = p if p_holm is None else p_holm
            css = (
                "even"
                if decisive is None or decisive >= 0.05
                else ("good" if r["wins"] * 2 > r["n"] else "bad")
            )
            lines.append({"text": text, "css": css})
    return lines


def looks_table(looks: pd.DataFrame) -> pd.DataFrame:
    """Each model's number of looks at the test split, flagged when more than one."""
    counts = look_counts(looks)
    if counts.empty:
        return pd.DataFrame()
    counts = counts.assign(order=counts["policy"].map({p: i for i, p in enumerate(_policy_order(counts))}))
    return pd.DataFrame(
        [
            {
                "policy": policy_label(r.policy),
                "model version": r.version,
                "test looks": r.looks,
                "first": f"{r.first:%Y-%m-%d %H:%M}",
                "last": f"{r.last:%Y-%m-%d %H:%M}",
                "flag": "looked at more than once" if r.flag else "",
            }
            for r in counts.sort_values(["order", "version"]).itertuples(index=False)
        ]
    )


def evidence_lines(evidence: Evidence, confidence: float) -> list[str]:
    """The family-wide statistics under the leaderboard, one sentence each."""
    if evidence.best is None:
        return evidence.notes
    pct = int(round(confidence * 100))
    lines = [
        f"n = {evidence.windows} independent (non-overlapping) test windows across {evidence.tickers} "
        f"ticker(s); CIs are {pct}% percentile bootstraps over (ticker, window) clusters; p-values are "
        "paired t-tests of Δ daily Sharpe, Holm-adjusted over the family of "
        f"{len(evidence.distinct)} distinct policies compared with buy-and-hold.",
    ]
    if evidence.clones:
        lines.append(
            "Clones (identical to another policy on every window; listed as '= original', left out "
            f"of the family, the tests and the choice of the best): {clone_summary(evidence.clones)}."
        )
    if evidence.tickers > 1:
        lines.append(
            "Caveat: the tickers' test splits cover the same calendar months, so windows of different "
            "tickers share the market's moves; treating each (ticker, window) as independent is "
            "optimistic, and the true uncertainty lies between this and the per-ticker figures."
        )
    if evidence.mdd_sharpe is not None and evidence.mdd_return is not None:
        lines.append(
            f"Minimum detectable difference at α = 0.05 and power 0.8 (median over the family): "
            f"{evidence.mdd_sharpe:.3f} in daily Sharpe and {evidence.mdd_return * 100:.2f} percentage "
            "points of total return per window; smaller true edges are likely to go unseen."
        )
    if evidence.spa is not None:
        spa = evidence.spa
        lines.append(
            f"Hansen's SPA test (does any of the {spa.policies} policies beat buy-and-hold on total return "
            f"per window, after accounting for how many were tried?): p = {spa.p_consistent:.3g} "
            f"(lower {spa.p_lower:.3g}, upper {spa.p_upper:.3g}); best by mean: {policy_label(spa.best)}."
        )
    if evidence.dsr is not None:
        dsr = evidence.dsr
        lines.append(
            f"Deflated Sharpe Ratio of {policy_label(dsr.policy)}: {dsr.dsr:.3f} (its daily Sharpe "
            f"{dsr.sharpe:.3f} over {dsr.observations} test days against SR₀ = {dsr.threshold:.3f}, the "
            f"expected best of {dsr.trials} unskilled tries); above 0.95 would be significant."
        )
    lines.append(
        "Percentile among random: where the policy's frictionless test-period return, averaged over "
        "tickers, falls among 1,000 seeded random long-only policies that trade on as many days "
        "(each trade moves to a uniform random exposure in [0, 1]; 50 = no better than chance)."
    )
    return lines + evidence.notes


def _splits_table(splits: pd.DataFrame) -> pd.DataFrame:
    if splits.empty:
        return pd.DataFrame({"splits": ["none stored: materialize `splits`"]})
    shown = splits[["ticker", "split", "start_date", "end_date", "trading_days", "gap_before"]].copy()
    shown["start_date"] = shown["start_date"].astype(str)
    shown["end_date"] = shown["end_date"].astype(str)
    return shown.rename(columns={"gap_before": "gap before (trading days)"})


def _html(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "<p>–</p>"
    return frame.to_html(index=False, escape=True, border=0, na_rep="–")


def _md(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "–"
    return frame.astype(str).to_markdown(index=False)


def _ticker_figures(key: str, curves: pd.DataFrame, period: pd.DataFrame) -> list[tuple[str, dict]]:
    """The equity, drawdown and trades figures of one ticker's test period, as (kind, figure)."""
    from stocker_core.evaluation import plots

    rank = {p: i for i, p in enumerate(_policy_order(curves))}
    curves = curves.sort_values(["policy", "step"], key=lambda c: c.map(rank) if c.name == "policy" else c)
    ticker = str(key).split("|")[0]
    clones = identical_to(curves, ["step"], ["value"], _policy_order(curves))
    upper = period.loc[period["upper_bound"].astype(bool)]
    caption = "Hindsight upper bounds are left off this chart: " + ", ".join(
        f"{policy_label(r.policy)} ends at {r.final_value:,.0f}" for r in upper.itertuples()
    )
    same = "; ".join(clone_lines(clones, "on every day: drawn once, under its name"))
    caption = "; ".join(part for part in (caption if len(upper) else "", same) if part)
    span = f"{period['start_date'].min()} … {period['end_date'].max()}"
    return [
        (
            "equity",
            {
                "name": f"equity_{ticker}",
                "png": plots.equity_png(curves, f"{ticker} test period {span}: portfolio value", clones),
                "alt": f"{ticker} equity curves",
                "caption": caption,
            },
        ),
        (
            "drawdown",
            {
                "name": f"drawdown_{ticker}",
                "png": plots.drawdown_png(curves, f"{ticker} test period: drawdown", clones),
                "alt": f"{ticker} drawdowns",
            },
        ),
        (
            "trades",
            {
                "name": f"trades_{ticker}",
                "png": plots.trades_png(curves, f"{ticker} test period: trades on the close", clones),
                "alt": f"{ticker} trades",
            },
        ),
    ]


def _figures(data: ReportData) -> dict[str, list[dict[str, object]]]:
    from stocker_core.evaluation import plots

    figures: dict[str, list[dict[str, object]]] = {"equity": [], "drawdown": [], "trades": [], "rolling": []}
    for key, curves in data.curves.groupby("key", sort=True) if len(data.curves) else []:
        period = data.test_period.loc[data.test_period["key"] == key]
        for kind, figure in _ticker_figures(str(key), curves, period):
            figures[kind].append(figure)
    if len(data.summary):
        figures["rolling"].append(
            {
                "name": "rolling_total_return",
                "png": plots.rolling_ci_png(
                    data.summary, "total_return", "total return per window: mean and CI"
                ),
                "alt": "rolling total return with confidence intervals",
            }
        )
    for items in figures.values():
        for fig in items:
            fig["data"] = base64.b64encode(fig["png"]).decode()  # type: ignore[arg-type]
            fig["file"] = f"{fig['name']}.png"
            fig.setdefault("caption", "")
    return figures


def _report_tables(
    data: ReportData,
    config: RollingConfig,
    evidence: Evidence,
    test_episodes: pd.DataFrame,
    clones: dict[str, str],
) -> dict[str, pd.DataFrame]:
    """Every table the report shows, by name (each rendered as ``<name>_html`` and ``<name>_md``)."""
    return {
        "splits": _splits_table(data.splits),
        "metrics_test": mean_metrics_table(test_episodes),
        "metrics_all": mean_metrics_table(data.episodes),
        "test_period": test_period_table(data.test_period) if len(data.test_period) else pd.DataFrame(),
        "rolling": rolling_table(data.summary, data.comparisons, config.baselines, clones)
        if len(data.summary)
        else pd.DataFrame(),
        "rolling_full": rolling_full_table(data.summary) if len(data.summary) else pd.DataFrame(),
        "timing": timing_table(data.test_period, data.rolling, data.summary),
        "leaderboard": leaderboard_table(evidence, config.confidence),
        "looks": looks_table(data.looks),
        "forward_live": forward_table(data.forward, "live"),
        "forward_replayed": forward_table(data.forward, "replayed"),
    }


def _report_notes(data: ReportData, config: RollingConfig) -> list[str]:
    """The report's notes: the equity-curve conventions, each metric's meaning, the caveats,
    then every distinct note the episodes and the test period carry."""
    notes = [f"{name}: {text}" for name, text in METRIC_HELP.items()]
    notes.insert(
        0,
        "Equity curve: V_0 = the starting cash before day 1, then the value after each day's close; "
        "T = trading days; r_t = V_t / V_(t−1) − 1. Undefined values (e.g. Sharpe with zero "
        "volatility) are shown as “–”.",
    )
    notes.append(
        "ideal is the hindsight-optimal long-only path (it knows future prices): an upper bound, "
        "not a strategy."
    )
    notes.append(
        "Per-episode tables: the policies fitted on the train split ("
        + ", ".join(sorted(FITTED_ON_TRAIN))
        + ") are not played on train-split episodes (in-sample), so their 'all episodes' means "
        "cover the other splits only."
    )
    notes.append(
        f"random is seeded per window with seed + window index (one draw per window); "
        f"the bootstrap uses {config.resamples} seeded resamples in blocks of {config.block} windows."
    )
    for text in sorted(
        {
            n
            for n in pd.concat(
                [data.episodes.get("notes", pd.Series()), data.test_period.get("notes", pd.Series())]
            ).dropna()
            if n
        }
    ):
        notes.append(text)
    return notes


def report_context(data: ReportData, config: RollingConfig | None = None) -> dict[str, object]:
    """Everything the templates show, computed from ``data`` alone."""
    config = config or RollingConfig()
    evidence = pooled_evidence(
        data.rolling, data.curves, EvidenceConfig(config.confidence, config.resamples, seed=config.seed)
    )
    episodes = data.episodes
    split_of = episode_splits(episodes, data.splits) if len(episodes) and len(data.splits) else None
    test_episodes = episodes.loc[split_of == "test"] if split_of is not None else episodes.iloc[:0]
    keys = episodes["key"].unique() if len(episodes) else []
    windows = data.rolling.groupby(["ticker", "window_index"]).ngroups if len(data.rolling) else 0
    window_days = int(data.rolling["trading_days"].max()) if len(data.rolling) else config.window_days
    policies_seen = pd.concat([episodes.get("policy", pd.Series()), data.rolling.get("policy", pd.Series())])
    clones = rolling_clones(data.rolling)
    tables = _report_tables(data, config, evidence, test_episodes, clones)
    notes = _report_notes(data, config)
    context: dict[str, object] = {
        "title": "Stocker evaluation report",
        "generated_at": datetime.now().strftime("%Y-%m-%d %H:%M"),
        "warehouse": data.warehouse,
        "sections": SECTIONS,
        "answer": headline(evidence),
        "evidence": evidence_lines(evidence, config.confidence),
        "flagged_looks": int(look_counts(data.looks)["flag"].sum()) if len(data.looks) else 0,
        "episode_count": len(keys),
        "episode_policies": episodes["policy"].nunique() if len(episodes) else 0,
        "episode_first": str(episodes["start_date"].min()) if len(episodes) else "",
        "episode_last": str(episodes["end_date"].max()) if len(episodes) else "",
        "test_episode_count": test_episodes["key"].nunique() if len(test_episodes) else 0,
        "window_count": windows,
        "window_days": window_days,
        "step_days": config.step_days,
        "policies": [policy_label(p) for p in ordered_policies(list(dict.fromkeys(policies_seen)))]
        if len(policies_seen)
        else [],
        "verdicts": verdict_lines(data.comparisons, config.baselines) if len(data.comparisons) else [],
        "overlap_note": (
            f"Rolling windows overlap (each shares {max(window_days - config.step_days, 0)} of its "
            f"{window_days} days with the next), so the sign tests use only the independent "
            "(non-overlapping) windows, pooled across tickers; the means and plots use every window."
        ),
        "confidence_pct": int(round(config.confidence * 100)),
        "shuffles": TIMING_SHUFFLES,
        "notes": notes,
        "clones": clone_lines(clones, "on every window"),
    }
    for name, frame in tables.items():
        context[f"{name}_html"] = _html(frame)
        context[f"{name}_md"] = _md(frame)
    return context


def _environment():
    import jinja2

    return jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)


def render_report(data: ReportData, directory: Path, config: RollingConfig | None = None) -> ReportFiles:
    """Write ``report.html`` (self-contained), ``report.md`` and its PNGs into ``directory``."""
    import markupsafe

    context = report_context(data, config)
    files = ReportFiles(directory, directory / "report.html", directory / "report.md", context=dict(context))
    figures = _figures(data)
    for kind, items in figures.items():
        context[f"{kind}_figures"] = items
    html_context = {k: markupsafe.Markup(v) if k.endswith("_html") else v for k, v in context.items()}
    directory.mkdir(parents=True, exist_ok=True)
    env = _environment()
    html = env.from_string(HTML_TEMPLATE).render(**html_context)
    markdown = _environment_plain().from_string(MARKDOWN_TEMPLATE).render(**context)
    files.html.write_text(html, encoding="utf-8")
    files.markdown.write_text(markdown, encoding="utf-8")
    for items in figures.values():
        for fig in items:
            path = directory / str(fig["file"])
            path.write_bytes(fig["png"])  # type: ignore[arg-type]
            files.images.append(path)
    return files


def _environment_plain():
    import jinja2

    return jinja2.Environment(autoescape=False, undefined=jinja2.StrictUndefined)


def report_dir(home: Path, name: str) -> Path:
    """``$STOCKER_HOME/reports/<name>``; InvalidNameError for a name that is not a plain folder name."""
    if not name or name in {".", ".."} or any(c in name for c in "/\\") or name.startswith("."):
        raise InvalidNameError(f"report name {name!r} must be a plain folder name, e.g. 'evaluation'")
    return home / "reports" / name


def build_report(
    warehouse: Warehouse, home: Path, name: str = "evaluation", config: RollingConfig | None = None
) -> ReportFiles:
    """Read the ``eval.*`` rows, write the report under ``home/reports/<name>/`` and index it
    in ``eval.reports`` (paths and the HTML's sha256)."""
    directory = report_dir(home, name)
    files = render_report(load_report_data(warehouse), directory, config)
    digest = hashlib.sha256(files.html.read_bytes()).hexdigest()
    row = pd.DataFrame(
        [
            {
                "name": name,
                "html_path": str(files.html),
                "markdown_path": str(files.markdown),
                "sha256": digest,
                "created_at": datetime.now(),
            }
        ]
    )
    replace_rows(warehouse, "eval.reports", row, "name = ?", [name])
    return files
