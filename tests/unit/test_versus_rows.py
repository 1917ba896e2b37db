"""B's rows keep every hit's file name and line range whole at any width: folders give way first."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from raglens.search import Hit
from raglens.ui.widgets.versus_hits import _hit_line
from raglens.windows import Unit, Window

names = st.text(st.sampled_from("abcdefghij_"), min_size=1, max_size=30)


@given(
    folders=st.lists(names, max_size=5),
    name=names,
    width=st.integers(20, 170),
    moved=st.sampled_from(["=", "↑2", "new (A #9)", "gone (B #14)"]),
)
def test_a_row_keeps_the_file_name_and_line_range_whole(
    folders: list[str], name: str, width: int, moved: str
) -> None:
    path = "/".join([*folders, name + ".py"])
    window = Window(path, Unit.CHARS, 0, 0, 10, 544, 576)
    row = _hit_line(Hit(1, 0.5, window, 0), 0.5, moved, width)
    lines = row.plain.split("\n")[1:]
    citation = name + ".py:L544-L576"
    # Whole: the name starts the citation, after a folder's slash or a space, never mid-name.
    assert any(re.search(r"(^|[ /])" + re.escape(citation), line) for line in lines), lines
    assert any(moved in line for line in lines)
    if len(f"…/{name}.py:L544-L576") + 3 <= width:
        assert all(len(line) <= width for line in lines), (width, lines)


def test_the_issue_s_two_files_read_as_two() -> None:
    """At 160 columns `…_applications.py` beside `…/applications.py` read as one file."""
    test_file = Window("tests/test_applications.py", Unit.CHARS, 0, 0, 10, 544, 576)
    line = _hit_line(Hit(3, 0.41, test_file, 0), 0.41, "new (A #12)", 40).plain
    assert "test_applications.py:L544-L576" in line
