"""The words of the status line and of the hit summary, built from plain values."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.text import Text

from raglens.display import duration
from raglens.embedding_events import ModelReady
from raglens.precision import is_exact, precision_label
from raglens.windows import WindowParams

LAST_TO_GO = 99
"""The drop level of a part's shorter form: the share cut short goes only when nothing else is left."""
TIME_LEFT_GOES = LAST_TO_GO - 1
"""The time left's shorter form goes just before the share cut short, and not together with it: at 80
columns one of them fits where both do not."""


@dataclass(frozen=True)
class _Part:
    """Words of the status line, when they are left out (lower first, None never), and a shorter form
    that replaces them then, if any."""

    drop: int | None
    words: Text
    shorter: _Part | None = None


def status_text(
    model: ModelReady | None,
    model_label: str,
    params: WindowParams,
    k: int,
    embedded: int,
    total: int | None,
    windows_per_second: float | None,
    from_cache: int = 0,
    *,
    cut_short: float | None = None,
    width: int | None = None,
    opening: str | None = None,
) -> Text:
    """``model · precision · engine · dims · token limit · device · window params · k · embedded i/n
    (rate, time left)``, fitted to ``width`` columns by leaving out the least useful parts first.

    What goes first: the device, the dimension, the engine, the cache count, the token limit, an
    exact precision (an approximate one stays, in yellow), the rate's words; then k and the longer
    form of the share cut short; then the time left, and last the share of windows the model cuts
    short (a corpus whose windows the model mostly does not read whole must say so where it is seen).
    The model, the window parameters and the progress numbers never go: at 80 columns the line
    still says how far the index is. Until the model is ready, ``opening`` (what its engine said it
    is doing, naming the model) stands in the model's place.
    """
    parts: list[_Part] = []

    def add(
        drop: int | None,
        words: str,
        style: str = "",
        shorter: str | None = None,
        shorter_drop: int = LAST_TO_GO,
    ) -> None:
        short = None if shorter is None else _Part(shorter_drop, Text(shorter, style=style))
        parts.append(_Part(drop, Text(words, style=style), short))

    if model is None and opening is not None:
        add(3, opening, "yellow", shorter=f"{model_label}: loading")
    elif model is None:
        add(None, f"{model_label}: loading")
        add(3, " (starting its process)", "yellow")
    elif model.lexical:
        add(None, model.name, "bold")
        add(6, " · lexical scores, not cosines")
        add(2, f" · {model.engine}")
    else:
        add(None, model.name, "bold")
        approximate = not is_exact(model.precision)
        label = f" · {precision_label(model.precision)}"
        add(None if approximate else 6, label, "bold yellow" if approximate else "")
        add(2, f" · {model.engine}")
        add(1, f" · {model.dimension} d")
        add(5, f" · reads {model.max_seq_length} tokens" if model.max_seq_length else " · reads everything")
        add(0, f" · {model.device}")
    add(None, f" · {params.describe()}")
    add(8, f" · k={k}")
    if total is None:
        add(None, " · reading the corpus", "yellow")
    elif embedded < total:
        add(None, f" · embedded {embedded:,}/{total:,}", "yellow")
        if windows_per_second:
            left = duration((total - embedded) / windows_per_second)
            words, shorter = f" ({windows_per_second:.0f} windows/s, {left} left)", f" ({left} left)"
            add(7, words, "yellow", shorter, shorter_drop=TIME_LEFT_GOES)
    else:
        done = "indexed" if model is not None and model.lexical else "embedded"
        add(None, f" · {total:,} windows {done}", "green")
    if from_cache:
        add(4, f" ({from_cache:,} from the cache)", "green")
    if cut_short:  # the model stops reading some windows early: the tails of those are never embedded
        share = percent_floor(cut_short)
        add(
            10,
            f" · the model cuts {share} of windows short",
            "bold red" if cut_short >= 0.25 else "yellow",
            f" · {share} cut short",
        )
    if width is not None:
        levels = {part.drop for part in parts} | {part.shorter.drop for part in parts if part.shorter}
        for level in sorted(level for level in levels if level is not None):
            if sum(part.words.cell_len for part in parts) <= width:
                break
            parts = [
                (part.shorter or part) if part.drop == level else part
                for part in parts
                if part.drop != level or part.shorter is not None
            ]
    text = Text()
    for part in parts:
        text.append_text(part.words)
    return text


def percent_floor(share: float) -> str:
    """``<1%`` for a share above nothing, else the whole percent below it: 99.6% is not all."""
    return "<1%" if 0 < share < 0.01 else f"{math.floor(share * 100)}%"


QUESTION_SHOWN_CHARS = 100
"""The most of a question the hit summary quotes: a pasted page would push every hit off the pane."""


def question_label(question: str, limit: int = QUESTION_SHOWN_CHARS) -> str:
    """The question as the hit summary names it: on one line, and past ``limit`` characters only its
    start and its length (the start says which question the hits are of; the hits stay in view)."""
    one_line = " ".join(question.split())
    if len(one_line) <= limit:
        return one_line
    return f"{one_line[: limit - 1].rstrip()}… ({len(one_line):,} characters)"


def ranked_summary(
    query_label: str, ranked: int, total: int, hit_count: int, precision: str, *, lexical: bool = False
) -> Text:
    """Above the hits: how many windows the ranking covered, and whether its scores are approximate.

    A ``lexical`` ranking (BM25) scores every window at once; ``ranked`` are those sharing a word with
    the question, the only ones BM25 retrieves.
    """
    text = Text()
    text.append(f"top {hit_count} for ")
    text.append(question_label(query_label), style="bold")
    if lexical:
        text.append(f" · BM25 over all {total:,} windows: {ranked:,} share a word with it", style="dim")
        return text
    if ranked < total:
        text.append(f" · ranked over {ranked:,} of {total:,} windows (still embedding)", style="yellow")
    else:
        text.append(f" · ranked over all {total:,} windows", style="dim")
    if not is_exact(precision):
        text.append(f" · {precision_label(precision)} scores", style="bold yellow")
    return text
