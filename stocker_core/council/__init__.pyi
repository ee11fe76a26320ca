"""The public names of ``stocker_core.council``, imported on first use (``__init__.py``)."""

from .analysts import rule_vote as rule_vote
from .backends import (
    Backend as Backend,
    RuleBackend as RuleBackend,
    LLMBackend as LLMBackend,
    get_backend as get_backend,
    get_moderator as get_moderator,
)
from .cache import VoteCache as VoteCache
from .models import SpecialistVote as SpecialistVote, CouncilDecision as CouncilDecision
from .vote_moderators import (
    Moderator as Moderator,
    RuleModerator as RuleModerator,
    LLMModerator as LLMModerator,
)
from .parsing import parse_vote as parse_vote
from .policy import CouncilPolicy as CouncilPolicy
from .roles import Role as Role
from .voting import Council as Council, run_votes as run_votes
