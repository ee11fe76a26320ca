"""Backends that turn a DecisionContext into a vote, selected by configuration."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from stocker_core.config import Settings
from stocker_core.council.analysts import RULE_REVISIONS, RULES_VERSION, rule_vote
from stocker_core.council.models import SpecialistVote
from stocker_core.council.parsing import parse_vote
from stocker_core.council.roles import OUTPUT_RULES, ROLES, prompt_mask
from stocker_core.decision_context.decision import DecisionContext
from stocker_core.errors import InvalidNameError
from stocker_core.language_model.choices import confidence_of, expected_value
from stocker_core.language_model.clients import ChatClient, LLMRejected, decision_day, user_text
from stocker_core.settings.council import BackendName


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
        revision = RULE_REVISIONS.get(role)
        key = f"{RULES_VERSION}:{role}" + (f":r{revision}" if revision else "")
        return hashlib.sha256(key.encode()).hexdigest()[:12]

    def vote(self, role: str, ctx: DecisionContext) -> VoteResult:
        return VoteResult(rule_vote(role, ctx))


VOTE_PREFIX = '{"signal":'
"""What the assistant's reply starts with before a vote is scored."""
VOTE_VALUES = (-1.0, -0.5, 0.0, 0.5, 1.0)
VOTE_ANSWERS = (" -1,", " -0.5,", " 0,", " 0.5,", " 1,")
"""The vote answers as continuations of ``VOTE_PREFIX`` (the comma keeps them prefix-free)."""
VOTE_SCHEMA = {
    "type": "object",
    "properties": {
        "signal": {"type": "number", "minimum": -1, "maximum": 1},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "rationale": {"type": "string"},
    },
    "required": ["signal", "confidence", "rationale"],
    "additionalProperties": False,
}
"""The vote as a JSON schema (structured output of OpenAI-compatible servers)."""
VOTE_LETTERS = ("A", "B", "C", "D", "E")
LETTER_RULES = (
    "Answer with one capital letter and nothing else: A strong sell (-1), B sell (-0.5), "
    "C neutral (0), D buy (+0.5), E strong buy (+1). You only see data up to the decision "
    "date; never assume anything later. If your data is missing, answer C."
)
STRUCTURED_ORDER = {
    "auto": ("json_schema", "logprobs"),
    "json_schema": ("json_schema",),
    "logprobs": ("logprobs",),
    "off": (),
}


def scored_vote(role: str, probabilities: Sequence[float], rationale: str | None = None) -> SpecialistVote:
    """A vote from a distribution over ``VOTE_VALUES``: the signal is the
    probability-weighted answer, the confidence 1 − normalised entropy (``confidence_of``)."""
    p = [float(x) for x in probabilities]
    shown = "/".join(f"{x:.2f}" for x in p)
    return SpecialistVote(
        role=role,
        signal=expected_value(p, VOTE_VALUES),
        confidence=confidence_of(p),
        rationale=rationale or f"scored answers -1/-0.5/0/+0.5/+1: p = {shown}",
    )


def letter_distribution(logprobs: dict[str, float]) -> list[float] | None:
    """Probabilities of A..E from first-token candidates (renormalised over the letters
    found); None when no candidate is a letter."""
    mass = dict.fromkeys(VOTE_LETTERS, 0.0)
    for token, logprob in logprobs.items():
        letter = token.strip().upper()
        if letter in mass and math.isfinite(logprob):
            mass[letter] += math.exp(logprob)
    total = sum(mass.values())
    return [mass[k] / total for k in VOTE_LETTERS] if total > 0 else None


class LLMBackend:
    """A chat model answering each role's prompt, with prompts masked by default.

    ``mode="scored"`` (default): a ``transformers`` model's vote is read from its
    distribution over the answers -1, -0.5, 0, 0.5, 1 (``score_choices``; cannot fail to
    parse; a rationale is generated only with ``rationale=True``); an OpenAI-compatible
    endpoint is asked for structured output (``json_schema``), else for the first token's
    ``logprobs`` over the letters A..E, else for text that is parsed. ``mode="free"``:
    generate text and parse it (the old way, kept for comparison).
    """

    def __init__(
        self,
        client: ChatClient,
        name: str = "openai",
        *,
        mode: str = "scored",
        mask: bool = True,
        rationale: bool = False,
        structured: str = "auto",
    ) -> None:
        self.client = client
        self.name = name
        self.model_id = client.model_id
        self.mode, self.mask, self.rationale = mode, mask, rationale
        self.structured = STRUCTURED_ORDER.get(structured, STRUCTURED_ORDER["auto"])
        self.unsupported: set[str] = set()  # structured methods the endpoint refused

    def _how(self) -> str:
        """How this backend asks: part of the cache key."""
        if self.mode != "scored":
            return "free"
        if hasattr(self.client, "score"):
            return "scored+rationale" if self.rationale else "scored"
        return "structured:" + ",".join(self.structured)

    def prompt_version(self, role: str) -> str:
        images = int(self.client.supports_images) if role == "chart_pattern" else 0
        key = f"{ROLES[role].prompt_version}:{self._how()}:mask={int(self.mask)}:img={images}"
        return hashlib.sha256(key.encode()).hexdigest()[:12]

    def prompts(self, role: str, ctx: DecisionContext) -> dict[str, Any]:
        """What this backend sends for ``role`` on ``ctx``: system and user text, and the
        chart image's path when one is attached."""
        spec = ROLES[role]
        message = spec.build(ctx, prompt_mask(ctx, self.mask))
        text = user_text(
            message.text,
            message.image_path,
            self.client.supports_images,
            image_expected=role == "chart_pattern",
        )
        image = message.image_path if self.client.supports_images else None
        sent = {
            "role": role,
            "system": spec.system_prompt,
            "user": text,
            "image": str(image) if image else None,
        }
        method = self._next_structured()
        if method == "logprobs":
            sent["system"] = spec.system_prompt.replace(OUTPUT_RULES, LETTER_RULES)
        if method:
            sent["structured"] = method
        return sent

    def _next_structured(self) -> str | None:
        """The structured method the next OpenAI-compatible request will try (None: text,
        or a client that scores)."""
        if self.mode != "scored" or hasattr(self.client, "score"):
            return None
        return next((m for m in self.structured if m not in self.unsupported), None)

    def vote(self, role: str, ctx: DecisionContext) -> VoteResult:
        sent = self.prompts(role, ctx)
        system, text = ROLES[role].system_prompt, sent["user"]  # _structured swaps in the letter rules
        image = Path(sent["image"]) if sent["image"] else None
        try:
            with decision_day(f"{ctx.ticker} {ctx.date:%Y-%m-%d}"):  # the day's calls share one budget
                if self.mode == "scored" and hasattr(self.client, "score") and image is None:
                    return VoteResult(self._scored(role, system, text))  # an image goes to generate()
                if self.mode == "scored":
                    vote = self._structured(role, system, text, image)
                    if vote is not None:
                        return VoteResult(vote)
                reply = self.client.complete(system, text, image)
        except Exception as exc:  # never crash a run on a failed call
            return VoteResult(
                SpecialistVote.neutral(role, f"model call failed: {exc}"[:500], parse_error=True),
                cacheable=False,
            )
        return VoteResult(parse_vote(reply, role))

    def _scored(self, role: str, system: str, text: str) -> SpecialistVote:
        probabilities = self.client.score(system, text, VOTE_PREFIX, VOTE_ANSWERS)
        vote = scored_vote(role, probabilities)
        if not self.rationale:
            return vote
        best = VOTE_ANSWERS[int(max(range(len(probabilities)), key=lambda i: probabilities[i]))]
        prefix = f'{VOTE_PREFIX}{best} "confidence": {vote.confidence:.2f}, "rationale": "'
        reply = self.client.complete(system, text, None, prefix=prefix)
        rationale = reply.split('"', 1)[0].strip()
        return vote.model_copy(update={"rationale": rationale[:2000] or vote.rationale})

    def _structured(self, role: str, system: str, text: str, image: Path | None) -> SpecialistVote | None:
        """A vote through the first structured method the endpoint accepts; None if none does."""
        for method in self.structured:
            if method in self.unsupported:
                continue
            try:
                if method == "json_schema":
                    reply = self.client.complete_schema(system, text, image, "vote", VOTE_SCHEMA)
                    vote = parse_vote(reply, role)
                    if not vote.parse_error:
                        return vote
                else:
                    letters = system.replace(OUTPUT_RULES, LETTER_RULES)
                    distribution = letter_distribution(self.client.first_token_logprobs(letters, text, image))
                    if distribution is not None:
                        return scored_vote(role, distribution)
            except LLMRejected:
                pass
            self.unsupported.add(method)  # refused, or answered without it: do not ask again
        return None


def get_chat_client(settings: Settings, name: str) -> ChatClient:
    """The chat client of an LLM backend (``openai`` or ``transformers``)."""
    if name == "openai":
        from stocker_core.language_model.clients import OpenAIChatClient

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
            supports_images=settings.openai_multimodal or settings.vision,
        )
    if name == "transformers":
        from stocker_core.language_model.clients import TransformersClient

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
            multimodal=settings.hf_multimodal or settings.vision,
        )
    raise InvalidNameError(f"unknown council backend {name!r}: use rule, openai or transformers")


def get_backend(settings: Settings | None = None, name: BackendName | str | None = None) -> Backend:
    """The backend named by ``name`` or ``STOCKER_COUNCIL_BACKEND`` (rule|openai|transformers)."""
    settings = settings or Settings()
    name = name or settings.council_backend
    if name == "rule":
        return RuleBackend()
    return LLMBackend(
        get_chat_client(settings, name),
        name,
        mode=settings.llm_mode,
        mask=settings.llm_mask,
        rationale=settings.llm_rationale,
        structured=settings.openai_structured,
    )


def get_moderator(settings: Settings | None = None, cost_rate: float = 0.001):
    """``STOCKER_COUNCIL_MODERATOR``: ``rule`` (default) or ``llm`` — the LLM backend's
    client (``STOCKER_COUNCIL_BACKEND`` openai/transformers) as moderator."""
    from stocker_core.council.vote_moderators import LLMModerator, RuleModerator

    settings = settings or Settings()
    if settings.council_moderator == "rule":
        return RuleModerator()
    backend = settings.council_backend if settings.council_backend != "rule" else "openai"
    return LLMModerator(
        get_chat_client(settings, backend),
        cost_rate=cost_rate,
        masked=settings.llm_mask,
        mode=settings.llm_mode,
    )
