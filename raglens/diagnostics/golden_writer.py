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

from raglens.diagnostics.golden import MAX_GOLDEN_BYTES, GoldenFileError, parse_golden_line, question_problem
from raglens.diagnostics.lexical import query_identifier
from raglens.printable import SHOWN_PATH_CHARS, shortened


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
        shown = [shortened(ref, SHOWN_PATH_CHARS) for ref in held_refs]
        answer = ", ".join(shown) if shown else "nothing (a negative)"
        return (
            f"line {number} already holds this question, expecting {answer}: "
            "edit that line to change its answer (raglens only appends)"
        )
    return None


def read_golden_text(path: Path) -> str:
    """The golden file's text; empty when there is no file yet, an error past MAX_GOLDEN_BYTES (raglens
    eval would refuse that file, so a case added to it would never be read)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_GOLDEN_BYTES + 1)
    except FileNotFoundError:
        return ""
    except OSError as error:
        raise GoldenFileError(f"cannot read {path}: {error.strerror or error}") from None
    if len(data) > MAX_GOLDEN_BYTES:
        raise GoldenFileError(
            f"{path} is larger than {MAX_GOLDEN_BYTES // 2**20} MiB: raglens eval reads no more"
        )
    return data.decode("utf-8-sig", errors="replace")


def check_case(path: Path, case: NewCase) -> str:
    """The golden file's text, after checking it does not hold the question (CaseRefused, with its line)
    and that ``raglens eval`` would take the question (not empty, not longer than MAX_QUESTION_CHARS)."""
    problem = question_problem(case.query)
    if problem is not None:
        raise CaseRefused(f"not saved: the question {problem}")
    text = read_golden_text(path)
    why = held_at(text, case)
    if why is not None:
        raise CaseRefused(f"not saved: {path}: {why}")
    return text


def append_case(path: Path, case: NewCase) -> int:
    """Append ``case`` to the golden file at ``path`` as one line; return its line number.

    One ``write`` on a file opened for appending, so the line is never interleaved with another
    writer's on a local file system. A short write (a full disk) is cut back off when nothing else was
    appended meanwhile, so the file ends as it was.
    """
    text = check_case(path, case)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as error:
        raise GoldenFileError(f"cannot write {path}: {error.strerror or error}") from None
    try:
        size = os.fstat(descriptor).st_size
        ends_cleanly = size == 0 or _last_byte(path) == b"\n"
        payload = (("" if ends_cleanly else "\n") + case.json_line() + "\n").encode("utf-8")
        written = 0
        try:
            written = os.write(descriptor, payload)
            if written != len(payload):
                raise OSError(f"wrote {written} of {len(payload)} bytes")
            os.fsync(descriptor)
        except OSError as error:
            if os.fstat(descriptor).st_size == size + written:  # only our bytes came after ``size``
                os.ftruncate(descriptor, size)
            raise GoldenFileError(f"cannot write {path}: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
    # The lines the check read, a separator if the last had no newline, then this one.
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1) + 1


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1)


def suggested_kind(query: str, *, negative: bool, other_language: bool) -> str:
    """The kind a new case most likely is: unanswerable, an identifier, another language, or prose.

    ``other_language``: the question was told to be in a language the model does not read (as its
    ranking's diagnostics say: nothing is identified twice).
    """
    if negative:
        return "unanswerable"
    if query_identifier(query) is not None:
        return "identifier"
    return "other-language" if other_language else "prose"
