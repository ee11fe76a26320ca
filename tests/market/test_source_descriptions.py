"""Sources describe themselves (``stocker_core.data_sources.DataSource``) and the code asks the
description, never the name: a source registered under another name that describes itself as
the synthetic market does gets its text, its freshness and its reuse; the built-in sources'
settings defaults hold before the composition root has run, as after."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pandas as pd

from stocker_core.config import Settings, use_settings
from stocker_core.data_sources import DataSource, data_source, registered_source
from stocker_core.market.bars import configured_source, missing_bars_message
from stocker_core.market.calendar import calendar_name, session_close, sessions, trading_calendar
from stocker_core.market.freshness import judged_as_of
from stocker_core.market.source_builder import synthetic_source, synthetic_spec
from stocker_core.market.synthetic import SyntheticSource
from stocker_core.text_events.configured import configured_events, configured_text

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"synth_tickers": "2", "synth_years": 0.25}


def test_the_built_in_sources_say_what_they_are():
    described = {name: data_source(name) for name in ("sample", "files", "yfinance", "synthetic")}
    assert {name: sorted(d.serves) for name, d in described.items()} == {
        "sample": ["bars", "text"],
        "files": ["bars"],
        "yfinance": ["bars", "fundamentals"],
        "synthetic": ["bars", "text"],
    }
    assert [name for name, d in described.items() if d.online] == ["yfinance"]
    assert [name for name, d in described.items() if not d.live] == ["sample", "synthetic"]
    assert [name for name, d in described.items() if d.reuse_key is None] == ["yfinance"]
    assert {d.calendar for d in described.values()} == {"XNYS"}
    assert [name for name, d in described.items() if d.missing_bars_hint] == ["sample", "files", "yfinance"]


def test_a_source_is_asked_what_it_is_not_what_it_is_called():
    seeded = DataSource(
        "seeded", synthetic_source, live=False, synthetic_spec=synthetic_spec, reuse_key=synthetic_spec
    )
    with registered_source(seeded):
        settings = Settings(source="seeded", **SMALL)
        same_market = Settings(source="synthetic", **SMALL)
        text, expected = configured_text(settings), configured_text(same_market)
        assert len(text.news) > 0
        pd.testing.assert_frame_equal(text.news, expected.news)
        pd.testing.assert_frame_equal(configured_events(settings, "macro"), expected.macro)
        assert configured_source(settings) is configured_source(Settings(source="seeded", **SMALL))
        now = pd.Timestamp("2030-01-02 12:00", tz="UTC")
        assert judged_as_of("seeded", date(2021, 3, 31), now) < now  # a fixed data set
    assert judged_as_of("seeded", date(2021, 3, 31), now) == now  # no longer registered: live


def test_a_registered_source_sets_its_settings_defaults_and_ships_its_text(tmp_path):
    def defaults(settings):
        return {"default_tickers": ["SINE"], "benchmark": "SINE"}

    shipped = DataSource("shipped", synthetic_source, text_folder=tmp_path, setting_defaults=defaults)
    with registered_source(shipped):
        settings = Settings(source="shipped")
        assert (settings.default_tickers, settings.benchmark) == (["SINE"], "SINE")
        assert settings.text_folder == tmp_path
        assert Settings(source="shipped", benchmark="^GSPC").benchmark == "^GSPC"  # set: kept


def test_the_built_in_defaults_hold_before_the_sources_are_registered():
    """Settings read before the composition root (the stocker command checks them first,
    Dagster's partitions read them at import) default as they do after it."""
    code = (
        "import json\n"
        "from stocker_core.config import Settings\n"
        "from stocker_core.data_sources import registered_sources\n"
        "def seen():\n"
        "    s, y = Settings(), Settings(source='synthetic')\n"
        "    return [s.default_tickers, s.main_from, s.main_to,\n"
        "            y.default_tickers, y.benchmark, y.start_month]\n"
        "before = seen()\n"
        "assert registered_sources() == ()\n"
        "from stocker_core.composition import register_all\n"
        "register_all()\n"
        "print(json.dumps([before, seen()]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, timeout=300
    )
    before, after = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == after
    assert after[3:] == [["SYN1", "SYN2", "SYN3", "SYN4"], "^SYN", "2021-01-01"]


def test_no_code_compares_a_source_by_its_name():
    """Outside the registry, code asks a source's description (``settings.data_source``): no
    comparison with a name, no table keyed by one (``hints.get(settings.source)``,
    ``hints[settings.source]``)."""
    compares = re.compile(
        r"\.source\s*(==|!=|in\s*[(\[{]|not\s+in\s*[(\[{])|FIXED_SOURCES"
        r"|\.get\(\s*(\w+\.)?source\b|\w\[\s*\w+\.source\s*\]"
    )
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for package in ("stocker_core", "stocker_assets")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path.name != "data_sources.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if compares.search(line)
    ]
    assert found == []


def test_the_trading_calendar_is_the_configured_sources():
    """The sessions come from the calendar the configured source names, not a constant."""
    london = DataSource("london", synthetic_source, live=False, calendar="XLON", reuse_key=synthetic_spec)
    assert trading_calendar().name == "XNYS"
    with registered_source(london), use_settings(Settings(source="london", **SMALL)):
        assert calendar_name() == "XLON" and trading_calendar().name == "XLON"
        # 2021-08-30: a UK bank holiday (London closed), New York open
        assert date(2021, 8, 30) not in set(sessions(date(2021, 8, 30), date(2021, 9, 1)).date)
        assert session_close(pd.Timestamp("2021-08-31")) == pd.Timestamp("2021-08-31 15:30", tz="UTC")
    assert date(2021, 8, 30) in set(sessions(date(2021, 8, 30), date(2021, 9, 1)).date)
    assert session_close(pd.Timestamp("2021-08-31")) == pd.Timestamp("2021-08-31 20:00", tz="UTC")


def test_where_else_missing_bars_are_is_the_sources_to_say(tmp_path):
    def no_bars(settings):
        return SyntheticSource(synthetic_spec(settings))

    hinted = DataSource("hinted", no_bars, missing_bars_hint="ask the desk for them")
    bars = pd.DataFrame({"date": pd.to_datetime([])})
    window = (date(1995, 1, 1), date(1995, 2, 1))
    with registered_source(hinted):
        message = missing_bars_message(Settings(source="hinted", **SMALL), "SYN1", *window, bars)
        assert message.endswith("; ask the desk for them — or pick another window")
    plain = missing_bars_message(Settings(source="synthetic", **SMALL), "SYN1", *window, bars)
    assert plain.endswith("; pick another window — or pick another window")
    hint = missing_bars_message(Settings(source="files", files_dir=tmp_path), "SYN1", *window, bars)
    assert "add them to STOCKER_FILES_DIR" in hint
