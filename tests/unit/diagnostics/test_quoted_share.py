"""The probes' quoted-share line: exact only when the shares add up to the score shown."""

from __future__ import annotations

from raglens.attribution import Explanation, TokenKind, TokenShare
from raglens.diagnostics.probes import ProbeContext, ProbePlan, quoted_share
from raglens.search import Hit, SearchResult
from raglens.windows import Unit, Window

TEXT = "def drain_pending_jobs(queue): pass"


def context_explaining(total: float) -> tuple[ProbeContext, Hit]:
    window = Window("q.py", Unit.CHARS, 0, 0, len(TEXT), 1, 1)
    shares = (
        TokenShare("drain_pending_jobs", 4, 22, 0.25, TokenKind.CONTENT),
        TokenShare("queue", 23, 28, total - 0.25, TokenKind.CONTENT),
    )
    explanation = Explanation("exact: mean pooling", total, shares, ())

    def unused_ranker(query: str, k: int) -> SearchResult:
        raise AssertionError("the quoted share ranks nothing")

    context = ProbeContext(
        {"q.py": TEXT},
        [window],
        unused_ranker,
        5,
        "m",
        ProbePlan(None, ()),
        explain=lambda q, row: explanation,
    )
    return context, Hit(1, 0.6, window, 0)


def test_the_quoted_name_carries_its_exact_share_when_the_sum_is_the_score() -> None:
    context, hit = context_explaining(0.6)
    line = quoted_share(context, "drain_pending_jobs", "drain_pending_jobs", hit)
    assert line is not None and "carry +0.250 exactly" in line


def test_a_sum_off_the_score_shown_is_never_called_exact() -> None:
    context, hit = context_explaining(0.59)
    line = quoted_share(context, "drain_pending_jobs", "drain_pending_jobs", hit)
    assert line is not None and "exactly" not in line and "not exact for the score shown" in line


def test_nothing_is_said_of_a_phrase_the_hit_does_not_quote() -> None:
    context, hit = context_explaining(0.6)
    assert quoted_share(context, "pending", "pending", hit) is None, "pending is part of a word, not a word"
