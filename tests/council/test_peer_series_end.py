"""A peer or commodity close past its series' last real day is missing, not carried forward
(issue 35): the context, the rule analyst (per day and batched) and the LLM prompt agree."""

import numpy as np
import pandas as pd
from stocker_testing import make_bars

from stocker_core.council.analysts import RULE_ANALYSTS
from stocker_core.council.roles import ROLES
from stocker_core.council.rule_batch import rule_votes
from stocker_core.decision_context.decision import CouncilInputs, current_series
from stocker_core.text_events.events import TextEvents

OWN = make_bars(np.linspace(100, 120, 80))  # +20% over 80 business days from 2023-01-02
DAYS = list(OWN["date"])


def _closes(symbol: str, values: np.ndarray, sessions: int) -> pd.DataFrame:
    """``symbol``'s closes on the first ``sessions`` of the ticker's days."""
    return make_bars(values[:sessions]).assign(symbol=symbol)[["date", "symbol", "close"]]


def _inputs(peer_sessions: int, commodity_sessions: int) -> CouncilInputs:
    closes = pd.concat(
        [
            _closes("P1", np.linspace(100, 130, 80), peer_sessions),  # stronger than the ticker
            _closes("P2", np.linspace(100, 101, 80), 80),  # flat, to the end
            _closes("GC=F", np.linspace(100, 140, 80), commodity_sessions),  # gold rallies
        ]
    )
    return CouncilInputs("AAPL", OWN, TextEvents.empty(), closes, ("P1", "P2"), "GC=F")


def test_context_has_no_close_past_a_series_end():
    inputs = _inputs(peer_sessions=60, commodity_sessions=80)
    last_real = DAYS[59]
    on_the_day = inputs.context(last_real)
    assert len(on_the_day.current_closes("P1")) == 60
    later = inputs.context(DAYS[70])
    assert len(later.closes("P1")) == 60  # the history is still there, dated
    assert later.current_closes("P1").empty  # but the day's close is missing
    assert len(later.current_closes("P2")) == 71


def test_current_series_on_arrays():
    dates = pd.DatetimeIndex(DAYS[:5]).to_numpy(dtype="datetime64[ns]").astype(np.int64)
    values = np.arange(5.0)
    assert current_series(dates, values, int(dates[3])).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert current_series(dates, values, int(dates[4]) + 86_400 * 10**9).size == 0  # past the end
    assert current_series(dates, values, int(dates[0]) - 86_400 * 10**9).size == 0  # before it


def test_peer_vote_drops_a_peer_past_its_last_day_and_says_so():
    full, ended = _inputs(80, 80), _inputs(60, 80)
    day = DAYS[-1]
    with_p1 = RULE_ANALYSTS["peer_commodity"](full.context(day))
    without_p1 = RULE_ANALYSTS["peer_commodity"](ended.context(day))
    assert "(P1, P2)" in with_p1.rationale and "no close on the day" not in with_p1.rationale
    assert "(P2)" in without_p1.rationale and "no close on the day: P1" in without_p1.rationale
    # P1 (+30%) made the ticker (+20%) look weak; P2 alone (+1%) makes it look strong
    assert without_p1.signal > with_p1.signal


def test_every_series_ended_is_an_abstention():
    inputs = _inputs(peer_sessions=60, commodity_sessions=60)
    inputs.peers = ("P1",)
    vote = RULE_ANALYSTS["peer_commodity"](inputs.context(DAYS[-1]))
    assert vote.confidence == 0 and vote.signal == 0
    assert "no close on the day: P1, GC=F" in vote.rationale
    # on the series' last real day it still votes
    assert RULE_ANALYSTS["peer_commodity"](inputs.context(DAYS[59])).confidence > 0


def test_batched_votes_equal_per_day_votes_across_the_series_end():
    inputs = _inputs(peer_sessions=60, commodity_sessions=70)
    days = DAYS[50:]
    batch = rule_votes(inputs, days, ["peer_commodity"])
    per_day = {("peer_commodity", d): RULE_ANALYSTS["peer_commodity"](inputs.context(d)) for d in days}
    assert batch == per_day
    assert "no close on the day: P1, GC=F" in batch[("peer_commodity", DAYS[75])].rationale
    assert "no close on the day" not in batch[("peer_commodity", DAYS[59])].rationale


def test_prompt_shows_a_missing_close_where_the_data_ends():
    inputs = _inputs(peer_sessions=60, commodity_sessions=80)
    text = ROLES["peer_commodity"].build(inputs.context(DAYS[-1])).text
    assert f"P1: no close on the day (its data ends {DAYS[59].date()})" in text
    assert "P2: " in text and "P2: no close" not in text
