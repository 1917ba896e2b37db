"""Golden-set evaluation: recall@k, MRR, per-kind results, and where a score floor would have to sit.

Pure arithmetic over rankings; the caller embeds and ranks. A hit answers ``path`` when it is any
window of that file, and ``path::symbol`` when its window overlaps the symbol's definition.

The numbers mean what milvus-rag's ``eval.py`` means by them, since raglens reads its golden
format: a case's recall is 1 or 0 for ``mode: any`` (one expected ref in the top k or none) and
the share of its expected refs found in the top k for ``mode: all``; its reciprocal rank is 1 over
the rank of its best-ranked ref found in the top k (0 when none is). Recall@k and MRR are the means
over answerable cases. A kind of negatives reports its abstain rate and no MRR.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from raglens.diagnostics.char_overlap import CharacterSummary, CharOverlap, Span, char_overlap
from raglens.diagnostics.golden import ExpectedRef, GoldenCase
from raglens.diagnostics.symbols import Definition, find_definitions
from raglens.errors import BadInputError
from raglens.lines import LineIndex
from raglens.printable import SHOWN_PATH_CHARS, printable_name, shortened
from raglens.search import full_ranks, top_k_rows
from raglens.windows import Window, as_columns


@dataclass(frozen=True)
class RankedHit:
    """One of a case's top hits, as the report keeps it."""

    citation: str
    score: float


@dataclass(frozen=True)
class CaseResult:
    """How one golden case fared."""

    case: GoldenCase
    ref_ranks: tuple[int | None, ...]
    """The best rank of a window answering each expected ref, over the whole ranking."""
    top_score: float
    hits: tuple[RankedHit, ...]
    k: int
    chars: CharOverlap | None = None
    """The answer's characters against the top k's, when every expected ref is a span (a symbol or
    a line range); None for a whole-file ref or a negative."""

    @property
    def rank(self) -> int | None:
        """The rank of the best-ranked expected ref over the whole ranking (None for a negative)."""
        if self.case.is_negative:
            return None
        return min((r for r in self.ref_ranks if r is not None), default=None)

    @property
    def refs_found(self) -> int:
        """How many expected refs have an answering window in the top k."""
        return sum(r is not None and r <= self.k for r in self.ref_ranks)

    @property
    def recall(self) -> float | None:
        """1 or 0 for ``any``; the share of refs in the top k for ``all``; None for a negative."""
        if self.case.is_negative:
            return None
        if self.case.mode == "all":
            return self.refs_found / len(self.ref_ranks)
        return 1.0 if self.refs_found else 0.0

    @property
    def reciprocal_rank(self) -> float | None:
        """1 / the rank of the best-ranked ref found in the top k; 0 when none is; None for a negative."""
        if self.case.is_negative:
            return None
        rank = self.rank
        return 1 / rank if rank is not None and rank <= self.k else 0.0

    @property
    def found(self) -> bool:
        """Whether the expectation is met in full within the top k (never, for a negative)."""
        return self.recall == 1.0

    @property
    def ndcg(self) -> float | None:
        """nDCG@k with a gain of 1 for each expected ref, where its best window ranks (None: negative).

        ``any`` counts its best-ranked ref alone, as its recall does. A window that is the first to
        answer several refs takes as many places in a row, pushing the windows below it down; places
        past k gain nothing. The ideal is the usual one, every ref in the first places up to k, so a
        top k that holds as many refs as fit scores 1 and nothing scores more.
        """
        if self.case.is_negative:
            return None
        found = sorted(rank for rank in self.ref_ranks if rank is not None and rank <= self.k)
        if self.case.mode == "any":
            found, wanted = found[:1], 1
        else:
            wanted = len(self.ref_ranks)
        gained, extra, previous = 0.0, 0, None
        for rank in found:
            if rank == previous:
                extra += 1  # the same window again: the next place
            place = rank + extra
            if place <= self.k:
                gained += 1 / math.log2(place + 1)
            previous = rank
        ideal = sum(1 / math.log2(place + 1) for place in range(1, min(wanted, self.k) + 1))
        return gained / ideal


@dataclass(frozen=True)
class KindSummary:
    """Recall and MRR over the answerable cases of one kind; the abstain rate over its negatives."""

    kind: str
    cases: int
    positives: int
    found: int
    """Answerable cases whose expectation is met in full."""
    recall: float | None
    """The mean case recall (None: no answerable case)."""
    mrr: float | None
    """The mean reciprocal rank (None: no answerable case, as for a kind of negatives)."""
    negatives: int = 0
    abstained: int | None = None
    """Negatives whose top score is under the floor (None: no floor to judge by)."""
    ndcg: float | None = None
    """The mean case nDCG@k (None: no answerable case)."""

    @property
    def abstain_rate(self) -> float | None:
        if not self.negatives or self.abstained is None:
            return None
        return self.abstained / self.negatives


@dataclass(frozen=True)
class Calibration:
    """Where real answers' top scores and unanswerable questions' top scores meet."""

    lowest_found_top: float | None
    """The lowest top score among positives that were found."""
    highest_negative_top: float | None
    """The highest top score among negatives."""

    @property
    def separable(self) -> bool | None:
        """Whether a floor exists that keeps every found positive and rejects every negative."""
        if self.lowest_found_top is None or self.highest_negative_top is None:
            return None
        return self.lowest_found_top > self.highest_negative_top

    @property
    def suggested_floor(self) -> float | None:
        """Below this, abstain: no found positive scored lower (midway to the negatives when separable)."""
        if self.lowest_found_top is None or self.highest_negative_top is None:
            return None
        if self.separable:
            return (self.lowest_found_top + self.highest_negative_top) / 2
        return self.lowest_found_top

    @property
    def suggested_note(self) -> float | None:
        """Between the floor and this, answer with a note that the evidence is weak."""
        if self.lowest_found_top is None or self.highest_negative_top is None:
            return None
        if self.separable:
            return self.suggested_floor
        return self.highest_negative_top


@dataclass(frozen=True)
class Abstention:
    """What a score floor would do: abstain on negatives (good) and on positives (false-weak, bad)."""

    floor: float
    negatives: int
    abstained: int
    positives: int
    false_weak: int
    suggested: bool = False
    """The floor is the calibration's suggestion, not one the user gave."""

    @property
    def abstain_rate(self) -> float | None:
        return self.abstained / self.negatives if self.negatives else None

    @property
    def false_weak_rate(self) -> float | None:
        return self.false_weak / self.positives if self.positives else None


@dataclass(frozen=True)
class EvalReport:
    """Everything one evaluation run measured."""

    k: int
    results: tuple[CaseResult, ...]
    kinds: tuple[KindSummary, ...]
    calibration: Calibration
    abstention: Abstention | None

    @property
    def positives(self) -> list[CaseResult]:
        return [r for r in self.results if not r.case.is_negative]

    @property
    def recall(self) -> float | None:
        """Recall@k: the mean case recall over answerable questions (partial for ``mode: all``)."""
        return _mean([r.recall for r in self.positives])

    @property
    def mrr(self) -> float | None:
        """Mean reciprocal rank over answerable questions, 0 for those with no ref in the top k."""
        return _mean([r.reciprocal_rank for r in self.positives])

    @property
    def ndcg(self) -> float | None:
        """nDCG@k: the mean case nDCG over answerable questions."""
        return _mean([r.ndcg for r in self.positives])

    @property
    def characters(self) -> CharacterSummary:
        """Character recall, precision and IoU, each the mean over the cases whose answer is a span."""
        return CharacterSummary.of([r.chars for r in self.results if r.chars is not None])

    @property
    def misses(self) -> list[CaseResult]:
        """Answerable cases whose expectation is not met in full."""
        return [r for r in self.positives if not r.found]


def _mean(values: Sequence[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) / len(known) if known else None


def resolve_refs(
    cases: Sequence[GoldenCase], texts: Mapping[str, str]
) -> dict[ExpectedRef, tuple[Definition, ...]]:
    """Each expected ref's definitions (none for a whole file); an error listing every unknown one."""
    named = [(f"line {case.line}", ref) for case in cases for ref in case.expect]
    return _resolve(named, texts, "the golden set")


def resolve_expected(
    refs: Sequence[ExpectedRef], texts: Mapping[str, str]
) -> dict[ExpectedRef, tuple[Definition, ...]]:
    """``--expect`` refs' definitions, or one error listing every ref this corpus does not have."""
    return _resolve([("--expect", ref) for ref in refs], texts, "--expect")


LISTED_PROBLEMS = 20
"""The most unknown refs one error lists: a golden set of 400,000 bad lines is not 400,000 lines of error."""


def _resolve(
    named: Sequence[tuple[str, ExpectedRef]], texts: Mapping[str, str], source: str
) -> dict[ExpectedRef, tuple[Definition, ...]]:
    definitions: dict[str, list[Definition]] = {}
    resolved: dict[ExpectedRef, tuple[Definition, ...]] = {}
    problems = []
    for where, ref in named:
        if ref in resolved:
            continue
        if ref.path not in texts:
            shown = printable_name(shortened(ref.path, SHOWN_PATH_CHARS))
            problems.append(f"{where}: {shown} is not an indexed file of this corpus")
            continue
        if ref.lines is not None:
            span = _line_span(ref, texts[ref.path])
            if span is None:
                count = LineIndex(texts[ref.path]).line_count
                shown = printable_name(shortened(str(ref), SHOWN_PATH_CHARS))
                problems.append(f"{where}: {shown} is outside the file ({count} lines)")
                continue
            resolved[ref] = (span,)
            continue
        if ref.symbol is None:
            resolved[ref] = ()
            continue
        if ref.path not in definitions:
            definitions[ref.path] = find_definitions(ref.path, texts[ref.path])
        matching = _matching_definitions(definitions[ref.path], ref.symbol)
        if not matching:
            problems.append(
                f"{where}: no definition of {shortened(ref.symbol, SHOWN_PATH_CHARS)} found in {ref.path}"
            )
            continue
        resolved[ref] = matching
    if problems:
        listed = problems[:LISTED_PROBLEMS]
        if len(problems) > len(listed):
            listed.append(f"… and {len(problems) - len(listed):,} more")
        raise BadInputError(f"{source} names what this corpus does not have:\n  " + "\n  ".join(listed))
    return resolved


def _line_span(ref: ExpectedRef, text: str) -> Definition | None:
    """A line-range ref's characters, as the span a symbol's definition would give; None past the end."""
    assert ref.lines is not None
    first, last = ref.lines
    lines = LineIndex(text)
    if last > lines.line_count:
        return None
    start, end = lines.line_span(first)[0], lines.line_span(last)[1]
    name = f"L{first}-L{last}"
    return Definition(ref.path, name, "lines", start, end, first, last, None, "lines")


def _matching_definitions(definitions: Sequence[Definition], symbol: str) -> tuple[Definition, ...]:
    """Definitions named ``symbol`` exactly, else the one whose dotted name ends with it."""
    exact = tuple(d for d in definitions if d.name == symbol)
    if exact:
        return exact
    suffixed = tuple(d for d in definitions if d.name.endswith(f".{symbol}"))
    return suffixed if len(suffixed) == 1 else ()


def answers(window: Window, ref: ExpectedRef, definitions: Sequence[Definition]) -> bool:
    """Whether ``window`` answers ``ref``: any window of the file, or one overlapping its span."""
    if window.path != ref.path:
        return False
    return ref.is_whole_file or any(d.overlaps(window.start, window.end) for d in definitions)


def evaluate_case(
    case: GoldenCase,
    scores: np.ndarray,
    windows: Sequence[Window],
    resolved: Mapping[ExpectedRef, Sequence[Definition]],
    k: int,
) -> CaseResult:
    """How ``case`` fares when its query scored ``scores`` (one per window, in corpus order).

    A window scored -inf was not retrieved (BM25's, sharing no token with the query): it has no rank
    and is never among the hits.
    """
    ranks = full_ranks(scores)
    retrieved_rows = np.isfinite(scores)
    ref_ranks = []
    columns = as_columns(windows)  # only each answer's file is looked through
    for ref in case.expect:
        rows = [
            row
            for row, window in columns.numbered_windows_of(ref.path)
            if retrieved_rows[row] and answers(window, ref, resolved[ref])
        ]
        ref_ranks.append(int(ranks[rows].min()) if rows else None)
    best = [row for row in top_k_rows(scores, k) if retrieved_rows[row]]
    hits = tuple(RankedHit(windows[row].citation, float(scores[row])) for row in best)
    retrieved = [(windows[row].path, windows[row].start, windows[row].end) for row in best]
    chars = _answer_chars(case, resolved, retrieved)
    top = float(scores[retrieved_rows].max()) if retrieved_rows.any() else 0.0
    return CaseResult(case, tuple(ref_ranks), top, hits, k, chars)


def _answer_chars(
    case: GoldenCase, resolved: Mapping[ExpectedRef, Sequence[Definition]], retrieved: Sequence[Span]
) -> CharOverlap | None:
    """The case's answer characters against the retrieved ones, when every expected ref is a span.

    ``all``: the answer is every ref's span together; ``any``: the ref the top k covers best (by IoU).
    A symbol defined more than once is every one of its definitions.
    """
    if case.is_negative or any(ref.is_whole_file for ref in case.expect):
        return None
    spans = {ref: [(d.path, d.start, d.end) for d in resolved[ref]] for ref in case.expect}
    if case.mode == "all":
        return char_overlap([span for ref_spans in spans.values() for span in ref_spans], retrieved)
    overlaps = [char_overlap(ref_spans, retrieved) for ref_spans in spans.values()]
    return max(overlaps, key=lambda overlap: overlap.iou)


def summarise(results: Sequence[CaseResult], k: int, floor: float | None = None) -> EvalReport:
    """The report over every case: recall@k, MRR, per kind, calibration and abstention.

    Abstention is judged at ``floor``, else at the calibration's suggested floor when there is one.
    """
    found_tops = [r.top_score for r in results if r.found]
    negative_tops = [r.top_score for r in results if r.case.is_negative]
    calibration = Calibration(min(found_tops, default=None), max(negative_tops, default=None))
    judged_at = floor if floor is not None else calibration.suggested_floor
    kinds = []
    for kind in dict.fromkeys(r.case.kind for r in results):
        of_kind = [r for r in results if r.case.kind == kind]
        positives = [r for r in of_kind if not r.case.is_negative]
        negatives = [r for r in of_kind if r.case.is_negative]
        kinds.append(
            KindSummary(
                kind,
                len(of_kind),
                len(positives),
                sum(r.found for r in positives),
                _mean([r.recall for r in positives]),
                _mean([r.reciprocal_rank for r in positives]),
                len(negatives),
                None if judged_at is None else sum(r.top_score < judged_at for r in negatives),
                ndcg=_mean([r.ndcg for r in positives]),
            )
        )
    abstention = None
    if judged_at is not None:
        positives = [r for r in results if not r.case.is_negative]
        negatives = [r for r in results if r.case.is_negative]
        abstention = Abstention(
            judged_at,
            len(negatives),
            sum(r.top_score < judged_at for r in negatives),
            len(positives),
            sum(r.top_score < judged_at for r in positives),
            suggested=floor is None,
        )
    return EvalReport(k, tuple(results), tuple(kinds), calibration, abstention)
