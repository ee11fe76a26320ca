"""Bucket words, the prompt and the completion parser, on hand-worked numbers."""

import pytest

from stocker_core.language_model.tokenizer import build_word_tokenizer
from stocker_core.moderator.prompts import (
    ModeratorState,
    confidence_word,
    parse_completion,
    price_move,
    prompt_words,
    signal_word,
    vocabulary,
)


@pytest.mark.parametrize(
    ("signal", "word"), [(0.4, "p4"), (-0.2, "m2"), (0.04, "p0"), (-0.96, "m10"), (1.7, "p10"), (-0.0, "p0")]
)
def test_signal_words_are_tenths(signal, word):
    assert signal_word(signal) == word


@pytest.mark.parametrize(("confidence", "word"), [(0.7, "c7"), (0.0, "c0"), (0.55, "c6"), (2.0, "c10")])
def test_confidence_words_are_tenths(confidence, word):
    assert confidence_word(confidence) == word


def test_price_move_over_five_sessions():
    assert price_move([100, 101, 102, 103, 104, 110]) == pytest.approx(0.10)
    assert price_move([100, 110]) == 0.0  # too little history


def _state(**changes):
    values = dict(
        votes=(("chart_pattern", 0.4, 0.7), ("news", -0.2, 0.5)),
        price=100.0,
        price_move=-0.031,
        cash=5000.0,
        position=25,
        starting_cash=10000.0,
        step=7,
        total_steps=40,
    )
    values.update(changes)
    return ModeratorState(**values)


def test_prompt_words_bucket_every_number():
    # value 5000 + 25*100 = 7500: exposure 2500/7500 = 1/3 -> e1 (quarters); pnl -25% -> g-5 (clipped)
    # move -3.1% -> d-3; step 7 of 40 -> t1
    words = prompt_words(_state())
    assert words == ("chart_pattern p4 c7 news m2 c5 move d-3 exposure e1 pnl g-5 step t1 action")
    tokenizer = build_word_tokenizer(vocabulary())
    assert tokenizer.unk_token_id not in tokenizer(words)["input_ids"]


def test_vocabulary_has_no_duplicates():
    words = vocabulary()
    assert len(words) == len(set(words))


def test_parse_scales_quarters_of_the_feasible_maximum():
    # 1000 cash at 99 with cost 0.001 affords floor(1000 / 99.099) = 10 shares; q2 -> 5
    parsed = parse_completion("buy q2", 1000.0, 0, 99.0, 0.001)
    assert parsed.parsed and parsed.action.side == "buy" and parsed.action.quantity == 5
    # sell q1 of 3 shares rounds up to 1; q4 sells everything
    assert parse_completion("sell q1", 0.0, 3, 50.0).action.quantity == 1
    assert parse_completion("sell q4", 0.0, 3, 50.0).action.quantity == 3
    # nothing feasible: a valid answer that becomes hold
    nothing = parse_completion("sell q3", 1000.0, 0, 50.0)
    assert nothing.parsed and nothing.action.side == "hold"


@pytest.mark.parametrize("text", ["", "garbage words", "buy", "sell q0", "q4 p3"])
def test_unparsable_completions_hold_and_are_flagged(text):
    parsed = parse_completion(text, 1000.0, 5, 10.0)
    assert not parsed.parsed and parsed.action.side == "hold"


def test_hold_needs_no_size_and_the_first_answer_counts():
    assert parse_completion("hold", 1000.0, 5, 10.0).parsed
    first = parse_completion("sell q2 buy q4", 1000.0, 4, 10.0)
    assert first.action.side == "sell" and first.action.quantity == 2
