"""On the synthetic source the council's cut holds: D's context has only text published
before D's close, D's after-close headlines appear from D+1 on, and the votes at D are
those of a world where nothing after D's close exists."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from stocker_core.config import Settings
from stocker_core.council import analysts
from stocker_core.decision_context.decision import load_council_inputs
from stocker_core.decision_context.point_in_time import decision_cutoff, published_before
from stocker_core.text_events.events import TextEvents
from stocker_core.text_events.synthetic import AFTER_CLOSE_PREFIX


def _upto(text: TextEvents, cutoff: pd.Timestamp) -> TextEvents:
    return TextEvents(*(published_before(f, cutoff) for f in (text.news, text.forums, text.macro)))


def test_synthetic_council_contexts_see_nothing_after_the_close(tmp_path):
    settings = Settings(
        source="synthetic", synth_tickers="2", synth_years=1.0, synth_start="2015-01-01", home=tmp_path
    )
    inputs = load_council_inputs("SYN1", "2015-06-01", "2015-07-31", peers=("^SYN",), settings=settings)
    days = inputs.trading_days("2015-06-01", "2015-07-31")
    assert len(days) == 44  # 22 XNYS sessions in June 2015, 22 in July (the 3rd a holiday)
    seen_after_close = 0
    for day, following in zip(days, days[1:], strict=False):
        cutoff = decision_cutoff(day)
        ctx = inputs.context(day)
        for frame in (ctx.news, ctx.forums, ctx.macro):
            assert (pd.to_datetime(frame["published_at"], utc=True) < cutoff).all()
        todays_after = inputs.text.news.loc[
            (inputs.text.news["ticker"] == "SYN1")
            & (inputs.text.news["date"] == day)
            & inputs.text.news["headline"].str.startswith(AFTER_CLOSE_PREFIX)
        ]
        assert set(todays_after["published_at"]).isdisjoint(set(ctx.news["published_at"]))
        assert set(todays_after["published_at"]) <= set(inputs.context(following).news["published_at"])
        seen_after_close += len(todays_after)
        # votes at D equal those computed from the text a reader at D's close could have had
        reference = replace(inputs, text=_upto(inputs.text, cutoff)).context(day)
        for role in ("news", "forum_sentiment", "geopolitics"):
            assert analysts.RULE_ANALYSTS[role](ctx) == analysts.RULE_ANALYSTS[role](reference)
    assert seen_after_close > 5
    assert analysts.RULE_ANALYSTS["peer_commodity"](inputs.context(days[-1])).confidence > 0  # ^SYN is there
