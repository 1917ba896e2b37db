"""The language a question is written in, against the languages the model reads.

Identified with py3langid (a maintained fork of langid.py, its model inside the package) over the
question's words, with identifiers (``snake_case``, ``camelCase``, ``dotted.names``) left out: they
are the corpus's words, not the asker's language. A question too short to tell, or told with low
confidence, gets no verdict rather than a wrong one: a real question in another language then keeps
its noise verdict, which is the lesser error.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raglens.model_languages import ModelLanguages, language_name

MIN_WORDS = 3
"""Fewer words than this (after identifiers are left out) are too few to tell a language from."""
MIN_CONFIDENCE_LATIN = 0.8
"""The identifier's normalised probability a language needs for a question in Latin script. English
keyword queries reach up to 0.51 for another language ("message queue dead letter" reads as French
at 0.514); questions in German, Spanish, French, Portuguese, Dutch, Polish and Turkish reach 0.84-1.0
for their own (tests/unit/diagnostics/test_question_language.py holds every one); an Italian question
at 0.72 and a Turkish one at 0.52 fall short and keep their noise verdict, the lesser error."""
MIN_CONFIDENCE_OTHER_SCRIPT = 0.5
"""For a question whose prose letters are mostly beyond Latin script (Cyrillic, Greek, CJK…): no
English question's are, and Russian or Chinese questions of three words reach only 0.51-0.59."""

LATIN_END = 0x024F
"""The last code point of Latin Extended-B: letters past it are another script's."""
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
_tables_in: Path | None = None
"""The cache folder the identifier's tables are kept in when it is first loaded."""


def keep_tables_in(cache_dir: Path | None) -> None:
    """Keep the identifier's tables in ``cache_dir`` (None: held in memory, the library's way) when it
    is first loaded, whoever asks: the explorer's worker, or the CLI's first question long enough to
    check (not ``search make_context``)."""
    global _tables_in
    _tables_in = cache_dir


def load_identifier() -> Any:
    """py3langid's identifier with normalised probabilities, loaded once: over its tables kept in the
    folder :func:`keep_tables_in` named (~5 MiB resident, opened in milliseconds), else the library's
    way (~75 MiB, ~0.7 s).

    The first load decides for the process: a folder named later is not looked at. The explorer loads
    it in a worker of its own after the first frame, and nothing asks before it is ready
    (:func:`identifier_ready`); the CLI loads it when a question is first checked.
    """
    global _loaded
    with _loading:
        if _loaded is None:
            from raglens.diagnostics.language_tables import identifier_from_tables

            _loaded = identifier_from_tables(_tables_in)
    return _loaded


def identifier_ready() -> bool:
    """Whether the identifier is loaded, so asking costs ~0.5 ms, not the load."""
    return _loaded is not None


def prose_words(question: str) -> list[str]:
    """The question's words that are not identifiers and hold a letter or digit (a sentence's last
    full stop or a trailing comma is punctuation, not a dotted name)."""
    words = (word.rstrip(".,;:!?)\"'") for word in question.split())
    return [word for word in words if _WORD.search(word) and not _IDENTIFIER.search(word)]


def checks_language(model: ModelLanguages | None) -> bool:
    """Whether questions to ``model`` are checked for their language: not for a model of unknown or
    many languages (nothing to warn about), so the identifier is not loaded for one."""
    return model is not None and model.codes is not None


def question_language(question: str, model: ModelLanguages | None) -> QuestionLanguage | None:
    """The language ``question`` is written in, with the model's; None when either is not known."""
    if model is None or not checks_language(model):
        return None
    words = prose_words(question)
    if len(words) < MIN_WORDS and not _WIDE_SCRIPT.search(question):
        return None
    try:
        code, confidence = load_identifier().classify(" ".join(words))
    except (OSError, IndexError):  # its tables' files failed under it (a disk error, a file cut short)
        return None  # no verdict: the lesser error
    letters = [letter for word in words for letter in word if letter.isalpha()]
    beyond = sum(ord(letter) > LATIN_END for letter in letters)
    other_script = bool(letters) and beyond * 2 > len(letters)  # mostly another script; a λ is not
    if confidence < (MIN_CONFIDENCE_OTHER_SCRIPT if other_script else MIN_CONFIDENCE_LATIN):
        return None
    return QuestionLanguage(str(code), float(confidence), model)
