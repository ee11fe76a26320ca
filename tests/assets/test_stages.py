"""The main job's stages follow the asset graph."""

from stocker_assets.definitions.location import defs
from stocker_assets.engine.stages import plan_stages


def _names(assets):
    return sorted(k.to_user_string() for a in assets for k in a.keys)


def test_stages_of_the_whole_graph():
    stages = plan_stages(list(defs.assets))
    assert [(_names(s.unpartitioned), _names(s.partitioned)) for s in stages[:1]] == [
        (
            ["forum_posts", "macro_events", "news"],
            ["charts", "episodes", "ideal_trajectories", "indicators", "prices", "specialist_votes"],
        )
    ]
    first = {n: i for i, s in enumerate(stages) for n in _names([*s.unpartitioned, *s.partitioned])}
    assert first["splits"] == 1 and first["drl_agents"] == 1 and first["backtests"] == 1
    assert first["rolling_evaluation"] == 1  # computes its own windows after the models
    assert first["evaluation_report"] == 2  # reads the backtests
    # every asset comes after what it reads
    for stage_index, stage in enumerate(stages):
        for asset in [*stage.unpartitioned, *stage.partitioned]:
            for key in asset.keys:
                for upstream in asset.asset_deps[key]:
                    if upstream.to_user_string() in first:
                        assert first[upstream.to_user_string()] <= stage_index


def test_a_subset_takes_missing_upstreams_as_built():
    evaluation = [a for a in defs.assets if "evaluation" in a.group_names_by_key.values()]
    stages = plan_stages(evaluation)
    assert _names(stages[0].unpartitioned) == ["drl_agents", "rolling_evaluation", "splits"]
    assert _names(stages[0].partitioned) == ["backtests"]
    assert _names(stages[1].unpartitioned) == ["evaluation_report"]
