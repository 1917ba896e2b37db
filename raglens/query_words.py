"""Where a query's words occur in a window's text, to mark them in a hit's preview.

Naive RAG ranks by the embedding alone; marking the query's words shows the reader which part of
a raw window may have made it rank, and that a hit with none of them ranked on meaning (or noise).
"""

from __future__ import annotations

import re

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "do",
        "does",
        "did",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "so",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
MIN_STEM = 3
"""Shorter stems (``go``, ``is``) would mark half of every window."""
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SUFFIXES = ("ing", "es", "ed", "s")


def _stems(word: str) -> set[str]:
    """``word`` without one common English ending, kept at least MIN_STEM long.

    ``retried`` and ``retries`` give ``retry`` and ``retri``, so both ``retrying`` and ``retried``
    are marked; ``jobs`` gives ``job``.
    """
    if word.endswith(("ies", "ied")) and len(word) - 3 >= MIN_STEM:
        return {word[:-3] + "y", word[:-3] + "i"}
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            return {word[: -len(suffix)]}
    return {word}


def query_stems(query: str) -> tuple[str, ...]:
    """The casefolded stems of ``query``'s words worth marking, each once, longest first.

    Identifiers are split at ``_`` and case is ignored, so ``drain_pending_jobs`` marks ``drain``,
    ``pend`` and ``job`` wherever they start a word.
    """
    stems = {
        stem
        for word in _WORD.findall(query.casefold())
        if word not in STOPWORDS and len(word) >= MIN_STEM
        for stem in _stems(word)
    }
    return tuple(sorted(stems, key=lambda stem: (-len(stem), stem)))


def word_spans(text: str, stems: tuple[str, ...]) -> list[tuple[int, int]]:
    """Sorted, disjoint ``(start, end)`` spans of ``text`` where a word starts with one of ``stems``.

    A word starts after anything that is not a letter or digit (``_`` included, so ``shell_completion``
    holds the word ``completion``); a span runs to the end of that word.
    """
    if not stems or not text:
        return []
    alternatives = "|".join(re.escape(stem) for stem in stems)
    pattern = re.compile(rf"(?<![^\W_])(?:{alternatives})[^\W_]*", re.IGNORECASE)
    return [match.span() for match in pattern.finditer(text) if _casefold_starts(match.group(), stems)]


def _casefold_starts(word: str, stems: tuple[str, ...]) -> bool:
    """Whether ``word`` starts with a stem under full case folding (IGNORECASE folds one char at a time)."""
    folded = word.casefold()
    return any(folded.startswith(stem) for stem in stems)
