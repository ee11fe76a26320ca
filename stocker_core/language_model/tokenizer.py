"""A word-level tokenizer: one token per word of a closed vocabulary it is given.

The moderator passes the words its grammar can produce (``prompts.vocabulary()``), the
agent its own; a prompt of those words never meets ``<unk>``. Building one takes
milliseconds and no data.
"""

from __future__ import annotations

from collections.abc import Iterable

from transformers import PreTrainedTokenizerFast

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIAL_TOKENS = [PAD, BOS, EOS, UNK]


def build_word_tokenizer(words: Iterable[str]) -> PreTrainedTokenizerFast:
    """A WordLevel tokenizer over ``words`` (in order, duplicates once) with specials
    ``<pad> <bos> <eos> <unk>``; prompts get ``<bos>`` prepended."""
    from tokenizers import Tokenizer, processors
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit

    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS)}
    for word in words:
        vocab.setdefault(word, len(vocab))
    core = Tokenizer(WordLevel(vocab, unk_token=UNK))
    core.pre_tokenizer = WhitespaceSplit()
    core.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A $B", special_tokens=[(BOS, vocab[BOS])]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        unk_token=UNK,
        padding_side="left",
        model_max_length=128,
    )
