"""Backends that turn a DecisionContext into a vote, selected by configuration."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

from stocker_core.context.decision import DecisionContext
from stocker_core.council.analysts import RULES_VERSION, rule_vote
from stocker_core.council.config import BackendName, CouncilSettings
from stocker_core.council.llm import ChatClient, decision_day, user_text
from stocker_core.council.models import SpecialistVote
from stocker_core.council.parsing import parse_vote
from stocker_core.council.roles import ROLES
from stocker_core.errors import InvalidNameError


@dataclass(frozen=True)
class VoteResult:
    """A vote and whether it may be cached (transport failures are not)."""

    vote: SpecialistVote
    cacheable: bool = True


class Backend(Protocol):
    """Votes for one role on one day."""

    name: str
    model_id: str

    def prompt_version(self, role: str) -> str:
        """Version of what this backend asks ``role`` (part of the cache key)."""
        ...

    def vote(self, role: str, ctx: DecisionContext) -> VoteResult:
        """The vote of ``role``; never raises for a bad model reply."""
        ...


class RuleBackend:
    """Deterministic rule analysts (offline)."""

    name = "rule"
    model_id = RULES_VERSION
    io_bound = False  # pure-Python quant rules: threads would only fight over the GIL

    def prompt_version(self, role: str) -> str:
        return hashlib.sha256(f"{RULES_VERSION}:{role}".encode()).hexdigest()[:12]

    def vote(self, role: str, ctx: DecisionContext) -> VoteResult:
        return VoteResult(rule_vote(role, ctx))


class LLMBackend:
    """A chat model answering each role's prompt; replies parsed robustly."""

    def __init__(self, client: ChatClient, name: str = "openai") -> None:
        self.client = client
        self.name = name
        self.model_id = client.model_id

    def prompt_version(self, role: str) -> str:
        return ROLES[role].prompt_version

    def vote(self, role: str, ctx: DecisionContext) -> VoteResult:
        spec = ROLES[role]
        message = spec.build(ctx)
        text = user_text(
            message.text,
            message.image_path,
            self.client.supports_images,
            image_expected=role == "chart_pattern",
        )
        image = message.image_path if self.client.supports_images else None
        try:
            with decision_day(f"{ctx.ticker} {ctx.date:%Y-%m-%d}"):  # the day's calls share one budget
                reply = self.client.complete(spec.system_prompt, text, image)
        except Exception as exc:  # never crash a run on a failed call
            return VoteResult(
                SpecialistVote.neutral(role, f"model call failed: {exc}"[:500], parse_error=True),
                cacheable=False,
            )
        return VoteResult(parse_vote(reply, role))


def get_chat_client(settings: CouncilSettings, name: str) -> ChatClient:
    """The chat client of an LLM backend (``openai`` or ``transformers``)."""
    if name == "openai":
        from stocker_core.council.llm import OpenAIChatClient

        return OpenAIChatClient(
            settings.openai_base_url,
            settings.openai_model,
            settings.openai_api_key,
            timeout_s=settings.llm_timeout_s,
            retries=settings.llm_retries,
            backoff_s=settings.llm_backoff_s,
            concurrency=settings.llm_concurrency,
            max_tokens=settings.llm_max_tokens,
            temperature=settings.llm_temperature,
            supports_images=settings.openai_multimodal,
        )
    if name == "transformers":
        from stocker_core.council.llm import TransformersClient

        if not settings.hf_model:
            raise InvalidNameError(
                "the transformers backend needs STOCKER_HF_MODEL (a local model folder or a Hub id)"
            )
        return TransformersClient(
            settings.hf_model,
            settings.hf_adapter,
            max_new_tokens=settings.llm_max_tokens,
            temperature=settings.llm_temperature,
            load_in_4bit=settings.hf_load_in_4bit,
            multimodal=settings.hf_multimodal,
        )
    raise InvalidNameError(f"unknown council backend {name!r}: use rule, openai or transformers")


def get_backend(settings: CouncilSettings | None = None, name: BackendName | str | None = None) -> Backend:
    """The backend named by ``name`` or ``STOCKER_COUNCIL_BACKEND`` (rule|openai|transformers)."""
    settings = settings or CouncilSettings()
    name = name or settings.council_backend
    if name == "rule":
        return RuleBackend()
    return LLMBackend(get_chat_client(settings, name), name)


def get_moderator(settings: CouncilSettings | None = None, cost_rate: float = 0.001):
    """``STOCKER_COUNCIL_MODERATOR``: ``rule`` (default) or ``llm`` — the LLM backend's
    client (``STOCKER_COUNCIL_BACKEND`` openai/transformers) as moderator."""
    from stocker_core.council.moderator import LLMModerator, RuleModerator

    settings = settings or CouncilSettings()
    if settings.council_moderator == "rule":
        return RuleModerator()
    backend = settings.council_backend if settings.council_backend != "rule" else "openai"
    return LLMModerator(get_chat_client(settings, backend), cost_rate=cost_rate)
