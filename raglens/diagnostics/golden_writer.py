"""Adding a case to a golden file: one line appended in one write, never a line already there changed.

The explorer's ``g`` (a pinned answer) and ``N`` (a negative) write through here. A question the file
already holds is refused, with the line that holds it: an exact duplicate would count twice in
``raglens eval``, and a second answer for the same question would contradict the first. Changing a
case is an edit of the file, which raglens leaves to the user, so nothing in it is ever lost.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from raglens.diagnostics.golden import MAX_GOLDEN_BYTES, GoldenFileError, parse_golden_line
from raglens.diagnostics.lexical import query_identifier
from raglens.diagnostics.question_language import question_language
from raglens.model_languages import ModelLanguages


@dataclass(frozen=True)
class NewCase:
    """A question and the refs expected to answer it (none: nothing in the corpus does)."""

    query: str
    expect: tuple[str, ...]
    kind: str

    @property
    def is_negative(self) -> bool:
        return not self.expect

    def json_line(self) -> str:
        """The line ``raglens eval`` reads, without its newline."""
        return json.dumps(
            {"q": self.query, "expect": list(self.expect), "kind": self.kind}, ensure_ascii=False
        )


class CaseRefused(GoldenFileError):
    """The golden file already holds the question: saving it again would count it twice."""


def held_at(golden_text: str, case: NewCase) -> str | None:
    """Why ``case`` cannot be added to a file holding ``golden_text``, or None if it can.

    Lines that do not parse are skipped here: they are the user's to fix, and ``raglens eval`` names
    them; they must not stop a good case from being saved.
    """
    for number, line in enumerate(golden_text.split("\n"), start=1):
        try:
            held = parse_golden_line(line, number)
        except GoldenFileError:
            continue
        if held is None or held.query.strip() != case.query.strip():
            continue
        held_refs = sorted(str(ref) for ref in held.expect)
        if held_refs == sorted(case.expect):
            return f"line {number} already holds this case"
        answer = ", ".join(held_refs) if held_refs else "nothing (a negative)"
        return (
            f"line {number} already holds this question, expecting {answer}: "
            "edit that line to change its answer (raglens only appends)"
        )
    return None


def read_golden_text(path: Path) -> str:
    """The golden file's text as far as a case check needs it; empty when there is no file yet."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_GOLDEN_BYTES + 1)
    except FileNotFoundError:
        return ""
    except OSError as error:
        raise GoldenFileError(f"cannot read {path}: {error.strerror or error}") from None
    return data.decode("utf-8-sig", errors="replace")


def check_case(path: Path, case: NewCase) -> None:
    """Raise CaseRefused, saying which line, if the golden file at ``path`` already holds the question."""
    why = held_at(read_golden_text(path), case)
    if why is not None:
        raise CaseRefused(f"not saved: {why} of {path}")


def append_case(path: Path, case: NewCase) -> int:
    """Append ``case`` to the golden file at ``path`` as one line; return its line number.

    One ``write`` on a file opened for appending: a reader sees the file as it was or with the whole
    line. A short write (a full disk) is cut back off, so the file ends as it was.
    """
    check_case(path, case)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as error:
        raise GoldenFileError(f"cannot write {path}: {error.strerror or error}") from None
    try:
        size = os.fstat(descriptor).st_size
        ends_cleanly = size == 0 or _last_byte(path) == b"\n"
        line = ("" if ends_cleanly else "\n") + case.json_line() + "\n"
        payload = line.encode("utf-8")
        try:
            written = os.write(descriptor, payload)
            if written != len(payload):
                raise OSError(f"wrote {written} of {len(payload)} bytes")
            os.fsync(descriptor)
        except OSError as error:
            os.ftruncate(descriptor, size)  # the file as it was, not a torn line
            raise GoldenFileError(f"cannot write {path}: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
    return read_golden_text(path).count("\n")


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1)


def suggested_kind(query: str, *, negative: bool, languages: ModelLanguages | None) -> str:
    """The kind a new case most likely is: unanswerable, an identifier, another language, or prose."""
    if negative:
        return "unanswerable"
    if query_identifier(query) is not None:
        return "identifier"
    language = question_language(query, languages)
    if language is not None and not language.model_reads_it:
        return "other-language"
    return "prose"
