"""Which languages an embedding model reads: from its model card, else from a table of known names.

A question in a language the model was not trained on is matched by shared tokens and names, not by
meaning; its scores say nothing about whether the corpus answers it. raglens says so instead of
printing a noise verdict for it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

MULTILINGUAL_HINTS = ("multilingual", "labse", "xlm", "bge-m3", "distiluse", "-m3")
"""Parts of a model's name that say it reads many languages."""

_ENGLISH_ONLY_NAMES = re.compile(
    r"(^|/)(all-(minilm|mpnet|distilroberta)|multi-qa-|msmarco-|paraphrase-(minilm|mpnet|albert)|"
    r"bge-(small|base|large)-en|e5-(small|base|large)(-v2)?$|gte-(small|base|large)$|nomic-embed-text(-v1(\.5)?)?$)",
    re.IGNORECASE,
)
"""Widely used sentence-transformers models trained on English only (their cards say ``language: en``)."""


@dataclass(frozen=True)
class ModelLanguages:
    """The ISO 639-1 codes a model reads (None: many, a multilingual model), and where that was read."""

    codes: frozenset[str] | None
    source: str
    """``model card``, ``its name``: how raglens knows."""

    def reads(self, code: str) -> bool:
        return self.codes is None or code in self.codes

    def describe(self) -> str:
        """E.g. ``English only`` or ``many languages``."""
        if self.codes is None:
            return "many languages"
        names = ", ".join(sorted(language_name(code) for code in self.codes))
        return f"{names} only" if len(self.codes) == 1 else names


LANGUAGE_NAMES = {
    "af": "Afrikaans", "ar": "Arabic", "bg": "Bulgarian", "bn": "Bengali", "ca": "Catalan",
    "cs": "Czech", "da": "Danish", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
    "et": "Estonian", "fa": "Persian", "fi": "Finnish", "fr": "French", "he": "Hebrew", "hi": "Hindi",
    "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian", "it": "Italian", "ja": "Japanese",
    "ko": "Korean", "lt": "Lithuanian", "lv": "Latvian", "nl": "Dutch", "no": "Norwegian",
    "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak",
    "sl": "Slovenian", "sr": "Serbian", "sv": "Swedish", "th": "Thai", "tr": "Turkish",
    "uk": "Ukrainian", "vi": "Vietnamese", "zh": "Chinese",
}  # fmt: skip


def language_name(code: str) -> str:
    """The English name of an ISO 639-1 code, or the code itself where raglens has no name for it."""
    return LANGUAGE_NAMES.get(code, code)


def card_languages(card_text: str) -> frozenset[str] | None:
    """The ``language:`` of a model card's YAML front matter (a code or a list of codes); None if absent."""
    if not card_text.startswith("---"):
        return None
    front, _, _ = card_text[3:].partition("\n---")
    codes: list[str] = []
    in_list = False
    for line in front.splitlines():
        if in_list and (item := re.match(r"^\s*-\s*['\"]?([A-Za-z-]+)", line)):
            codes.append(item[1])
            continue
        in_list = False
        if (entry := re.match(r"^language:\s*(.*)$", line)) is not None:
            value = entry[1].strip().strip("'\"")
            if value.startswith("["):
                codes += [part.strip(" '\"") for part in value.strip("[]").split(",") if part.strip()]
            elif value:
                codes.append(value)
            else:
                in_list = True
    return frozenset(code.lower() for code in codes) if codes else None


def _card_of(model: str | None) -> str | None:
    """The text of the model's card where it is on this machine: bundled, a folder, or the HF cache."""
    candidates: list[Path] = []
    if model is None:
        from raglens.embedding import default_model_path
        from raglens.errors import ModelLoadError

        try:
            candidates.append(default_model_path() / "README.md")
        except ModelLoadError:
            return None
    elif Path(model).expanduser().is_dir():
        candidates.append(Path(model).expanduser() / "README.md")
    else:
        try:
            from huggingface_hub import try_to_load_from_cache

            repo = model if "/" in model else f"sentence-transformers/{model}"
            found = try_to_load_from_cache(repo, "README.md")
            if isinstance(found, str):
                candidates.append(Path(found))
        except (ImportError, ValueError):
            pass
    for path in candidates:
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return None


def languages_of(model: str | None, embedder_factory: str | None) -> ModelLanguages | None:
    """What the model a run uses reads: unknown for a stand-in built by a factory (tests' fakes)."""
    return None if embedder_factory is not None else model_languages(model)


@functools.lru_cache(maxsize=16)
def model_languages(model: str | None) -> ModelLanguages | None:
    """What ``model`` (a name or folder; None: the bundled all-MiniLM-L6-v2) reads; None if unknown."""
    card = _card_of(model)
    codes = card_languages(card) if card is not None else None
    if codes is not None:
        many = len(codes) > 3 or "multilingual" in codes
        return ModelLanguages(None if many else codes, "model card")
    name = model or "all-MiniLM-L6-v2"
    if any(hint in name.lower() for hint in MULTILINGUAL_HINTS):
        return ModelLanguages(None, "its name")
    if _ENGLISH_ONLY_NAMES.search(name):
        return ModelLanguages(frozenset({"en"}), "its name")
    return None
