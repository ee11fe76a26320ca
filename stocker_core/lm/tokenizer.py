"""The tiny moderator's word-level tokenizer: one token per bucket word, built from the grammar.

The vocabulary is the closed set of words ``prompts.vocabulary()`` can produce, so
no prompt ever meets ``<unk>``; building it takes milliseconds and no data.
"""

from __future__ import annotations

from transformers import PreTrainedTokenizerFast

from stocker_core.training.prompts import vocabulary

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIAL_TOKENS = [PAD, BOS, EOS, UNK]


def build_word_tokenizer(words: list[str] | None = None) -> PreTrainedTokenizerFast:
    """A WordLevel tokenizer over ``words`` (default: the moderator grammar) with specials
    ``<pad> <bos> <eos> <unk>``; prompts get ``<bos>`` prepended."""
    from tokenizers import Tokenizer, processors
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit

    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS)}
    for word in words if words is not None else vocabulary():
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
