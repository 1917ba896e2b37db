"""The exact context an LLM would receive for a query: the top-k windows, cited, around the question."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from raglens.printable import printable_name
from raglens.search import Hit

INSTRUCTIONS = (
    "Answer the question using only the context below. Cite the sources you use as [n]. "
    "If the context does not contain the answer, say that you do not know."
)


@dataclass(frozen=True)
class PromptPreview:
    """The assembled prompt and its size."""

    text: str
    token_count: int | None
    """Tokens of the prompt for the embedding model's tokenizer; None when it is not available."""
    context_count: int
    """How many windows the context holds."""


def assemble_prompt(query: str, hits: Sequence[Hit], texts: Mapping[str, str]) -> str:
    """Instructions, each hit's raw text under its ``[n] path:Lstart-Lend`` citation, then the question."""
    blocks = [INSTRUCTIONS, "", "Context:"]
    for position, hit in enumerate(hits, start=1):
        window_text = hit.window.text_in(texts[hit.window.path])
        blocks.append(f"[{position}] {printable_name(hit.window.citation)}\n{window_text.rstrip()}\n")
    blocks.append(f"Question: {query.strip()}")
    blocks.append("Answer:")
    return "\n".join(blocks)
