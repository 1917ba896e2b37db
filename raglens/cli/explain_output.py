"""``--explain``: each hit's score taken apart into token shares, as lines of text and as JSON."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from raglens.attribution import (
    Attribution,
    Unexplained,
    describe_exactness,
    describe_share,
    describe_split,
)
from raglens.printable import printable

STRONGEST_WORDS = 6


def explanation_document(attribution: Attribution, shown: float) -> dict[str, Any]:
    """One hit's ``explanation`` in ``--json``: every token's share, or why there are none."""
    if isinstance(attribution, Unexplained):
        return {"method": None, "unexplained": attribution.reason}
    return {
        "method": attribution.method,
        "shares_sum": attribution.total,
        "residual": attribution.residual(shown),
        "by_kind": {kind.value: share for kind, share in attribution.share_by_kind().items()},
        "window_tokens": [
            {
                "token": s.token,
                "start": s.start,
                "end": s.end,
                "contribution": s.contribution,
                "kind": s.kind.value,
            }
            for s in attribution.window_tokens
        ],
        "query_tokens": [
            {"token": s.token, "contribution": s.contribution, "kind": s.kind.value}
            for s in attribution.query_tokens
        ],
    }


def explanation_lines(attribution: Attribution, shown: float, question: str, window_text: str) -> list[Text]:
    """A hit's why, in four lines: the split by kind, its exactness, its strongest words, the question's
    words."""
    if isinstance(attribution, Unexplained):
        return [Text(f"why: {attribution.reason}", style="dim")]
    strongest = " · ".join(
        printable(word.word) + describe_share(word)
        for word in attribution.strongest_words(window_text, STRONGEST_WORDS)
    )
    asked = " · ".join(
        printable(word.word) + describe_share(word, asked=True) for word in attribution.query_words(question)
    )
    return [
        Text(f"why: {describe_split(attribution)}", style="bold"),
        Text(f"     {describe_exactness(attribution, shown)}", style="dim"),
        Text(f"     strongest in the window: {strongest}"),
        Text(f"     the question's words: {asked}"),
    ]
