"""The words of the status line and of the hit summary, built from plain values."""

from __future__ import annotations

from rich.text import Text

from raglens.embedding_events import ModelReady
from raglens.precision import is_exact, precision_label
from raglens.windows import WindowParams


def status_text(
    model: ModelReady | None,
    model_label: str,
    params: WindowParams,
    k: int,
    embedded: int,
    total: int | None,
    windows_per_second: float | None,
    from_cache: int = 0,
) -> Text:
    """``model · dims · token limit · window params · k · embedded i/n (rate, ETA)``."""
    text = Text()
    if model is None:
        text.append(f"{model_label}: loading (importing the model libraries takes a while)", style="yellow")
    else:
        text.append(model.name, style="bold")
        text.append(" · ")
        approximate = not is_exact(model.precision)
        text.append(precision_label(model.precision), style="bold yellow" if approximate else "")
        limit = f"reads {model.max_seq_length} tokens" if model.max_seq_length else "reads everything"
        text.append(f" · {model.engine} · {model.dimension} d · {limit} · {model.device}")
    text.append(f" · {params.describe()} · k={k}")
    if total is None:
        text.append(" · reading the corpus", style="yellow")
    elif embedded < total:
        text.append(f" · embedded {embedded:,}/{total:,}", style="yellow")
        if windows_per_second:
            eta = (total - embedded) / windows_per_second
            text.append(f" ({windows_per_second:.0f} windows/s, ETA {eta:.0f} s)", style="yellow")
    else:
        text.append(f" · {total:,} windows embedded", style="green")
    if from_cache:
        text.append(f" ({from_cache:,} from the cache)", style="green")
    return text


def ranked_summary(query_label: str, ranked: int, total: int, hit_count: int, precision: str) -> Text:
    """Above the hits: how many windows the ranking covered, and whether its scores are approximate."""
    text = Text()
    text.append(f"top {hit_count} for ")
    text.append(query_label, style="bold")
    if ranked < total:
        text.append(f" · ranked over {ranked:,} of {total:,} windows (still embedding)", style="yellow")
    else:
        text.append(f" · ranked over all {total:,} windows", style="dim")
    if not is_exact(precision):
        text.append(f" · {precision_label(precision)} scores", style="bold yellow")
    return text
