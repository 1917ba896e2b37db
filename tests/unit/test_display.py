"""Text shapes shared by the CLI and the app."""

from __future__ import annotations

import pytest

from raglens.display import describe_age


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(-3, "0 s"), (40, "40 s"), (89, "89 s"), (600, "10 min"), (3 * 3600, "3 h"), (5 * 86400, "5 days")],
)
def test_ages_are_said_the_way_people_say_them(seconds: float, said: str) -> None:
    assert describe_age(seconds) == said
