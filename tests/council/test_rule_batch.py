"""The array rule council equals the old per-day path (``rule_oracle``, frozen), vote for vote:
signal, confidence and rationale, exactly (``==`` on every field), on every day of the shipped
sample; and no row dated after a day (or published after its close) changes that day's votes."""

import json

import pandas as pd
import pytest
from rule_oracle import ORACLE_RULES, old_rule_votes, oracle_votes
from stocker_testing import SEED_DIR

from stocker_core.council.analysts import RULE_ANALYSTS
from stocker_core.council.backends import RuleBackend
from stocker_core.council.day_arrays import decision_cutoffs
from stocker_core.council.rule_batch import context_table, rule_table, rule_votes
from stocker_core.council.voting import Council, run_votes
from stocker_core.decision_context.decision import CouncilInputs
from stocker_core.decision_context.point_in_time import decision_cutoff
from stocker_core.market.files_source import FilesSource
from stocker_core.market.sample_source import SampleSource
from stocker_core.text_events.events import TextEvents, load_text_folder, parse_records

LO, HI = pd.Timestamp("2019-01-01").date(), pd.Timestamp("2025-01-01").date()


def _task_inputs(task: dict) -> CouncilInputs:
    """A reference task's full inputs from the shipped sample: every bar, peers, commodity, text."""
    source = FilesSource(SEED_DIR)
    symbols = [*task["peers"], task["commodity"]]
    closes = pd.concat([source.fetch(s, LO, HI).assign(symbol=s) for s in symbols])
    return CouncilInputs(
        task["ticker"],
        source.fetch(task["ticker"], LO, HI),
        load_text_folder(SEED_DIR),
        closes,
        tuple(task["peers"]),
        task["commodity"],
    )


TASKS = json.loads((SEED_DIR / "tasks.json").read_text())


@pytest.mark.parametrize("task", TASKS, ids=[t["task_id"] for t in TASKS])
def test_every_vote_of_the_sample_equals_the_per_day_path(task):
    inputs = _task_inputs(task)
    days = inputs.trading_days(LO, HI)  # from the first bar (too little history) to the last
    assert len(days) > 150
    batch = rule_votes(inputs, days)
    assert list(batch) == [(r, d) for r in ORACLE_RULES for d in days]
    per_day = oracle_votes(inputs, days)
    assert [k for k in per_day if per_day[k] != batch[k]] == []
    rationales = {v.rationale for v in batch.values()}
    assert any("headlines" in r for r in rationales) and any("no data" in r for r in rationales)
    # the single-day path (a DecisionContext) runs the same array rules
    for day in days[::15]:
        ctx = inputs.context(day)
        one = context_table(ctx).votes()
        assert one == {k: v for k, v in per_day.items() if k[1] == day}
        assert {(r, day): RULE_ANALYSTS[r](ctx) for r in ORACLE_RULES} == one


def test_close_only_sample_series_over_years_equals_the_old_batch():
    # close-only S&P 500 series: NaN high/low/open, no text, a peer; 3 years of days
    source = SampleSource()
    lo, hi = pd.Timestamp("2012-01-01").date(), pd.Timestamp("2016-01-01").date()
    closes = source.fetch("^GSPC", lo, hi).assign(symbol="^GSPC")
    inputs = CouncilInputs("AAPL", source.fetch("AAPL", lo, hi), TextEvents.empty(), closes, ("^GSPC",), None)
    days = inputs.trading_days("2012-01-01", "2015-12-31")
    batch = rule_votes(inputs, days)
    assert batch == old_rule_votes(inputs, days)
    some = days[::40]
    assert {k: v for k, v in batch.items() if k[1] in some} == oracle_votes(inputs, some)


def test_decision_cutoffs_equal_the_per_day_cutoff():
    days = pd.date_range("2022-11-20", "2023-01-05").append(pd.DatetimeIndex(["1985-06-03", "2090-01-02"]))
    expected = [decision_cutoff(d).value for d in days]
    assert decision_cutoffs(days.as_unit("ns").asi8).tolist() == expected


def _planted(inputs: CouncilInputs, day: pd.Timestamp) -> CouncilInputs:
    """``inputs`` with a rally after ``day``, crashed context closes, and text published after
    its close (an after-close headline on the day itself, posts and macro events later)."""
    bars = inputs.bars.copy()
    bars.loc[bars["date"] > day, ["open", "high", "low", "close"]] *= 3.0
    closes = inputs.context_closes.copy()
    closes.loc[closes["date"] > day, "close"] *= 0.2
    ticker = inputs.ticker
    after_close = str(day.date()) + "T21:30:00Z"
    news = parse_records(
        "news",
        [
            (
                "n",
                {"ticker": ticker, "date": after_close, "headline": "Shares soar to record, massive upgrade"},
            )
        ],
    )
    posts = parse_records(
        "forums",
        [("f", {"ticker": ticker, "date": after_close, "score": 99999, "post_text": "To the moon, bullish"})],
    )
    macro = parse_records(
        "macro", [("m", {"date": after_close, "headline": "Fed slashes rates", "policy_signal": "dovish"})]
    )
    text = TextEvents(
        pd.concat([inputs.text.news, news], ignore_index=True),
        pd.concat([inputs.text.forums, posts], ignore_index=True),
        pd.concat([inputs.text.macro, macro], ignore_index=True),
    )
    return CouncilInputs(ticker, bars, text, closes, inputs.peers, inputs.commodity)


def test_a_planted_future_changes_no_batched_vote(easy_inputs):
    day = pd.Timestamp("2023-08-15")
    days = easy_inputs.trading_days("2023-06-01", "2023-08-31")
    planted = _planted(easy_inputs, day)
    before, after = rule_votes(easy_inputs, days), rule_votes(planted, days)
    upto = [d for d in days if d <= day]
    assert [k for k in before if k[1] in upto and before[k] != after[k]] == []
    # the planted rows are read from the next session on: the plant was live
    changed = {k[0] for k in before if k[1] > day and before[k] != after[k]}
    assert {"chart_pattern", "news", "forum_sentiment", "geopolitics", "peer_commodity"} <= changed


def test_an_after_close_headline_is_seen_the_next_session_only():
    source = FilesSource(SEED_DIR)
    bars = source.fetch("META", pd.Timestamp("2022-01-01").date(), pd.Timestamp("2022-12-01").date())
    base = load_text_folder(SEED_DIR)
    planted = parse_records(
        "news", [("p", {"ticker": "META", "date": "2022-10-26T20:05:00Z", "headline": "Meta plunges"})]
    )
    inputs = CouncilInputs("META", bars, TextEvents(pd.concat([base.news, planted]), base.forums, base.macro))
    days = [pd.Timestamp("2022-10-26"), pd.Timestamp("2022-10-27")]
    batch = rule_votes(inputs, days, ["news"])
    assert batch == oracle_votes(inputs, days, ["news"])
    assert "Meta plunges" not in batch[("news", days[0])].rationale
    assert "Meta plunges" in batch[("news", days[1])].rationale


def test_run_votes_gives_the_same_frame_from_inputs_or_per_day_contexts(easy_inputs):
    days = easy_inputs.trading_days("2023-08-01", "2023-08-31")
    backend = RuleBackend()
    calls = []
    slow = run_votes("AAPL", days, lambda d: calls.append(d) or easy_inputs.context(d), backend)
    assert len(calls) == len(days)
    fast = run_votes(
        "AAPL", days, lambda d: calls.append(d) or easy_inputs.context(d), backend, inputs=easy_inputs
    )
    assert len(calls) == len(days)  # the batched run built no per-day context
    pd.testing.assert_frame_equal(slow.votes, fast.votes)
    assert fast.stats == slow.stats
    table = rule_table(easy_inputs, days)
    assert [
        tuple(r) for r in fast.votes[["date", "role", "signal", "confidence", "rationale"]].to_numpy()
    ] == [tuple(r) for r in table.rows()]


def test_one_days_council_equals_the_per_day_path(easy_inputs):
    day = pd.Timestamp("2023-08-15")
    ctx = easy_inputs.context(day)
    votes, stats = Council().votes(ctx)
    assert votes == [ORACLE_RULES[r](ctx) for r in ORACLE_RULES]
    assert stats["misses"] == len(ORACLE_RULES)


def test_unsorted_bars_are_refused(easy_inputs):
    shuffled = CouncilInputs("AAPL", easy_inputs.bars.iloc[::-1].reset_index(drop=True))
    with pytest.raises(ValueError, match="sorted"):
        rule_votes(shuffled, [pd.Timestamp("2023-08-01")])
