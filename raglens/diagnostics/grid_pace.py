"""How long the rest of an eval grid should take, from the windows it still has to embed.

A configuration whose windows all come from the cache takes seconds; one that embeds them all can take
minutes. A pace per configuration done says "about 1 s left" after a cached row while the next one
embeds for half a minute, so the time left is the windows still to embed at the pace measured for each
model and window size (windows embedded, never those taken from the cache, per second spent embedding
them), plus each unfinished row's share of everything else (cutting, the cache, loading, scoring) at
the finished rows' mean. Where a figure it needs is not measured yet, there is no time left to show
rather than a wrong one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class EmbeddingPace:
    """Windows one model embedded (not taken from the cache) and the seconds it spent embedding them."""

    windows: int = 0
    seconds: float = 0.0

    def plus(self, windows: int, seconds: float) -> EmbeddingPace:
        """This pace with ``windows`` more embedded in ``seconds`` more."""
        return EmbeddingPace(self.windows + windows, self.seconds + seconds)


@dataclass(frozen=True)
class RowToEmbed:
    """An unfinished row: the model that embeds its windows and how many it has still to embed (None
    while not known)."""

    model: str
    windows: int | None


def seconds_left(
    rows: Sequence[RowToEmbed],
    paces: Mapping[str, EmbeddingPace],
    other_per_row: float | None,
    other_spent: float = 0.0,
) -> int | None:
    """About how long the unfinished ``rows`` take; None when that cannot be known yet.

    ``rows``: every unfinished row, the running one with only the windows it has not embedded yet.
    ``paces``: each model's windows embedded so far and the seconds that took. ``other_per_row``: the
    finished rows' mean seconds on everything but embedding (None before a row finished);
    ``other_spent``: what the running row has spent on that so far. None when no row finished, when a
    row's windows to embed are unknown, or when a model has windows to embed but embedded none yet:
    a model's pace is never lent to another, nor a cached row's to a row that embeds.
    """
    if other_per_row is None:
        return None
    embedding = 0.0
    for row in rows:
        if row.windows is None:
            return None
        if row.windows == 0:
            continue
        pace = paces.get(row.model)
        if pace is None or pace.windows == 0:
            return None
        embedding += row.windows * pace.seconds / pace.windows
    other = max(0.0, other_per_row * len(rows) - other_spent)
    return round(embedding + other)
