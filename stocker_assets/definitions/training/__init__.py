"""The training domain: the moderator's base, SFT and GRPO models (``moderator``), the
tool-using agent's policy (``agent``), the checks on what they do on valid (``checks``) and
the training job."""

import dagster as dg

from stocker_assets.definitions.jobs import group_job
from stocker_assets.definitions.training import agent, checks, moderator

training_job = group_job("training_job", "the moderator (base, SFT, GRPO) and the tool-using agent's policy.")


def definitions() -> dg.Definitions:
    """What the training domain adds to the code location."""
    return dg.Definitions(
        assets=[
            moderator.moderator_base,
            moderator.moderator_grpo,
            moderator.moderator_sft,
            agent.agent_policy,
        ],
        asset_checks=checks.MODEL_CHECKS,
        jobs=[training_job],
    )
