"""The token counter reads reading extents from the tokenizer's encodings without listing offsets."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from raglens.embedding import extent_from_offsets
from raglens.embedding_events import DEFAULT_MODEL_NAME
from raglens.fingerprint import max_seq_length_of, model_folder
from raglens.tokens import TokenCounter, load_tokenizer

FOLDER = model_folder(None)
assert FOLDER is not None, "the bundled model's tokenizer ships with the package"
COUNTER = TokenCounter(FOLDER, DEFAULT_MODEL_NAME, max_seq_length_of(FOLDER))
TOKENIZER = load_tokenizer(FOLDER, DEFAULT_MODEL_NAME)

WORDS = st.sampled_from(
    [
        "def",
        "retry",
        "Jobs",
        "naïve",
        "東京",
        "self.__init__",
        "  ",
        "\n",
        "x" * 120,
        "é",
        "🙂",
        "(",
        "=",
        "42",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(WORDS, max_size=400).map("".join), min_size=1, max_size=6))
def test_each_extent_is_the_one_its_full_offsets_give(texts: list[str]) -> None:
    """Oracle: the extent computed from every token's offsets, as before only the last read one was asked."""
    limit = COUNTER.content_limit
    expected = [
        extent_from_offsets(text, TOKENIZER.encode(text, add_special_tokens=False).offsets, limit)
        for text in texts
    ]
    assert COUNTER.reading_extents(texts) == expected


def test_a_text_past_the_limit_is_read_up_to_the_limit_s_last_token() -> None:
    limit = COUNTER.content_limit
    assert limit is not None
    text = "word " * (limit + 50)
    [extent] = COUNTER.reading_extents([text])
    assert extent.token_count == limit + 50
    assert extent.chars_read == len("word " * limit) - 1, "the last read token ends before its space"


def test_a_limit_with_room_for_the_special_tokens_only_reads_nothing() -> None:
    """``--max-seq-length 2``: [CLS] and [SEP] take both places, and no character of the text is read."""
    counter = TokenCounter(FOLDER, DEFAULT_MODEL_NAME, 2)
    assert counter.content_limit == 0
    [extent] = counter.reading_extents(["some words the model never reads"])
    assert extent.chars_read == 0 and extent.token_count > 0
    assert counter.reading_extents([""])[0].chars_read == 0
