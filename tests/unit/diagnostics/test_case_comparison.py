"""Which golden questions each configuration gains or loses against the best one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from raglens.diagnostics.case_comparison import Change, compare_cases, rank_label
from raglens.diagnostics.evaluation import CaseResult, summarise
from raglens.diagnostics.golden import ExpectedRef, GoldenCase

K = 5


def result(line: int, *ranks: int | None, mode: str = "all") -> CaseResult:
    expect = tuple(ExpectedRef(f"f{n}.py") for n in range(len(ranks)))
    return CaseResult(GoldenCase(line, f"q{line}", expect, mode), tuple(ranks), 0.5, (), K)


def negative(line: int) -> CaseResult:
    return CaseResult(GoldenCase(line, f"q{line}", ()), (), 0.3, (), K)


def test_gains_losses_and_sameness_against_the_best_row_by_hand() -> None:
    best = summarise([result(1, 1), result(2, 6), result(3, 2), negative(4)], K)
    other = summarise([result(1, 3), result(2, 2), result(3, 2), negative(4)], K)
    misses = summarise([result(1, 9), result(2, 40), result(3, None), negative(4)], K)
    comparison = compare_cases([other, best, misses], best=1)
    assert [case.case_line for case in comparison.cases] == [1, 2, 3], "negatives have no rank to compare"
    assert comparison.negatives == 1
    assert [case.changes for case in comparison.cases] == [
        (Change.LOST, None, Change.LOST),
        (Change.GAINED, None, Change.SAME),  # rank 6 and rank 40 are both misses at k=5
        (Change.SAME, None, Change.LOST),
    ]
    (first, third) = comparison.tallies
    assert (first.row, first.gained, first.lost, first.same) == (0, (2,), (1,), 1)
    assert (third.row, third.gained, third.lost, third.same) == (2, (), (1, 3), 1)


def test_more_refs_found_beats_a_better_rank() -> None:
    both = summarise([result(1, 4, 5)], K)
    one_first = summarise([result(1, 1, None)], K)
    assert compare_cases([one_first, both], best=1).cases[0].changes == (Change.LOST, None)


def test_without_a_best_row_nothing_is_marked() -> None:
    reports = [summarise([result(1, 1)], K), summarise([result(1, 2)], K)]
    comparison = compare_cases(reports, best=None)
    assert comparison.tallies == () and comparison.cases[0].changes == (None, None)


def test_rank_labels() -> None:
    assert rank_label(result(1, 3)) == "3"
    assert rank_label(result(1, 6)) == "miss"
    assert rank_label(result(1, None)) == "miss"
    assert rank_label(result(1, 2, 9)) == "2 (1/2)"
    assert rank_label(result(1, 2, 9, mode="any")) == "2"


@given(
    st.lists(st.tuples(st.none() | st.integers(1, 9), st.none() | st.integers(1, 9)), min_size=1, max_size=6)
)
def test_a_row_gains_exactly_what_the_best_row_loses_to_it(
    pairs: list[tuple[int | None, int | None]],
) -> None:
    a = summarise([result(line, rank) for line, (rank, _) in enumerate(pairs, 1)], K)
    b = summarise([result(line, rank) for line, (_, rank) in enumerate(pairs, 1)], K)
    a_best, b_best = compare_cases([a, b], best=0).tallies[0], compare_cases([a, b], best=1).tallies[0]
    assert a_best.gained == b_best.lost and a_best.lost == b_best.gained
    # Gaining or losing a case is moving its contribution to recall@k or MRR.
    for line in (*a_best.gained, *a_best.lost):
        x, y = a.results[line - 1], b.results[line - 1]
        assert (x.recall, x.reciprocal_rank) != (y.recall, y.reciprocal_rank)
