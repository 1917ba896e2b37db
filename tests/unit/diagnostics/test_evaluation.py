"""Evaluation arithmetic on crafted scores, checked against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.diagnostics.evaluation import answers, evaluate_case, resolve_refs, summarise
from raglens.diagnostics.golden import ExpectedRef, GoldenCase
from raglens.errors import BadInputError
from raglens.search import full_ranks
from raglens.windows import Unit, Window

CODE = "def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n"
TEXTS = {"a.py": CODE, "b.md": "prose " * 10, "c.md": "more prose " * 10}
BETA_START = CODE.index("def beta")
WINDOWS = [
    Window("a.py", Unit.CHARS, 0, 0, BETA_START - 2, 1, 3),  # alpha only
    Window("a.py", Unit.CHARS, 1, BETA_START - 2, len(CODE), 4, 6),  # beta
    Window("b.md", Unit.CHARS, 0, 0, 60, 1, 1),
    Window("c.md", Unit.CHARS, 0, 0, 110, 1, 1),
]


def case(expect: list[str], mode: str = "all", kind: str = "k", line: int = 1) -> GoldenCase:
    return GoldenCase(line, "q", tuple(ExpectedRef.parse(e) for e in expect), mode, kind)


def scores(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def run(golden: GoldenCase, row_scores: np.ndarray, k: int = 2):  # type: ignore[no-untyped-def]
    return evaluate_case(golden, row_scores, WINDOWS, resolve_refs([golden], TEXTS), k)


def test_full_ranks_break_ties_in_corpus_order() -> None:
    assert full_ranks(scores(0.5, 0.9, 0.5, 0.1)).tolist() == [2, 1, 3, 4]


def test_a_symbol_matches_only_windows_overlapping_its_definition() -> None:
    # beta's window scores lowest of the a.py windows: the symbol is at rank 3, the file at rank 1.
    row_scores = scores(0.9, 0.3, 0.8, 0.1)
    assert run(case(["a.py::beta"]), row_scores).ref_ranks == (3,)
    assert run(case(["a.py"]), row_scores).ref_ranks == (1,)


def test_all_scores_the_share_of_refs_found_and_any_needs_one_as_milvus_rag_does() -> None:
    row_scores = scores(0.9, 0.3, 0.8, 0.1)  # ranks: alpha 1, b.md 2, beta 3, c.md 4
    both_all = run(case(["b.md", "a.py::beta"], mode="all"), row_scores)
    assert both_all.ref_ranks == (2, 3)
    assert both_all.recall == 0.5 and both_all.reciprocal_rank == 0.5, "one of two refs, found at rank 2"
    assert both_all.rank == 2 and not both_all.found, "not met in full"
    both_any = run(case(["b.md", "a.py::beta"], mode="any"), row_scores)
    assert both_any.rank == 2 and both_any.found and both_any.recall == 1.0
    none_found = run(case(["c.md", "a.py::beta"], mode="all"), row_scores)
    assert none_found.recall == 0.0 and none_found.reciprocal_rank == 0.0
    every = run(case(["a.py::alpha", "b.md"], mode="all"), row_scores)
    assert every.found and every.recall == 1.0 and every.reciprocal_rank == 1.0


def test_recall_mrr_and_kinds_by_hand() -> None:
    row_scores = scores(0.9, 0.3, 0.8, 0.1)
    results = [
        run(case(["a.py::alpha"], kind="symbol"), row_scores),  # rank 1 -> 1/1
        run(case(["b.md"], kind="symbol"), row_scores),  # rank 2 -> 1/2
        run(case(["c.md"], kind="prose"), row_scores),  # rank 4 > k -> miss, 0
        run(case([], kind="negative"), scores(0.2, 0.1, 0.15, 0.05)),
    ]
    report = summarise(results, k=2)
    assert report.recall == pytest.approx(2 / 3)
    assert report.mrr == pytest.approx((1 + 0.5 + 0) / 3)
    symbol, prose, negative = report.kinds
    assert (symbol.kind, symbol.found, symbol.positives, symbol.recall) == ("symbol", 2, 2, 1.0)
    assert symbol.mrr == pytest.approx(0.75)
    assert (prose.found, prose.recall, prose.mrr) == (0, 0.0, 0.0)
    assert negative.positives == 0 and negative.recall is None and negative.mrr is None
    assert negative.negatives == 1 and negative.abstain_rate == 1.0, "under the suggested floor"
    assert [miss.case.expect[0].path for miss in report.misses] == ["c.md"]
    assert results[0].hits[0].citation == "a.py:L1-L3"


def test_calibration_separable_and_overlapping() -> None:
    found = run(case(["a.py"]), scores(0.6, 0.1, 0.1, 0.1))
    weak_found = run(case(["b.md"]), scores(0.1, 0.1, 0.35, 0.1))
    negative = run(case([]), scores(0.3, 0.1, 0.1, 0.1))
    separable = summarise([found, weak_found, negative], k=2).calibration
    assert separable.lowest_found_top == pytest.approx(0.35)
    assert separable.highest_negative_top == pytest.approx(0.3)
    assert separable.separable is True
    assert separable.suggested_floor == pytest.approx(0.325)
    loud_negative = run(case([]), scores(0.5, 0.1, 0.1, 0.1))
    overlapping = summarise([found, weak_found, loud_negative], k=2).calibration
    assert overlapping.separable is False
    assert overlapping.suggested_floor == pytest.approx(0.35)
    assert overlapping.suggested_note == pytest.approx(0.5)
    assert summarise([found], k=2).calibration.separable is None


def test_abstention_with_a_floor() -> None:
    results = [
        run(case(["a.py"]), scores(0.6, 0.1, 0.1, 0.1)),
        run(case(["b.md"]), scores(0.1, 0.1, 0.25, 0.1)),
        run(case([]), scores(0.2, 0.1, 0.1, 0.1)),
        run(case([]), scores(0.4, 0.1, 0.1, 0.1)),
    ]
    abstention = summarise(results, k=2, floor=0.3).abstention
    assert abstention is not None
    assert (abstention.abstained, abstention.negatives, abstention.abstain_rate) == (1, 2, 0.5)
    assert (abstention.false_weak, abstention.positives, abstention.false_weak_rate) == (1, 2, 0.5)


def test_unknown_paths_and_symbols_are_listed_with_their_lines() -> None:
    cases = [case(["nope.py"], line=3), case(["a.py::gamma"], line=5), case(["a.py::alpha"], line=6)]
    with pytest.raises(BadInputError) as raised:
        resolve_refs(cases, TEXTS)
    message = str(raised.value)
    assert "line 3: nope.py is not an indexed file" in message
    assert "line 5: no definition of gamma found in a.py" in message
    assert "line 6" not in message


@pytest.mark.parametrize("k", [1, 2, 3, 4, 9])
def test_a_cases_hits_are_its_top_k_with_ties_in_corpus_order(k: int) -> None:
    row_scores = scores(0.5, 0.9, 0.5, 0.1)
    result = run(case(["b.md"]), row_scores, k)
    order = sorted(range(len(WINDOWS)), key=lambda row: (-float(row_scores[row]), row))[:k]
    assert [hit.citation for hit in result.hits] == [WINDOWS[row].citation for row in order]
    assert [hit.score for hit in result.hits] == pytest.approx([float(row_scores[row]) for row in order])


def test_a_kind_of_negatives_reports_its_abstain_rate_at_the_floor() -> None:
    results = [
        run(case(["a.py"], kind="answerable"), scores(0.6, 0.1, 0.1, 0.1)),
        run(case([], kind="negative"), scores(0.3, 0.1, 0.1, 0.1)),
        run(case([], kind="negative"), scores(0.5, 0.1, 0.1, 0.1)),
    ]
    suggested = summarise(results, k=2)
    negative = suggested.kinds[1]
    assert suggested.calibration.suggested_floor == pytest.approx(0.55)
    assert (negative.mrr, negative.abstained, negative.abstain_rate) == (None, 2, 1.0)
    assert suggested.abstention is not None and suggested.abstention.suggested
    given = summarise(results, k=2, floor=0.4)
    assert given.kinds[1].abstain_rate == 0.5
    assert given.abstention is not None and not given.abstention.suggested


def milvus_rag_scores(expected: list[str], mode: str, row_scores: list[float], k: int) -> tuple[float, float]:
    """An independent statement of milvus-rag's case scoring over whole-file refs: recall, RR."""
    order = sorted(range(len(row_scores)), key=lambda row: (-row_scores[row], row))
    top_paths = [WINDOWS[row].path for row in order[:k]]
    found = [path for path in expected if path in top_paths]
    recall = len(found) / len(expected) if mode == "all" else float(bool(found))
    ranks = [top_paths.index(path) + 1 for path in found]
    return recall, (1 / min(ranks) if ranks else 0.0)


@given(
    st.lists(st.sampled_from(["a.py", "b.md", "c.md"]), min_size=1, max_size=3, unique=True),
    st.sampled_from(["all", "any"]),
    st.lists(st.floats(-1, 1, width=32), min_size=4, max_size=4),
    st.integers(1, 4),
)
def test_case_recall_and_reciprocal_rank_match_an_independent_statement(
    expected: list[str], mode: str, row_scores: list[float], k: int
) -> None:
    result = run(case(expected, mode=mode), scores(*row_scores), k=k)
    recall, reciprocal_rank = milvus_rag_scores(expected, mode, row_scores, k)
    assert result.recall == pytest.approx(recall)
    assert result.reciprocal_rank == pytest.approx(reciprocal_rank)


def test_ndcg_by_hand() -> None:
    row_scores = scores(0.9, 0.3, 0.8, 0.1)  # ranks: alpha 1, b.md 2, beta 3, c.md 4
    ideal_two = 1 + 1 / math.log2(3)
    assert run(case(["b.md", "a.py::beta"]), row_scores, k=2).ndcg == pytest.approx(
        (1 / math.log2(3)) / ideal_two
    )
    both = (1 / math.log2(3) + 1 / math.log2(4)) / ideal_two
    assert run(case(["b.md", "a.py::beta"]), row_scores, k=3).ndcg == pytest.approx(both)
    assert run(case(["b.md", "a.py::beta"], mode="any"), row_scores, k=3).ndcg == pytest.approx(
        1 / math.log2(3)
    )
    # alpha's window answers both refs at rank 1: they take places 1 and 2, the ideal.
    assert run(case(["a.py::alpha", "a.py:L1-L2"]), row_scores).ndcg == pytest.approx(1.0)
    assert run(case(["c.md"]), row_scores).ndcg == 0.0
    assert run(case([]), row_scores).ndcg is None
    # Four refs, and the top 3 holds three of them in its first places: as good as k=3 allows.
    four = case(["a.py::alpha", "a.py::beta", "b.md", "c.md"])
    assert run(four, scores(0.9, 0.8, 0.7, 0.6), k=3).ndcg == pytest.approx(1.0)


SPAN_REFS = ["a.py::alpha", "a.py::beta", "a.py:L1-L2", "a.py:L2-L5", "b.md:L1-L1"]


def ndcg_by_places(expected: list[str], mode: str, row_scores: list[float], k: int) -> float:
    """nDCG@k stated independently: walk the top k; a window takes one place for each expected ref
    it is the first to answer (one place when it answers none), and each such place up to k gains 1;
    the ideal is min(refs, k) gains in the first places."""
    refs = [ExpectedRef.parse(text) for text in expected]
    resolved = resolve_refs([case(expected)], TEXTS)
    order = sorted(range(len(row_scores)), key=lambda row: (-row_scores[row], row))[:k]
    answered: set[ExpectedRef] = set()
    places: list[int] = []
    place = 0
    for row in order:
        new = [ref for ref in refs if ref not in answered and answers(WINDOWS[row], ref, resolved[ref])]
        if mode == "any":
            new = new[:1] if not answered else []
        place += 0 if new else 1
        for ref in new:
            place += 1
            places.append(place)
            answered.add(ref)
    wanted = min(1 if mode == "any" else len(refs), k)
    ideal = sum(1 / math.log2(position + 1) for position in range(1, wanted + 1))
    return sum(1 / math.log2(position + 1) for position in places if position <= k) / ideal


@given(
    st.lists(st.sampled_from(["a.py", "b.md", "c.md", *SPAN_REFS]), min_size=1, max_size=4, unique=True),
    st.sampled_from(["all", "any"]),
    st.lists(st.floats(-1, 1, width=32), min_size=4, max_size=4),
    st.integers(1, 4),
)
def test_ndcg_matches_an_independent_statement_and_never_passes_one(
    expected: list[str], mode: str, row_scores: list[float], k: int
) -> None:
    result = run(case(expected, mode=mode), scores(*row_scores), k=k)
    assert result.ndcg == pytest.approx(ndcg_by_places(expected, mode, row_scores, k))
    assert result.ndcg is not None and 0.0 <= result.ndcg <= 1.0 + 1e-12


def chars_by_sets(
    expected: list[str], mode: str, row_scores: list[float], k: int
) -> tuple[float, float, float]:
    """Character recall, precision and IoU stated with sets of (path, offset)."""
    resolved = resolve_refs([case(expected)], TEXTS)
    order = sorted(range(len(row_scores)), key=lambda row: (-row_scores[row], row))[:k]
    got = {
        (WINDOWS[row].path, offset) for row in order for offset in range(WINDOWS[row].start, WINDOWS[row].end)
    }

    def of(refs: list[str]) -> set[tuple[str, int]]:
        return {
            (d.path, offset)
            for text in refs
            for d in resolved[ExpectedRef.parse(text)]
            for offset in range(d.start, d.end)
        }

    def figures(answer: set[tuple[str, int]]) -> tuple[float, float, float]:
        shared = len(answer & got)
        return shared / len(answer), shared / len(got), shared / len(answer | got)

    if mode == "all":
        return figures(of(expected))
    return max((figures(of([text])) for text in expected), key=lambda triple: triple[2])


@given(
    st.lists(st.sampled_from(SPAN_REFS), min_size=1, max_size=3, unique=True),
    st.sampled_from(["all", "any"]),
    st.lists(st.floats(-1, 1, width=32), min_size=4, max_size=4),
    st.integers(1, 4),
)
def test_character_recall_precision_and_iou_match_sets_of_characters(
    expected: list[str], mode: str, row_scores: list[float], k: int
) -> None:
    chars = run(case(expected, mode=mode), scores(*row_scores), k=k).chars
    assert chars is not None
    recall, precision, iou = chars_by_sets(expected, mode, row_scores, k)
    assert (chars.recall, chars.precision, chars.iou) == pytest.approx((recall, precision, iou))


def test_character_figures_only_for_span_answers_and_averaged_over_them() -> None:
    row_scores = scores(0.3, 0.9, 0.8, 0.1)  # ranks: beta 1, b.md 2, alpha 3, c.md 4
    whole_file = run(case(["a.py"]), row_scores)
    assert whole_file.chars is None, "a whole file is no span: every window of it answers"
    assert run(case(["a.py::beta", "b.md"]), row_scores).chars is None
    assert run(case([]), row_scores).chars is None
    beta = run(case(["a.py::beta"]), row_scores, k=1)
    assert beta.chars is not None and beta.chars.recall == 1.0 and 0 < beta.chars.precision < 1
    report = summarise([whole_file, beta], k=1)
    assert report.characters.recall == beta.chars.recall and report.characters.iou == beta.chars.iou
    assert summarise([whole_file], k=1).characters.recall is None


def test_a_line_range_answers_the_windows_it_overlaps_and_one_past_the_end_is_refused() -> None:
    row_scores = scores(0.9, 0.3, 0.8, 0.1)
    assert run(case(["a.py:L4-L5"]), row_scores).ref_ranks == (3,), "lines 4-5 are beta's window"
    assert run(case(["a.py:L2-L3"]), row_scores).ref_ranks == (1,), "line 2 ends alpha's window"
    lines = CODE.count("\n")
    with pytest.raises(
        BadInputError, match=rf"line 2: a.py:L5-L{lines + 1} is outside the file \({lines} lines\)"
    ):
        resolve_refs([case([f"a.py:L5-L{lines + 1}"], line=2)], TEXTS)
