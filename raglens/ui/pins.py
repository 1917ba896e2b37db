"""The answers the user pinned as expected, kept with the question they were pinned for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from raglens.diagnostics.golden import ExpectedRef
    from raglens.diagnostics.symbols import Definition


@dataclass(frozen=True)
class Pins:
    """Expected answers and their definitions (none for a file), for one question only.

    Editing the question keeps the pins, shown as pinned for the old question, but they are neither
    ranked nor saved with another question: a label belongs to the question it was made for.
    """

    question: str
    answers: Mapping[ExpectedRef, tuple[Definition, ...]]

    def for_question(self, question: str) -> Mapping[ExpectedRef, tuple[Definition, ...]]:
        """The pinned answers when ``question`` is the one they were pinned for; else none."""
        return self.answers if question == self.question else {}

    def refs(self) -> tuple[str, ...]:
        """The pinned refs as a golden file writes them."""
        return tuple(str(ref) for ref in self.answers)
