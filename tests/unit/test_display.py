"""Text shapes shared by the CLI and the app."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens.display import describe_age, fit_citation


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(-3, "0 s"), (40, "40 s"), (89, "89 s"), (600, "10 min"), (3 * 3600, "3 h"), (5 * 86400, "5 days")],
)
def test_ages_are_said_the_way_people_say_them(seconds: float, said: str) -> None:
    assert describe_age(seconds) == said


@given(
    st.text(alphabet="abc/._-", min_size=1, max_size=60),
    st.integers(1, 99999),
    st.integers(0, 120),
)
def test_a_fitted_citation_keeps_the_line_range_whole_and_fits_when_it_can(
    path: str, start: int, room: int
) -> None:
    line_range = f":L{start}-L{start + 7}"
    fitted = fit_citation(path, line_range, room)
    assert fitted.endswith(line_range), "the line range is never cut"
    if len(path) + len(line_range) <= room:
        assert fitted == path + line_range
    elif room > len(line_range):
        assert len(fitted) <= room
        assert fitted.startswith("…") and path.endswith(fitted[1 : -len(line_range)])


def test_a_long_path_loses_its_folders_before_its_file_name() -> None:
    path, lines = "src/click/shell_completion.py", ":L568-L590"
    assert fit_citation(path, lines, 80) == path + lines
    assert fit_citation(path, lines, 34) == "…/shell_completion.py:L568-L590"
    assert fit_citation(path, lines, 25) == "…_completion.py:L568-L590", "too narrow for the name: cut it"
    assert fit_citation(path, lines, 5) == lines
    assert fit_citation("__", ":L1-L8", 7) == "…:L1-L8", "no room for the path: … says there was one"
