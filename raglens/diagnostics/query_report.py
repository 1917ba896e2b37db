"""Every per-query instrument at once: score distribution, noise floor, literal matches, straddles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from raglens.diagnostics.lexical import (
    IdentifierReport,
    LexicalMatch,
    identifier_report,
    is_identifier_query,
    lexical_match,
)
from raglens.diagnostics.noise_floor import NoiseFloor
from raglens.diagnostics.score_profile import ScoreProfile, score_profile
from raglens.diagnostics.straddle import Straddle, find_straddles
from raglens.search import SearchResult
from raglens.windows import Window


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

    def above_noise(self, score: float) -> bool | None:
        return None if self.noise is None else self.noise.stands_above(score)


def diagnose_query(
    query: str,
    result: SearchResult,
    k: int,
    texts: Mapping[str, str],
    windows: Sequence[Window],
    noise: NoiseFloor | None,
) -> QueryDiagnostics:
    """Run every per-query instrument on ``result``, the ranking of ``query``."""
    lexical = tuple(lexical_match(query, hit.window.text_in(texts[hit.window.path])) for hit in result.hits)
    identifier = None
    if is_identifier_query(query):
        name = query.strip().removesuffix("()").strip("`")
        identifier = identifier_report(name, texts, windows, result)
    return QueryDiagnostics(
        score_profile(result.scores, k), noise, lexical, tuple(find_straddles(result.hits)), identifier
    )
