"""Every per-query instrument at once: score distribution, noise floor, literal matches, straddles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from raglens.diagnostics.evaluation import answers
from raglens.diagnostics.golden import ExpectedRef
from raglens.diagnostics.lexical import (
    IdentifierReport,
    LexicalMatch,
    identifier_report,
    lexical_match,
    query_identifier,
)
from raglens.diagnostics.noise_floor import NoiseFloor, NoiseVerdict
from raglens.diagnostics.question_language import QuestionLanguage, question_language
from raglens.diagnostics.score_profile import ScoreProfile, score_profile
from raglens.diagnostics.straddle import Straddle, find_straddles
from raglens.diagnostics.symbols import Definition
from raglens.model_languages import ModelLanguages
from raglens.printable import printable_name
from raglens.search import SearchResult, ranks_of
from raglens.windows import Window, as_columns


@dataclass(frozen=True)
class ExpectedRank:
    """A pinned expected answer and the best rank of a window answering it; None if none is ranked."""

    ref: ExpectedRef
    rank: int | None

    def describe(self, k: int) -> str:
        if self.rank is None:
            return f"expected {printable_name(str(self.ref))}: not ranked yet"
        verdict = "in the top k" if self.rank <= k else "outside the top k"
        return f"expected {printable_name(str(self.ref))}: rank {self.rank} ({verdict}={k})"


@dataclass(frozen=True)
class QueryDiagnostics:
    """What the instruments say about one ranking."""

    profile: ScoreProfile
    noise: NoiseFloor | None
    lexical: tuple[LexicalMatch, ...]
    """One per hit, in rank order."""
    straddles: tuple[Straddle, ...]
    identifier: IdentifierReport | None
    """For a query that is one identifier: where it literally is and how those windows ranked."""
    expected: tuple[ExpectedRank, ...] = ()
    """Where each answer the user pinned as expected ranks for this query."""
    language: QuestionLanguage | None = None
    """The question's language against the model's; None when either is not known."""

    @property
    def unread_language(self) -> bool:
        """The question is in a language the model does not read: its scores judge nothing."""
        return self.language is not None and not self.language.model_reads_it

    def noise_verdict(self, score: float) -> NoiseVerdict | None:
        """Where ``score`` stands against the noise band; None before it is measured, or for a
        question in a language the model does not read (its scores are token coincidences)."""
        if self.noise is None or self.unread_language:
            return None
        return self.noise.verdict(score)

    def above_noise(self, score: float) -> bool | None:
        """True above the band, False within it, None when undecided or not judged."""
        verdict = self.noise_verdict(score)
        return None if verdict in (None, NoiseVerdict.UNDECIDED) else verdict is NoiseVerdict.ABOVE


def diagnose_query(
    query: str,
    result: SearchResult,
    k: int,
    texts: Mapping[str, str],
    windows: Sequence[Window],
    noise: NoiseFloor | None,
    expected: Mapping[ExpectedRef, Sequence[Definition]] | None = None,
    bm25: SearchResult | None = None,
    languages: ModelLanguages | None = None,
) -> QueryDiagnostics:
    """Run every per-query instrument on ``result``, the ranking of ``query``.

    ``expected`` maps each pinned answer to its definitions (none for a whole file); ``languages``
    are the model's, to tell a question in another language.
    """
    lexical = tuple(lexical_match(query, hit.window.text_in(texts[hit.window.path])) for hit in result.hits)
    name = query_identifier(query)
    identifier = None if name is None else identifier_report(name, texts, windows, result, bm25)
    language = question_language(query, languages)
    unread = language is not None and not language.model_reads_it
    # Two neighbouring windows that score like an off-topic question, or near it, are no answer split
    # in two: a straddle is claimed only for a pair clearly above the band.
    straddles = tuple(
        straddle
        for straddle in find_straddles(result.hits)
        if not unread
        and (noise is None or noise.stands_above(max(straddle.first.score, straddle.second.score)))
    )
    return QueryDiagnostics(
        score_profile(result.scores, k),
        noise,
        lexical,
        straddles,
        identifier,
        tuple(expected_ranks(result, windows, expected or {})),
        language,
    )


def expected_ranks(
    result: SearchResult, windows: Sequence[Window], expected: Mapping[ExpectedRef, Sequence[Definition]]
) -> list[ExpectedRank]:
    """Where each expected answer ranks in ``result``: the best rank of a window answering it."""
    if not expected:
        return []  # the usual case, on every keystroke's ranking
    columns = as_columns(windows)  # only each answer's file is looked through
    ranked = result.ranked_rows
    answering: dict[ExpectedRef, list[int]] = {}
    for ref, definitions in expected.items():
        of_file = columns.rows_of(ref.path)
        first, last = np.searchsorted(ranked, [of_file.start, of_file.stop]).tolist()
        answering[ref] = [
            row for row in ranked[first:last].tolist() if answers(columns[row], ref, definitions)
        ]
    every = [row for rows in answering.values() for row in rows]
    rank_by_row = dict(zip(every, ranks_of(result, every), strict=True))  # one sort for all refs
    found = []
    for ref, rows in answering.items():
        ranks = [rank for row in rows if (rank := rank_by_row[row]) is not None]
        found.append(ExpectedRank(ref, min(ranks, default=None)))
    return found
