"""The status line at any width: the numbers a user watches stay, the least useful words go first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from raglens.embedding_events import ModelReady
from raglens.ui.status import status_text
from raglens.windows import WindowParams

MODEL = ModelReady("all-MiniLM-L6-v2", 384, 256, "cpu", "fp32", "onnxruntime")
BF16 = ModelReady("all-MiniLM-L6-v2", 384, 256, "cpu", "bf16", "sentence-transformers")


def indexing(width: int | None, model: ModelReady = MODEL) -> str:
    return status_text(model, "m", WindowParams(), 5, 9_096, 100_636, 31.0, 5_000, width=width).plain


@given(st.integers(58, 200))
def test_while_indexing_the_progress_and_time_left_stay_and_it_fits(width: int) -> None:
    line = indexing(width)
    assert "embedded 9,096/100,636" in line
    assert "all-MiniLM-L6-v2" in line and "1000/200 chars" in line
    assert len(line) <= width, (width, line)
    if width >= 72:  # 80 columns less the line's padding
        assert "49 min left)" in line, "the time left fits at 80 columns"
    if width >= 110:
        assert "(31 windows/s, 49 min left)" in line


def test_the_least_useful_words_go_first() -> None:
    whole = indexing(None)
    assert "cpu" in whole and "384 d" in whole and "onnxruntime" in whole
    at_100 = indexing(100)
    assert "384 d" not in at_100 and " · cpu" not in at_100
    assert "embedded 9,096/100,636 (31 windows/s, 49 min left)" in at_100
    assert ")" in at_100[-2:], "never cut inside a parenthesis"


def test_an_approximate_precision_is_never_left_out() -> None:
    assert "bf16 ≈ approximate" in indexing(60, BF16)
    assert "fp32" not in indexing(80)


def test_a_model_that_cuts_most_windows_short_says_so_even_at_80_columns() -> None:
    line = status_text(MODEL, "m", WindowParams(), 5, 66, 66, None, cut_short=0.79, width=78).plain
    assert "79% cut short" in line and "66 windows embedded" in line and len(line) <= 78
    wide = status_text(MODEL, "m", WindowParams(), 5, 66, 66, None, cut_short=0.79, width=None).plain
    assert "the model cuts 79% of windows short" in wide


def test_until_the_model_is_ready_the_line_says_what_its_engine_is_doing() -> None:
    def opening(note: str | None) -> str:
        return status_text(None, "m", WindowParams(), 5, 0, 137, None, width=None, opening=note).plain

    assert opening(None).startswith("m: loading (starting its process)")
    written = "writing all-MiniLM-L6-v2 as an ONNX graph once, with no torch to import"
    assert opening(written).startswith(written + " · 1000/200 chars")
    assert "importing" not in opening(None), "nothing is imported yet: a warm start imports no torch at all"
    narrow = status_text(None, "m", WindowParams(), 5, 0, 137, None, width=78, opening=written).plain
    assert narrow == "m: loading · 1000/200 chars · k=5 · embedded 0/137", "at 80 columns the progress stays"


def test_at_80_columns_the_time_left_gives_way_to_the_share_cut_short_not_both_at_once() -> None:
    """78 columns hold the progress and one of the two; the share cut short is the one kept."""

    def line(width: int | None) -> str:
        return status_text(
            MODEL, "m", WindowParams(), 5, 9_096, 100_636, 31.0, cut_short=0.53, width=width
        ).plain

    assert line(78) == "all-MiniLM-L6-v2 · 1000/200 chars · embedded 9,096/100,636 · 53% cut short"
    assert line(88).endswith("embedded 9,096/100,636 (49 min left) · 53% cut short")
    for width in range(58, 200):
        assert len(line(width)) <= width


@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_the_hit_summary_names_any_question_on_one_line_and_never_more_than_its_start(question: str) -> None:
    """A pasted page of a question took the whole hits pane at 80x24 (found by a newcomer): the
    summary quotes its start and its length instead, on one line."""
    from raglens.ui.status import QUESTION_SHOWN_CHARS, question_label

    label = question_label(question)
    one_line = " ".join(question.split())
    assert "\n" not in label and "\r" not in label
    if len(one_line) <= QUESTION_SHOWN_CHARS:
        assert label == one_line
    else:
        start, _, length = label.partition("… (")
        assert one_line.startswith(start) and len(start) < QUESTION_SHOWN_CHARS
        assert length == f"{len(one_line):,} characters)"


def test_a_long_question_s_summary_keeps_the_ranking_s_words() -> None:
    from raglens.ui.status import ranked_summary

    summary = ranked_summary("why " * 800, 66, 66, 5, "fp32").plain
    assert summary.startswith("top 5 for why why") and "(3,199 characters)" in summary
    assert summary.endswith("· ranked over all 66 windows") and len(summary) < 160
