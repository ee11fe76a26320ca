"""The council, compare, training, corpus and overview endpoints on the tiny warehouse."""

import math

import pytest

KEY = "SYN|2015-03-01"


def test_council_day_shows_seven_votes_the_chart_and_the_moderator(client, tiny):
    day = client.get("/web/api/council/day", params={"episode": KEY, "date": tiny.days[0]}).json()
    assert [v["role"] for v in day["votes"]] == [
        "chart_pattern",
        "seasonal_trend",
        "indicator",
        "news",
        "forum_sentiment",
        "peer_commodity",
        "geopolitics",
    ]
    assert all(v["signal"] == 1.0 and v["confidence"] == 1.0 for v in day["votes"])
    assert day["votes"][0]["rationale"] == "chart_pattern sees a breakout"
    assert day["vote_set"] == "rule:rules-v1" and day["vote_version"].startswith("rule:rules-v1:")
    quantity = math.floor(10_000 * 0.5 / (tiny.closes[0] * 1.001))  # half the cash at conviction 1
    decision = day["decision"]
    assert (decision["side"], decision["quantity"]) == ("buy", quantity) and quantity == 49
    assert "weighted signal +1.00" in decision["rationale"]
    assert decision["cash"] == pytest.approx(10_000 - quantity * tiny.closes[0] * 1.001)
    png = client.get(f"/web/{day['chart']}")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content.startswith(b"\x89PNG")
    later = client.get("/web/api/council/day", params={"episode": KEY, "date": tiny.days[1]}).json()
    assert later["decision"]["side"] == "hold" and "too low" in later["decision"]["rationale"]
    # charts on demand (the default with a text-only council): a day without a stored chart has one
    assert later["chart"] == f"api/charts/SYN/{tiny.days[1]}" and later["chart_hint"] is None


def test_council_episode_heat_map_by_role_and_day(client, tiny):
    data = client.get("/web/api/council/episode", params={"episode": KEY}).json()
    assert data["days"] == tiny.days and data["empty"] is None
    signal = data["heatmap"]["signal"]
    assert set(signal) == set(data["heatmap"]["roles"]) and len(signal["news"]) == 44
    assert signal["news"][0] == 1.0 and signal["news"][1:] == [0.0] * 43
    assert len(data["decisions"]) == 44 and data["replay_stopped_at"] is None
    assert data["chart_days"] == tiny.days  # on demand: every day's chart is drawn when asked for
    assert [s["id"] for s in data["vote_sets"]] == ["rule:rules-v1"]


def test_compare_episode_metrics_and_curves_from_eval_rows(client, tiny):
    keys = client.get("/web/api/compare/episodes").json()
    assert [(e["key"], e["policies"]) for e in keys["episodes"]] == [(KEY, 3)]
    data = client.get("/web/api/compare/episode", params={"key": KEY}).json()
    assert [m["policy"] for m in data["metrics"]] == ["buy_and_hold", "hold", "ideal"]
    assert data["metrics"][2]["label"] == "ideal (hindsight upper bound)"
    hold = data["curves"]["hold"]
    assert hold["value"] == [10_000.0] * 45 and hold["date"][0] is None and hold["date"][1] == tiny.days[0]
    c0, last = tiny.closes[0], tiny.closes[-1]
    final = 10_000 - 99 * c0 * 1.001 + 99 * last
    buy = data["metrics"][0]
    assert buy["final_value"] == pytest.approx(final) and buy["total_return"] == pytest.approx(
        final / 10_000 - 1
    )
    assert data["metrics"][1]["total_return"] == 0.0 and data["metrics"][1]["trades"] == 0


def test_rolling_table_has_intervals_and_p_values(client):
    data = client.get("/web/api/compare/rolling").json()
    first = data["table"][0]
    assert first["policy"] == "buy_and_hold"
    assert first["total_return"] == "0.05 [0.01, 0.09]"
    assert first["vs random: wins (p)"] == "9/10 (p = 0.021)"
    assert data["baselines"] == ["buy_and_hold", "random"]


def test_report_is_listed_and_served(client):
    reports = client.get("/web/api/reports").json()["reports"]
    assert [r["name"] for r in reports] == ["evaluation"]
    page = client.get(f"/web/{reports[0]['url']}")
    assert page.status_code == 200 and "evaluation report" in page.text


def test_training_runs_with_curves_heldout_and_lineage(client):
    data = client.get("/web/api/training").json()
    runs = {r["run_id"]: r for r in data["runs"]}
    assert list(runs) == ["run1:moderator_sft", "ppo-abc"]  # newest first
    sft = runs["run1:moderator_sft"]
    assert sft["curves"] == {"training loss": [[0, 1.5], [10, 0.75], [20, 0.5]]}
    assert sft["heldout"] == [{"policy": "moderator_sft", "mean_reward": 1.25}]
    assert sft["episodes"] == {"count": 1, "unit": "episode", "text": "1 episode", "keys": [KEY]}
    assert sft["config"] == {"lr": 0.001}
    lineage = sft["lineage"][0]
    assert lineage["upstream"] == [{"input": f"specialist_votes@{KEY}", "version": "v123"}]
    assert runs["ppo-abc"]["learning"] == {
        "name": "mean training-episode return",
        "x": "timesteps",
        "points": [[100, -0.5], [200, 0.25]],
        "kept_step": None,
    }
    assert runs["ppo-abc"]["curves"] == {}
    assert runs["ppo-abc"]["lineage"] == []
    image = client.get("/web/api/training/run1:moderator_sft/image")
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")
    assert client.get("/web/api/training/ppo-abc/image").status_code == 404


def test_corpus_tickers_months_and_assets(client):
    data = client.get("/web/api/corpus").json()
    assert data["tickers"][0]["ticker"] == "SYN" and data["tickers"][0]["days"] == 400
    assert data["months"]["SYN"] == [
        {
            "month": "2015-03-01",
            "assets": ["prices", "charts"],
            "latest": data["months"]["SYN"][0]["latest"],
            "quality": None,
        }
    ]
    assert data["dagster"]["running"] in (True, False) and data["dagster"]["url"] == "http://127.0.0.1:3000"


def test_overview_counts_and_choices(client):
    counts = client.get("/web/api/status").json()["counts"]
    assert counts["prices"] == 400 and counts["votes"] == 44 * 7 and counts["episodes"] == 1
    assert counts["backtests"] == 3 and counts["training_runs"] == 2
    choices = client.get("/web/api/choices").json()
    assert [t["task_id"] for t in choices["tasks"]] == ["task_easy", "task_medium", "task_hard"]
    assert [e["key"] for e in choices["episodes"]] == [KEY]
    names = [p["name"] for p in choices["policies"]]
    assert {"buy_and_hold", "council", "ideal", "macd"} <= set(names) and names[-1] == "ideal"


def test_the_agents_training_data_reads_as_a_count():
    from stocker_core.web.training_runs import training_data_summary

    keys = {"tickers": ["GOOGL"], "train_span": ["2009-05-22", "2014-10-22"], "valid_span": ["a", "b"]}
    summary = training_data_summary(keys, {"train_pairs": 2672, "valid_final": {}})
    assert summary["count"] == 2672 and summary["unit"] == "train pairs"
    assert summary["text"] == "2,672 train pairs · 1 ticker (GOOGL) · train 2009-05-22 … 2014-10-22"
    assert "valid_span" not in summary["text"]
    assert training_data_summary(["A|2020-01-01", "A|2020-02-01"], None)["text"] == "2 episodes"
