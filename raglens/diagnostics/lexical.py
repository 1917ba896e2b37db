"""Literal matches: which hits contain the query's words or identifiers, and where an identifier occurs.

Embeddings cannot do identity: a window that holds ``iter_source_files`` verbatim may rank 40th.
These functions find the literal truth to put beside the dense ranking.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from raglens.corpus import FileTexts
from raglens.printable import printable_name
from raglens.search import SearchResult, ranks_of, score_of
from raglens.windows import Window, as_columns

_TOKEN = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)*")
_SPACES = re.compile(r"\s+")
RANKS_SHOWN = 12
"""An identifier in hundreds of windows lists the best ranks and the worst; JSON keeps every one."""
QUOTE_MIN_CHARACTERS = 12
"""A query shorter than this is not marked as quoted: a single common word is in many windows."""


def looks_like_identifier(token: str) -> bool:
    """Whether ``token`` reads as code: snake_case, camelCase, dotted, or letters with digits."""
    if not _TOKEN.fullmatch(token):
        return False
    core = token.strip("_$")
    return (
        "_" in core
        or any(separator in token for separator in (".", "::", "->"))
        or bool(re.search(r"[a-z][A-Z]", token))
        or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token))
    )


def identifier_tokens(query: str) -> list[str]:
    """The identifier-like tokens of ``query``, in order, each once."""
    seen: dict[str, None] = {}
    for match in _TOKEN.finditer(query):
        if looks_like_identifier(match.group()):
            seen.setdefault(match.group(), None)
    return list(seen)


def query_identifier(query: str) -> str | None:
    """The identifier the whole query is (``drain_jobs`` for `` `drain_jobs()` ``), or None."""
    stripped = query.strip().removesuffix("()").strip("`")
    return stripped if looks_like_identifier(stripped) else None


def _normalised(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold()


@dataclass(frozen=True)
class LexicalMatch:
    """What of the query a window's text contains literally."""

    quotes_query: bool
    """The whole query, ignoring case and runs of whitespace."""
    identifiers: tuple[str, ...]
    """The query's identifier-like tokens found in the text as whole tokens."""

    @property
    def any(self) -> bool:
        return self.quotes_query or bool(self.identifiers)


def _whole_token(token: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w$]){re.escape(token)}(?![\w$])")


def lexical_match(query: str, text: str) -> LexicalMatch:
    """What of ``query`` appears literally in ``text``."""
    wanted = _normalised(query)
    # A one-word query is an identifier or a keyword: "contains" says it; quoting needs a phrase.
    quotes = " " in wanted and len(wanted) >= QUOTE_MIN_CHARACTERS and wanted in _normalised(text)
    found = tuple(token for token in identifier_tokens(query) if _whole_token(token).search(text))
    return LexicalMatch(quotes, found)


@dataclass(frozen=True)
class Occurrence:
    """One literal occurrence of an identifier."""

    path: str
    line: int
    offset: int

    @property
    def location(self) -> str:
        return f"{printable_name(self.path)}:{self.line}"


@dataclass(frozen=True)
class WindowWithIdentifier:
    """A window holding an identifier whole, and where the dense ranking put it."""

    row: int
    window: Window
    rank: int | None
    """None while the window is not embedded yet."""
    score: float | None
    bm25_rank: int | None = None
    """Its rank by BM25 for the same query, when that was asked (None: not asked, or not retrieved)."""


@dataclass(frozen=True)
class IdentifierReport:
    """Where an identifier literally is, against where the embedding ranked it."""

    identifier: str
    occurrences: tuple[Occurrence, ...]
    windows: tuple[WindowWithIdentifier, ...]
    ranking: str = "dense"
    """Which ranking the ranks are of: ``dense``, or ``BM25`` in a lexical run."""
    beside_bm25: bool = False
    """Each window's BM25 rank was asked for too, to show beside the dense one."""

    @property
    def ranks(self) -> list[int]:
        return sorted(entry.rank for entry in self.windows if entry.rank is not None)

    def describe(self) -> str:
        """E.g. ``present in 3 windows; dense ranks 41, 88, 203``."""
        if not self.occurrences:
            return f"{self.identifier} occurs nowhere in the corpus"
        files = len({o.path for o in self.occurrences})
        where = f"{len(self.occurrences)} occurrence(s) in {files} file(s)"
        if not self.windows:
            return f"{self.identifier}: {where}, but no window holds it whole"
        shown = _ranks_shown(self.ranks) or "none yet (not embedded)"
        present = f"present in {len(self.windows)} window(s)"
        described = f"{self.identifier}: {where}; {present}; {self.ranking} ranks {shown}"
        if self.beside_bm25:
            lexical = sorted(entry.bm25_rank for entry in self.windows if entry.bm25_rank is not None)
            described += f"; BM25 ranks {_ranks_shown(lexical) or 'none'}"
        return described


def _ranks_shown(ranks: Sequence[int]) -> str:
    """The first RANKS_SHOWN of sorted ``ranks``, then how many more and the last; empty for none."""
    shown = ", ".join(str(r) for r in ranks[:RANKS_SHOWN])
    if len(ranks) > RANKS_SHOWN:
        shown += f", … {len(ranks) - RANKS_SHOWN} more, the last at {ranks[-1]}"
    return shown


def find_occurrences(texts: Mapping[str, str], identifier: str) -> list[Occurrence]:
    """Every whole-token occurrence of ``identifier`` in the files ``texts`` (path to text).

    Candidates are found with ``str.find`` and only they are checked as whole tokens, and lines are
    counted only up to each one: on 100k windows (78 MB of text) a regex over every file holding the
    identifier, and an index of every line of those files, took 0.7 s a question.
    """
    if not identifier:
        return []
    pattern = _whole_token(identifier)
    found: list[Occurrence] = []
    # A corpus's texts tell which files hold it without decoding the rest (raglens.held_text).
    holding = texts.holding(identifier) if isinstance(texts, FileTexts) else texts.items()
    for path, text in holding:
        start = text.find(identifier)
        line, counted_to = 1, 0
        while start >= 0:
            if pattern.match(text, start):  # a lookbehind sees the text before ``start``
                line += _line_breaks(text, counted_to, start)
                counted_to = start
                found.append(Occurrence(path, line, start))
                start = text.find(identifier, start + len(identifier))  # as finditer: no overlaps
            else:
                start = text.find(identifier, start + 1)
    return found


def _line_breaks(text: str, start: int, end: int) -> int:
    """How many line breaks (CRLF, a lone CR or LF, as raglens.lines counts them) lie in
    ``text[start:end]``; neither end may split a CRLF."""
    return text.count("\n", start, end) + text.count("\r", start, end) - text.count("\r\n", start, end)


def identifier_report(
    identifier: str,
    texts: Mapping[str, str],
    windows: Sequence[Window],
    result: SearchResult,
    bm25: SearchResult | None = None,
) -> IdentifierReport:
    """Where ``identifier`` occurs and the dense rank of every window holding one occurrence whole;
    with ``bm25`` (BM25's full ranking of the same windows), each one's BM25 rank beside it."""
    occurrences = find_occurrences(texts, identifier)
    spans: dict[str, list[tuple[int, int]]] = {}
    for occurrence in occurrences:
        spans.setdefault(occurrence.path, []).append((occurrence.offset, occurrence.offset + len(identifier)))
    columns = as_columns(windows)  # only the files holding it are looked through
    rows = sorted(
        row
        for path, found in spans.items()
        for row, window in columns.numbered_windows_of(path)
        if any(window.start <= start and end <= window.end for start, end in found)
    )
    lexical_ranks = ranks_of(bm25, rows) if bm25 is not None else [None] * len(rows)
    holding = [
        WindowWithIdentifier(row, windows[row], row_rank, score_of(result, row), lexical_rank)
        for row, row_rank, lexical_rank in zip(rows, ranks_of(result, rows), lexical_ranks, strict=True)
    ]
    holding.sort(key=lambda entry: (entry.rank is None, entry.rank or 0))
    ranking = "dense" if result.cosine else "BM25"
    return IdentifierReport(identifier, tuple(occurrences), tuple(holding), ranking, bm25 is not None)
