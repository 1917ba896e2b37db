"""Golden sets: questions with the files or symbols that should answer them, one JSON object a line.

The format is milvus-rag's: ``q``, ``expect`` (``path``, ``path::symbol`` or, raglens's own,
``path:L12-L30``; ``[]`` for a question the corpus cannot answer), ``mode`` (``all`` or ``any``)
and a free ``kind`` label; ``#`` lines and blank lines are allowed.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raglens.errors import BadInputError
from raglens.printable import SHOWN_PATH_CHARS, quoted

MODES = ("all", "any")
CASE_KINDS = ("identifier", "prose", "other-language", "unanswerable")
"""The kinds a case saved from the explorer can have: the failure lab's families of question
(``unanswerable`` is also what a negative without a kind is counted as)."""
NEGATIVE_KINDS = ("unanswerable", "other-language")
"""The kinds a negative case can have: a question nothing answers, in the model's language or not."""


class GoldenFileError(BadInputError):
    """A golden file that cannot be read, or a line of it that is not a valid case."""


MAX_QUESTION_CHARS = 4_000
"""The longest question raglens takes (a golden case's ``q``, a QUERY, a ``--probe``): the model reads
only its first few hundred tokens, and a 51 MB one took a minute and 6 GB to tokenize."""


def question_problem(question: str) -> str | None:
    """What is wrong with ``question`` (empty, or longer than MAX_QUESTION_CHARS); None if nothing."""
    if not question.strip():
        return "is empty; give it a question"
    if len(question) > MAX_QUESTION_CHARS:
        return (
            f"is {len(question):,} characters ({quoted(question)}); a question may have at most "
            f"{MAX_QUESTION_CHARS:,}: the model reads only its first few hundred tokens"
        )
    return None


def check_question(question: str, what: str) -> None:
    """Refuse an empty or runaway question, named ``what`` (``QUERY``), with one line (BadInputError)."""
    problem = question_problem(question)
    if problem is not None:
        raise BadInputError(f"{what} {problem}")


_LINE_RANGE = re.compile(r"^(?P<path>.+):L(?P<first>[0-9]+)(?:-L(?P<last>[0-9]+))?$")
"""``path:L12-L30`` or ``path:L12``, the form of every citation raglens prints."""


@dataclass(frozen=True)
class ExpectedRef:
    """One expected answer: a file, a symbol defined in it, or a range of its lines."""

    path: str
    symbol: str | None = None
    """A dotted name such as ``Queue.drain``; None for the whole file or a line range."""
    lines: tuple[int, int] | None = None
    """The first and last 1-based line of the answer; None for the whole file or a symbol."""

    def __str__(self) -> str:
        if self.symbol is not None:
            return f"{self.path}::{self.symbol}"
        if self.lines is not None:
            return f"{self.path}:L{self.lines[0]}-L{self.lines[1]}"
        return self.path

    @property
    def is_whole_file(self) -> bool:
        """Whether any window of the file answers (no symbol or line range narrows it to a span)."""
        return self.symbol is None and self.lines is None

    @classmethod
    def parse(cls, text: str) -> ExpectedRef:
        """``path``, ``path::symbol`` or ``path:Lfirst-Llast``; ValueError for anything else."""
        path, separator, symbol = text.partition("::")
        path = path.strip().replace("\\", "/").removeprefix("./")
        lines = None
        if not separator and (match := _LINE_RANGE.match(path)) is not None:
            path = match["path"]
            first = int(match["first"])
            last = int(match["last"]) if match["last"] is not None else first
            if first < 1:
                raise ValueError(f"{quoted(text, SHOWN_PATH_CHARS)}: lines are numbered from 1")
            if last < first:
                raise ValueError(f"{quoted(text, SHOWN_PATH_CHARS)}: the line range ends before it starts")
            lines = (first, last)
        if not path:
            raise ValueError(f"{quoted(text, SHOWN_PATH_CHARS)} names no path")
        if separator and not symbol.strip():
            raise ValueError(f"{quoted(text, SHOWN_PATH_CHARS)} has '::' but no symbol after it")
        return cls(path, symbol.strip() or None, lines)


@dataclass(frozen=True)
class GoldenCase:
    """One question and what should answer it."""

    line: int
    """The 1-based line of the golden file it came from."""
    query: str
    expect: tuple[ExpectedRef, ...]
    mode: str = "all"
    kind: str = "unlabelled"

    @property
    def is_negative(self) -> bool:
        """A question the corpus cannot answer: nothing is expected."""
        return not self.expect


def _case_from(document: Any, line: int) -> GoldenCase:
    if not isinstance(document, dict):
        raise ValueError(f"expected a JSON object, got {type(document).__name__}")
    query = document.get("q")
    if not isinstance(query, str) or not query.strip():
        raise ValueError('"q" must be a non-empty string')
    problem = question_problem(query)
    if problem is not None:
        raise ValueError(f'"q" {problem}')
    expect = document.get("expect")
    if not isinstance(expect, list) or not all(isinstance(entry, str) for entry in expect):
        raise ValueError(
            '"expect" must be a list of "path", "path::symbol" or "path:L12-L30" strings ([] for a negative)'
        )
    mode = document.get("mode", "all")
    if mode not in MODES:
        shown = quoted(mode) if isinstance(mode, str) else f"a JSON {type(mode).__name__}"
        raise ValueError(f'"mode" must be "all" or "any", got {shown}')
    kind = document.get("kind", "unanswerable" if not expect else "unlabelled")
    if not isinstance(kind, str) or not kind.strip():
        raise ValueError('"kind" must be a non-empty string when given')
    refs = tuple(ExpectedRef.parse(entry) for entry in expect)
    return GoldenCase(line, query, refs, mode, kind.strip())


def parse_golden_line(text: str, line: int) -> GoldenCase | None:
    """The case on one line of a golden file; None for a blank or ``#`` line.

    Raises only GoldenFileError, with the line number in its message.
    """
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    try:
        document = json.loads(stripped)
        return _case_from(document, line)
    except (ValueError, RecursionError) as error:
        detail = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        raise GoldenFileError(f"line {line}: {detail}") from None


MAX_GOLDEN_BYTES = 64 * 2**20
"""The most a golden file is read: ``/dev/zero`` or a runaway generator must not fill memory."""


def read_golden(path: str | os.PathLike[str]) -> list[GoldenCase]:
    """Every case of the golden file at ``path``; an error naming the file and line for a bad one."""
    source = Path(path)
    try:
        with source.open("rb") as handle:  # a pipe works too: raglens eval . <(make-golden)
            data = handle.read(MAX_GOLDEN_BYTES + 1)
    except OSError as error:
        raise GoldenFileError(f"cannot read golden file {source}: {error.strerror or error}") from None
    if len(data) > MAX_GOLDEN_BYTES:
        raise GoldenFileError(
            f"{source} is larger than {MAX_GOLDEN_BYTES // 2**20} MiB; "
            "a golden set is one JSON line a question"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise GoldenFileError(f"{source}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    cases = []
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: JSON may hold U+2028
        try:
            case = parse_golden_line(line, number)
        except GoldenFileError as error:
            raise GoldenFileError(f"{source}: {error}") from None
        if case is not None:
            cases.append(case)
    if not cases:
        raise GoldenFileError(f"{source} holds no cases: one JSON object per line, e.g. " + EXAMPLE_LINE)
    return cases


EXAMPLE_LINE = '{"q": "how are jobs retried?", "expect": ["tidepool/retry.py"], "kind": "prose-en"}'
