"""The grid tells the truth about itself: no best row where no row found anything, and a time left
from the windows still to embed, never from a pace per configuration."""

from __future__ import annotations

from raglens.diagnostics.grid import best_row, nothing_found
from raglens.diagnostics.grid_pace import EmbeddingPace, RowToEmbed, seconds_left
from tests.unit.test_grid import row


def test_no_row_is_the_best_when_no_row_found_anything() -> None:
    rows = [row(800, None, 0.0, 0.0), row(1000, None, 0.0, 0.0)]
    assert best_row(rows) is None
    assert nothing_found(rows)


def test_a_row_that_found_something_is_the_best_and_negatives_alone_miss_nothing() -> None:
    assert best_row([row(800, None, 0.0, 0.0), row(1000, None, 0.0, 0.1)]) == 1
    assert best_row([row(800, None, 0.0, 0.0), row(1000, None, 0.5, 0.0)]) == 1
    assert not nothing_found([row(800, None, 0.0, 0.0), row(1000, None, 0.5, 0.5)])
    assert not nothing_found([row(800, None, None, None)]), "no answerable case: nothing to find"
    assert not nothing_found([])


MINI = "model=all-MiniLM-L6-v2"


def test_a_cached_first_row_gives_no_pace_for_a_row_that_embeds() -> None:
    """The issue's case: row 1 came from the cache in 1 s, row 2 has 757 windows to embed."""
    paces = {MINI: EmbeddingPace()}
    assert seconds_left([RowToEmbed(MINI, 757)], paces, other_per_row=1.0) is None
    assert seconds_left([RowToEmbed(MINI, 757)], {}, other_per_row=1.0) is None


def test_the_time_left_is_the_windows_to_embed_at_the_pace_plus_the_rest_per_row() -> None:
    paces = {MINI: EmbeddingPace(100, 5.0)}  # 20 windows a second
    rows = [RowToEmbed(MINI, 757), RowToEmbed("model=bm25", 0), RowToEmbed(MINI, 0)]
    # 757 / 20 = 37.85 s of embedding, and 3 rows of 1 s of everything else.
    assert seconds_left(rows, paces, other_per_row=1.0) == 41
    # 2 s of the running row's other time already spent.
    assert seconds_left(rows, paces, other_per_row=1.0, other_spent=2.0) == 39
    # Nothing left to embed: only the other time, whatever the pace.
    assert seconds_left([RowToEmbed(MINI, 0)], {}, other_per_row=1.5, other_spent=0.5) == 1
    assert seconds_left([RowToEmbed(MINI, 0)], {}, other_per_row=1.0, other_spent=9.0) == 0


def test_no_time_left_while_a_figure_it_needs_is_unknown() -> None:
    paces = {MINI: EmbeddingPace(100, 5.0)}
    assert seconds_left([RowToEmbed(MINI, 10)], paces, other_per_row=None) is None, "no row finished"
    assert seconds_left([RowToEmbed(MINI, 10), RowToEmbed(MINI, None)], paces, other_per_row=1.0) is None
    # A model's pace is not lent to another.
    assert seconds_left([RowToEmbed("model=/m/bge", 10)], paces, other_per_row=1.0) is None


def test_a_pace_adds_up() -> None:
    assert EmbeddingPace().plus(10, 1.0).plus(30, 2.0) == EmbeddingPace(40, 3.0)
