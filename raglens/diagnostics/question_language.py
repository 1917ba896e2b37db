"""The language a question is written in, against the languages the model reads.

Identified with py3langid (a maintained fork of langid.py, its model inside the package) over the
question's words, with identifiers (``snake_case``, ``camelCase``, ``dotted.names``) left out: they
are the corpus's words, not the asker's language. A question too short to tell, or told with low
confidence, gets no verdict rather than a wrong one.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from raglens.model_languages import ModelLanguages, language_name

MIN_WORDS = 3
"""Fewer words than this (after identifiers are left out) are too few to tell a language from."""
MIN_CONFIDENCE = 0.5
"""The identifier's normalised probability a language needs. Measured on 45 English questions (the
golden sets' and typical developer questions): none reached it for another language; 12 questions in
eight other languages reached 0.51-1.0 for their own (tests/unit/diagnostics/test_question_language.py)."""

_IDENTIFIER = re.compile(r"[_./\\\d]|[a-z][A-Z]")
_WORD = re.compile(r"\w", re.UNICODE)
_WIDE_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
"""Kana, CJK ideographs and Hangul: a question in them has no spaces to count words by."""


@dataclass(frozen=True)
class QuestionLanguage:
    """The language a question reads as, and whether the model reads it."""

    code: str
    confidence: float
    model: ModelLanguages

    @property
    def model_reads_it(self) -> bool:
        return self.model.reads(self.code)

    def describe(self) -> str:
        """E.g. ``the question reads as Turkish; the model reads English only``."""
        return f"the question reads as {language_name(self.code)}; the model reads {self.model.describe()}"


_loaded: Any = None
_loading = threading.Lock()


def load_identifier() -> Any:
    """py3langid's identifier with normalised probabilities, loaded once (~0.7 s with its import).

    The explorer loads it in a worker at start-up, beside the control questions, so no ranking waits
    for it (:func:`identifier_ready`); the CLI loads it when it first asks.
    """
    global _loaded
    with _loading:
        if _loaded is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier  # type: ignore[import-untyped]

            _loaded = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return _loaded


def identifier_ready() -> bool:
    """Whether the identifier is loaded, so asking costs ~0.5 ms, not the load."""
    return _loaded is not None


def prose_words(question: str) -> list[str]:
    """The question's words that are not identifiers and hold a letter or digit."""
    return [word for word in question.split() if _WORD.search(word) and not _IDENTIFIER.search(word)]


def question_language(question: str, model: ModelLanguages | None) -> QuestionLanguage | None:
    """The language ``question`` is written in, with the model's; None when either is not known."""
    if model is None or model.codes is None:
        return None  # a model of unknown or many languages: nothing to warn about
    words = prose_words(question)
    if len(words) < MIN_WORDS and not _WIDE_SCRIPT.search(question):
        return None
    code, confidence = load_identifier().classify(" ".join(words))
    if confidence < MIN_CONFIDENCE:
        return None
    return QuestionLanguage(str(code), float(confidence), model)
