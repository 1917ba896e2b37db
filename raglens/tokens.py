"""Count a model's tokens with its own tokenizer.json, without loading the model or torch.

Used for reading extents (how much of a window the model reads), coverage and prompt sizes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from raglens.embedding import reading_extent
from raglens.embedding_events import ReadingExtent
from raglens.errors import ModelLoadError


def load_tokenizer(folder: Path, name: str) -> Any:
    """The ``tokenizers`` tokenizer in ``folder``, with padding and truncation off.

    The bundled tokenizer.json pads and truncates to a fixed 128 tokens, which is not what the model
    does (it reads 256): both are undone here, and callers cut where the model does.
    """
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    except Exception as error:  # tokenizers raises its own exception type
        raise ModelLoadError(f"cannot load the tokenizer of {name}: {error}") from error
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


class TokenCounter:
    """How many tokens texts have for one model, and how much of each the model reads."""

    def __init__(self, folder: Path, name: str, max_seq_length: int | None) -> None:
        self._tokenizer = load_tokenizer(folder, name)
        self.max_seq_length = max_seq_length
        """The model's token limit including its special tokens, or None when it reads everything."""
        self._special = int(self._tokenizer.num_special_tokens_to_add(False))

    @property
    def content_limit(self) -> int | None:
        """Tokens of text the model reads, once its special tokens are counted."""
        return None if self.max_seq_length is None else self.max_seq_length - self._special

    def count(self, text: str) -> int:
        """Tokens of ``text`` without special tokens."""
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def reading_extents(self, texts: Sequence[str]) -> list[ReadingExtent]:
        """For each text, its token count and how many of its characters the model reads."""
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [
            reading_extent(len(text), len(encoding), _token_end_in(encoding), self.content_limit)
            for text, encoding in zip(texts, encodings, strict=True)
        ]


def _token_end_in(encoding: Any) -> Callable[[int], int]:
    """Where token ``i`` of ``encoding`` ends, in characters (a ``tokenizers.Encoding``)."""
    return lambda token: int(encoding.token_to_chars(token)[1])
