"""The batched rule council equals the per-day path, vote for vote."""

import pandas as pd
import pytest
from stocker_testing import SEED_DIR

from stocker_core.context.decision import CouncilInputs
from stocker_core.council.analysts import RULE_ANALYSTS
from stocker_core.council.backends import RuleBackend
from stocker_core.council.rule_batch import rule_votes
from stocker_core.council.voting import run_votes
from stocker_core.market.files_source import FilesSource
from stocker_core.market.sample_source import SampleSource
from stocker_core.text.events import TextEvents, load_text_folder, parse_records


def _per_day(inputs: CouncilInputs, days) -> dict:
    return {(role, day): RULE_ANALYSTS[role](inputs.context(day)) for day in days for role in RULE_ANALYSTS}


def test_batch_equals_per_day_on_the_seed_fixture_with_text_peers_and_commodity(easy_inputs):
    # from the very first bars (too little history) into a year with news, forums and macro events
    days = easy_inputs.trading_days("2020-01-01", "2020-04-30") + easy_inputs.trading_days(
        "2023-06-01", "2023-10-31"
    )
    per_day, batch = _per_day(easy_inputs, days), rule_votes(easy_inputs, days)
    assert set(batch) == set(per_day)
    assert [k for k in per_day if per_day[k] != batch[k]] == []
    rationales = {v.rationale for v in batch.values()}
    assert any("headlines" in r for r in rationales) and any("no data" in r for r in rationales)


def test_batch_equals_per_day_on_close_only_sample_series():
    # an S&P 500 close-only series of the sample: high/low/open are NaN, no text
    source = SampleSource()
    bars = source.fetch("AAPL", pd.Timestamp("2016-01-01").date(), pd.Timestamp("2017-03-01").date())
    closes = source.fetch("^GSPC", pd.Timestamp("2016-01-01").date(), pd.Timestamp("2017-03-01").date())
    inputs = CouncilInputs("AAPL", bars, TextEvents.empty(), closes.assign(symbol="^GSPC"), ("^GSPC",), None)
    days = inputs.trading_days("2016-10-01", "2017-02-28")
    assert rule_votes(inputs, days) == _per_day(inputs, days)


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
    assert batch == {k: v for k, v in _per_day(inputs, days).items() if k[0] == "news"}
    assert "Meta plunges" not in batch[("news", days[0])].rationale
    assert "Meta plunges" in batch[("news", days[1])].rationale


def test_run_votes_uses_the_batch_with_inputs_and_gives_the_same_frame(easy_inputs):
    days = easy_inputs.trading_days("2023-08-01", "2023-08-31")
    backend = RuleBackend()
    calls = []
    slow = run_votes("AAPL", days, lambda d: calls.append(d) or easy_inputs.context(d), backend)
    fast = run_votes(
        "AAPL", days, lambda d: calls.append(d) or easy_inputs.context(d), backend, inputs=easy_inputs
    )
    assert len(calls) == len(days)  # the batched run built no per-day context
    pd.testing.assert_frame_equal(slow.votes, fast.votes)
    assert fast.stats == slow.stats


def test_unsorted_bars_are_refused(easy_inputs):
    shuffled = CouncilInputs("AAPL", easy_inputs.bars.iloc[::-1].reset_index(drop=True))
    with pytest.raises(ValueError, match="sorted"):
        rule_votes(shuffled, [pd.Timestamp("2023-08-01")])
