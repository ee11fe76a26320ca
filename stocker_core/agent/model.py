"""The agent's language model: the tiny word-level Llama over the agent vocabulary, or a
chat model through the language-model floor's factory (``stocker_core.language_model.factory``:
``smollm2``, a Hub id or folder), and a ``ModelWriter`` that writes the next turn of many
traces at once.

Reused from ``stocker_core.language_model`` (the factory the moderator uses too): the word tokenizer
builder (``language_model.tokenizer``), device placement, the tiny Llama, the SmolLM2 / Hub loaders,
``save_base`` / ``load_base`` / ``load_with_adapter`` (``language_model.factory``). Separate here: the
tiny agent model itself (its own vocabulary and a longer context than the moderator's,
since a trace holds several turns). A Hub model is loaded in 4-bit when CUDA is present.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.parsing import DECISIONS
from stocker_core.agent.render import chat_messages, render_words, vocabulary
from stocker_core.agent.trace import Trace
from stocker_core.language_model.factory import SMOLLM2, TINY, LoadedModel
from stocker_core.text_events.masking import PromptMask

TINY_CONTEXT = 512
STOP_TAGS = ("</tool>", "</answer>")


def build_tiny_agent(config: AgentConfig) -> LoadedModel:
    """A small Llama over the agent vocabulary (sizes from ``config``), seeded."""
    from stocker_core.language_model.factory import device_and_dtype, tiny_llama
    from stocker_core.language_model.tokenizer import build_word_tokenizer

    tokenizer = build_word_tokenizer(vocabulary())
    tokenizer.model_max_length = TINY_CONTEXT
    model = tiny_llama(tokenizer, config.tiny_model_spec(), config.seed, context=TINY_CONTEXT)
    device, _ = device_and_dtype()
    return LoadedModel(model.to(device), tokenizer, TINY, "words", device)


def create_agent_base(config: AgentConfig) -> LoadedModel:
    """The untrained base named by ``config.model``: tiny (built), smollm2 or a Hub id/folder."""
    from stocker_core.language_model.factory import load_pretrained, load_smollm2

    if config.model == TINY:
        return build_tiny_agent(config)
    if config.model == SMOLLM2:
        return load_smollm2()
    return load_pretrained(config.model, load_in_4bit=True)


@dataclass(frozen=True)
class Segment:
    """A piece of a rendered trace; ``trainable`` for text the model wrote."""

    text: str
    trainable: bool


def trace_segments(
    loaded: LoadedModel,
    trace: Trace,
    tools: list[dict[str, Any]],
    max_calls: int,
    mask: PromptMask | None = None,
) -> list[Segment]:
    """``trace`` rendered for ``loaded`` as segments (context vs the model's own turns);
    chat models read it through ``mask`` when given, as ``ModelWriter(mask_for=...)`` does."""
    if loaded.prompt_style == "words":
        context = Trace(trace.ticker, trace.date, trace.policy, trace.turns[:1])
        segments = [Segment(render_words(context), False)]
        for i in range(1, len(trace.turns)):
            partial = Trace(trace.ticker, trace.date, trace.policy, trace.turns[: i + 1])
            before = Trace(trace.ticker, trace.date, trace.policy, trace.turns[:i])
            text = render_words(partial)[len(render_words(before)) :]
            segments.append(Segment(text, trace.turns[i].role == "assistant"))
        return segments
    messages = chat_messages(trace, tools, max_calls, mask)
    segments, previous = [], ""
    for k in range(1, len(messages) + 1):
        rendered = loaded.tokenizer.apply_chat_template(messages[:k], tokenize=False)
        segments.append(Segment(rendered[len(previous) :], messages[k - 1]["role"] == "assistant"))
        previous = rendered
    return segments


def prompt_text(
    loaded: LoadedModel,
    trace: Trace,
    tools: list[dict[str, Any]],
    max_calls: int,
    mask: PromptMask | None = None,
) -> str:
    """What the model reads before writing its next turn (chat models: through ``mask``;
    the tiny model's bucket words name no ticker, date or price)."""
    if loaded.prompt_style == "words":
        return render_words(trace)
    messages = chat_messages(trace, tools, max_calls, mask)
    return loaded.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def cut_at_stop(text: str) -> str:
    """``text`` up to and including the first closing ``</tool>`` or ``</answer>``."""
    ends = [text.find(tag) + len(tag) for tag in STOP_TAGS if tag in text]
    return text[: min(ends)] if ends else text


class ModelWriter:
    """Writes the next turn of each trace with a causal LM (a TurnWriter).

    Greedy by default (evaluation, policies); ``sample=True`` draws with ``temperature``
    (RL rollouts). Turns stop at ``</tool>`` or ``</answer>``.

    ``scored_answer`` (default: when not sampling) reads the decision as scored choices:
    a turn that opens ``<answer>`` — or the last turn allowed, whatever it wrote — gets
    the BUY/SELL/HOLD with the highest likelihood (``score_choices``), so the decision
    always parses. Sampled RL rollouts keep their own text. ``mask_for`` (trace -> mask)
    shows chat models masked prompts.
    """

    def __init__(
        self,
        loaded: LoadedModel,
        config: AgentConfig,
        sample: bool = False,
        batch_size: int = 64,
        scored_answer: bool | None = None,
        mask_for: Callable[[Trace], PromptMask] | None = None,
    ):
        from stocker_core.agent.tools import tool_schemas

        self.loaded, self.config, self.sample, self.batch_size = loaded, config, sample, batch_size
        self.scored_answer = not sample if scored_answer is None else scored_answer
        self.mask_for = mask_for
        self.tools = [] if loaded.prompt_style == "words" else tool_schemas()
        tokenizer = loaded.tokenizer
        self._stop_ids = None
        if loaded.prompt_style == "words":
            self._stop_ids = [tokenizer.eos_token_id, *tokenizer.convert_tokens_to_ids(list(STOP_TAGS))]

    def prompt(self, trace: Trace) -> str:
        """What the model reads before its next turn of ``trace``."""
        mask = self.mask_for(trace) if self.mask_for is not None else None
        return prompt_text(self.loaded, trace, self.tools, self.config.max_tool_calls, mask)

    def write(self, traces: Sequence[Trace]) -> list[str]:
        prompts = [self.prompt(t) for t in traces]
        out: list[str] = []
        for start in range(0, len(prompts), self.batch_size):
            out += self._generate(prompts[start : start + self.batch_size])
        if self.scored_answer:
            out = [self._scored(p, t, text) for p, t, text in zip(prompts, traces, out, strict=True)]
        return out

    def _scored(self, prompt: str, trace: Trace, text: str) -> str:
        """``text`` with its decision replaced by the most likely of BUY/SELL/HOLD when it
        opens an answer or is the last turn allowed; otherwise unchanged."""
        from stocker_core.language_model.choices import score_choices

        lower = text.lower()
        at = lower.find("<answer>")
        last_turn = sum(1 for turn in trace.turns if turn.role == "assistant") + 1 >= self.config.max_turns
        if at < 0 and not last_turn:
            return text
        words = self.loaded.prompt_style == "words"
        if at >= 0:
            head = text[: at + len("<answer>")]
        else:
            cut = lower.find("<tool>")
            head = (text[:cut] if cut >= 0 else text).rstrip() + (" <answer>" if words else "<answer>")
        tokenizer = self.loaded.tokenizer
        ids = tokenizer(prompt + (" " if words else "") + head, add_special_tokens=words)["input_ids"]
        answers = [f" {d} </answer>" if words else f"{d}</answer>" for d in DECISIONS]
        probabilities = score_choices(self.loaded.model, tokenizer, ids, answers)
        return head + answers[int(probabilities.argmax())]

    def _generate(self, prompts: list[str]) -> list[str]:
        import torch

        tokenizer, model = self.loaded.tokenizer, self.loaded.model
        tokenizer.padding_side = "left"
        words = self.loaded.prompt_style == "words"
        encoded = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=words)
        encoded.pop("token_type_ids", None)
        encoded = {k: v.to(self.loaded.device) for k, v in encoded.items()}
        kwargs: dict[str, Any] = {
            "max_new_tokens": self.config.max_new_tokens,
            "do_sample": self.sample,
            "pad_token_id": tokenizer.pad_token_id,
        }
        if self.sample:
            kwargs.update(temperature=self.config.temperature, top_k=0, top_p=1.0)
        if self._stop_ids is not None:
            kwargs["eos_token_id"] = self._stop_ids
        else:
            kwargs.update(stop_strings=list(STOP_TAGS), tokenizer=tokenizer)
        model.eval()
        with torch.no_grad():
            generated = model.generate(**encoded, **kwargs)
        new = generated[:, encoded["input_ids"].shape[1] :]
        texts = tokenizer.batch_decode(new, skip_special_tokens=True)
        return [cut_at_stop(t).strip() for t in texts]
