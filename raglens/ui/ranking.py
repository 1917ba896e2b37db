"""One ranking as the explorer shows it: hits, their coloured excerpts and every per-query instrument.

Runs in the ranking worker (it imports numpy and Pygments); the worker only posts what this returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from raglens.diagnostics.describe import describe_lexical, noise_mark
from raglens.diagnostics.noise_floor import NoiseFloor, measure_noise_floor
from raglens.diagnostics.query_report import QueryDiagnostics, diagnose_query
from raglens.search import SearchResult, rank_answer
from raglens.ui.widgets.hit_list import HitExcerpt, hit_excerpt

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np

    from raglens.corpus import Corpus
    from raglens.diagnostics.golden import ExpectedRef
    from raglens.diagnostics.symbols import Definition
    from raglens.index import IndexSnapshot
    from raglens.model_languages import ModelLanguages
    from raglens.windows import WindowColumns


class NoiseFloorMemo:
    """The noise floor of the last index state seen, so each keystroke does not rank the controls again.

    Used only by ranking workers. A superseded worker may still be finishing beside a new one, so the
    entry is replaced in one assignment: a race costs a second measurement, never a wrong band.
    """

    def __init__(self) -> None:
        self._entry: tuple[WindowColumns, tuple[int, tuple[str, ...]], NoiseFloor | None] | None = None

    def noise_floor(self, index: IndexSnapshot, controls: dict[str, np.ndarray]) -> NoiseFloor | None:
        """The noise floor over ``index``, measured again only when the rows embedded have changed.

        Snapshots of one index share its windows, and its rows only ever grow: the windows and the
        embedded count identify what was ranked.
        """
        key = (index.embedded_count, tuple(controls))
        entry = self._entry
        if entry is not None and entry[0] is index.windows and entry[1] == key:
            return entry[2]
        noise = measure_noise_floor(index, controls.__getitem__, list(controls)) if controls else None
        self._entry = (index.windows, key, noise)
        return noise


NOISE_FLOOR_MEMO = NoiseFloorMemo()
"""The ranking workers' one memo; the app itself never reads it."""


@dataclass(frozen=True, eq=False)
class ShownRanking:
    """What the hits pane and the score strip draw for one query."""

    result: SearchResult
    excerpts: list[HitExcerpt]
    diagnostics: QueryDiagnostics


def rank_for_display(
    index: IndexSnapshot,
    corpus: Corpus,
    query: str,
    answer: np.ndarray,
    k: int,
    controls: dict[str, np.ndarray],
    pinned: Mapping[ExpectedRef, tuple[Definition, ...]],
    languages: ModelLanguages | None = None,
    noise_memo: NoiseFloorMemo | None = None,
) -> ShownRanking:
    """Rank ``query`` over what is embedded, run the instruments, and colour each hit's excerpt.

    ``answer`` is what the run's process gave the question: its vector, or every window's BM25 score.
    """
    result = rank_answer(index, answer, k)
    noise = (noise_memo or NOISE_FLOOR_MEMO).noise_floor(index, controls)
    diagnostics = diagnose_query(
        query, result, k, corpus.texts(), index.windows, noise, pinned, languages=languages
    )
    excerpts = [
        hit_excerpt(
            hit,
            corpus.file(hit.window.path).text,
            query=query,
            stale=corpus.changed_on_disk(hit.window.path),
            literal=describe_lexical(match),
            noise_mark=noise_mark(diagnostics.noise_verdict(hit.score)),
            bar=result.bar_fraction(hit.score),
        )
        for hit, match in zip(result.hits, diagnostics.lexical, strict=True)
    ]
    return ShownRanking(result, excerpts, diagnostics)
