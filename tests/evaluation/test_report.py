"""A tiny evaluation run end to end: splits, partition backtests, rolling windows, the report."""

import json
from html.parser import HTMLParser

import pandas as pd
import pytest
from evaluation_testing import RULE_POLICIES, store_prices, synthetic_prices

from stocker_core.config import Settings
from stocker_core.errors import EmptyDataError, InvalidNameError
from stocker_core.evaluation.looks import look_counts
from stocker_core.evaluation.report import build_report
from stocker_core.evaluation.report_templates import SECTIONS
from stocker_core.evaluation.rolling import RollingConfig
from stocker_core.evaluation.steps import backtest_partitions, compute_and_store_splits, rolling_evaluation
from stocker_core.evaluation.store import read_eval
from stocker_core.warehouse.db import Warehouse

CONFIG = RollingConfig(window_days=20, step_days=5, resamples=200)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    settings = Settings(home=tmp_path_factory.mktemp("eval") / "home")
    warehouse = Warehouse(settings.warehouse_path)
    store_prices(warehouse, synthetic_prices(days=400))
    splits = compute_and_store_splits(warehouse)
    keys = ["SYN|2015-03-01", "SYN|2016-05-01"]
    backtest_partitions(settings, warehouse, keys, RULE_POLICIES)
    backtest_partitions(settings, warehouse, keys, RULE_POLICIES)  # replaces its rows
    outcome = rolling_evaluation(settings, warehouse, RULE_POLICIES, CONFIG)
    return settings, warehouse, splits, outcome


def test_tables_hold_one_row_per_episode_policy_and_window(evaluated):
    settings, warehouse, splits, outcome = evaluated
    test = splits.range_of("SYN", "test")
    assert test.trading_days == 68 and outcome.windows == 10  # (68 - 20) / 5 + 1
    backtests = read_eval(warehouse, "eval.backtests")
    assert len(backtests) == 2 * 6 + 6  # two partitions and the whole test period
    curves = read_eval(warehouse, "eval.equity_curves", "key = ? AND policy = 'hold'", ["SYN|2015-03-01"])
    assert curves["value"].tolist() == [10_000.0] * len(curves) and curves["step"].min() == 0
    assert len(read_eval(warehouse, "eval.rolling")) == 10 * 6
    comparisons = read_eval(warehouse, "eval.rolling_comparisons")
    ideal = comparisons.loc[(comparisons["policy"] == "ideal") & (comparisons["baseline"] == "random")].iloc[
        0
    ]
    # significance on the 3 independent windows (0, 4, 8: 20 days stepped by 5) of the 10
    assert ideal["wins"] == 3 and ideal["p_value"] == pytest.approx(2 / 2**3)
    assert pd.isna(ideal["p_holm"])  # the hindsight bound is not in the family
    family = comparisons.loc[comparisons["policy"] != "ideal"]
    assert family["p_holm"].notna().all() and (family["p_holm"] >= family["p_value"] - 1e-12).all()
    summary = read_eval(warehouse, "eval.rolling_summary")
    hold = summary.loc[(summary["policy"] == "hold") & (summary["metric"] == "total_return")].iloc[0]
    assert (hold["mean"], hold["ci_low"], hold["ci_high"]) == (0.0, 0.0, 0.0)


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href", "action", "data") and value:
                self.urls.append(value)
            if name == "id":
                self.ids.add(value)


def test_report_is_self_contained_and_has_every_section(evaluated):
    settings, warehouse, _, _ = evaluated
    files = build_report(warehouse, settings.home, "tiny")
    assert files.html == settings.home / "reports" / "tiny" / "report.html"
    html = files.html.read_text()
    parser = _Links()
    parser.feed(html)
    assert parser.ids >= {section for section, _ in SECTIONS}
    assert parser.urls and all(u.startswith(("#", "data:image/png;base64,")) for u in parser.urls)
    assert "http://" not in html and "https://" not in html and "<link" not in html and "<script" not in html
    assert "ideal (hindsight upper bound)" in html
    assert "random beats buy_and_hold in" in html or "buy_and_hold beats random in" in html
    markdown = files.markdown.read_text()
    for _, title in SECTIONS:
        assert f"## {title}" in markdown
    assert all(p.exists() for p in files.images) and len(files.images) == 4
    stored = read_eval(warehouse, "eval.reports")
    assert stored["name"].tolist() == ["tiny"] and len(stored["sha256"].iloc[0]) == 64


def test_report_numbers_come_from_the_tables(evaluated):
    settings, warehouse, _, _ = evaluated
    where = "WHERE policy = 'macd' AND baseline = 'random'"
    before = warehouse.query(f"SELECT wins, n FROM eval.rolling_comparisons {where}").iloc[0]
    with warehouse.connect() as con:  # change a stored number: the report must show it
        con.execute(f"UPDATE eval.rolling_comparisons SET wins = 7, n = 9 {where}")
    try:
        html = build_report(warehouse, settings.home, "tiny").html.read_text()
    finally:
        with warehouse.connect() as con:
            con.execute(
                f"UPDATE eval.rolling_comparisons SET wins = ?, n = ? {where}",
                [int(before.wins), int(before.n)],
            )
    assert "macd beats random in 7/9 independent windows" in html


def test_report_errors(tmp_path):
    warehouse = Warehouse(tmp_path / "w.duckdb")
    with pytest.raises(EmptyDataError, match="materialize the evaluation group"):
        build_report(warehouse, tmp_path, "x")
    with pytest.raises(InvalidNameError):
        build_report(warehouse, tmp_path, "../escape")


def test_every_test_split_evaluation_is_a_counted_look(evaluated):
    settings, warehouse, splits, _ = evaluated
    looks = read_eval(warehouse, "eval.test_looks").sort_values("looked_at")
    # each backtest_partitions call played a test-split episode (2016-05), then the rolling run
    assert looks["what"].tolist() == ["backtests", "backtests", "rolling_evaluation"]
    assert set(looks["who"]) == {"cli"} and looks["run_id"].isna().all()
    rolling = looks.iloc[-1]
    assert json.loads(rolling["tickers"]) == ["SYN"]
    versions = json.loads(rolling["model_versions"])
    assert set(versions) == set(RULE_POLICIES)
    assert set(versions.values()) == {"rules"}  # rule policies: code only, no trained weights
    assert len(rolling["config_hash"]) == 16
    html = build_report(warehouse, settings.home, "tiny").html.read_text()
    assert "Looks at the test split" in html
    # the same rule policies under the same settings three times: one look each, none flagged
    counts = look_counts(looks)
    assert set(counts["looks"]) == {1} and not counts["flag"].any()
    assert "model version(s) looked at more than once" not in html


def test_report_answers_first_with_pooled_statistics(evaluated):
    settings, warehouse, _, _ = evaluated
    markdown = build_report(warehouse, settings.home, "tiny").markdown.read_text()
    body = markdown.split("## Does anything beat buy-and-hold?", 1)[1]
    answer = body.strip().splitlines()[0]
    assert answer.startswith(("**Yes:", "**No:")) and "Holm-adjusted p" in answer
    assert "over 3 independent test windows of 1 ticker(s)" in answer
    top = body.split("## Summary", 1)[0]
    for text in (
        "Δ daily Sharpe vs buy_and_hold",
        "Holm p",
        "percentile among random",
        "Hansen's SPA test",
        "Deflated Sharpe Ratio",
        "Minimum detectable difference",
        "n = 3 independent",
    ):
        assert text in top
    assert markdown.index("## Does anything beat buy-and-hold?") < markdown.index("## Summary")


def test_policies_fitted_on_train_are_not_backtested_on_train_split_episodes(tmp_path, monkeypatch):
    """In-sample numbers of a trained model are left out: on a train-split episode only the
    policies not fitted on train play; on a test-split episode every policy does."""
    from stocker_core.env import policies

    monkeypatch.setattr(policies, "FITTED_ON_TRAIN", {"random"})  # stands in for a trained model
    settings = Settings(home=tmp_path / "home")
    warehouse = Warehouse(settings.warehouse_path)
    store_prices(warehouse, synthetic_prices(days=400))
    splits = compute_and_store_splits(warehouse)
    train = splits.range_of("SYN", "train")
    (done,) = backtest_partitions(settings, warehouse, ["SYN|2015-03-01", "SYN|2016-05-01"], RULE_POLICIES)
    assert (
        done.in_sample == ["SYN|2015-03-01"] and train.start <= pd.Timestamp("2015-03-02").date() <= train.end
    )
    played = {k: {r.policy for r in result.runs} for k, result in done.results.items()}
    assert "random" in RULE_POLICIES and "random" not in played["SYN|2015-03-01"]
    assert played["SYN|2016-05-01"] == set(RULE_POLICIES)
    assert played["SYN|2015-03-01"] == set(RULE_POLICIES) - {"random"}
