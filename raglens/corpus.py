"""Find a corpus's text files, read them, and record every file left out with its reason."""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from fnmatch import translate
from pathlib import Path
from typing import TYPE_CHECKING

from raglens.decoding import decode_bytes
from raglens.errors import BadInputError, NothingIndexableError
from raglens.held_text import HeldText, hold, hold_utf8, holds, text_of
from raglens.lines import LINE_BREAK
from raglens.printable import printable_name

if TYPE_CHECKING:
    import pathspec

    from raglens.corpus_memo import ReadingMemo

DEFAULT_MAX_FILE_BYTES = 1_000_000
READ_FORMAT = 1
"""Which reading of files this is: raise it with any change to what a file reads to (decoding, the
skip rules), so the memo of files as last read (``corpus_memo``) reads every file again. A test pins
what the sample corpus reads to."""

SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        "dist",
        "build",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".eggs",
        "site-packages",
        "vendor",
        "bower_components",
        ".next",
        ".gradle",
    }
)
"""Folders that hold vendored or generated files, skipped whatever the ignore rules say."""

SKIPPED_FILE_PATTERNS = (
    "*.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "go.sum",
    "*.min.js",
    "*.min.css",
    "*.js.map",
    "*.css.map",
)
"""Lock files and minified bundles: text, but generated and of no use to a reader."""
_GENERATED_NAME = re.compile("|".join(translate(pattern) for pattern in SKIPPED_FILE_PATTERNS))
"""The patterns as one expression: nine ``fnmatch`` calls a file took 0.2 s of reading 10k files."""

_GIT_TIMEOUT_S = 30


class SkipReason(str, Enum):
    """Why a file of the corpus is not indexed."""

    IGNORED = "ignored"
    VENDORED = "vendored"
    GENERATED = "generated"
    BINARY = "binary"
    TOO_LARGE = "too large"
    EMPTY = "empty"
    SYMLINK = "symlink"
    NOT_A_FILE = "not a file"
    UNREADABLE = "unreadable"
    VANISHED = "vanished"


@dataclass(frozen=True, init=False, slots=True)
class SourceFile:
    """One indexable file and its decoded text (held as :mod:`raglens.held_text` holds it).

    Slotted: a corpus of 10k files holds 10k of these.
    """

    path: str
    """Path relative to the corpus root, with forward slashes."""
    held: HeldText = field(repr=False)
    """The text, or its UTF-8 where that takes less memory; read it as ``text``."""
    length: int
    """The text's length in characters."""
    encoding: str
    size_bytes: int
    decoding_note: str
    """Empty when the bytes decoded cleanly; otherwise what was replaced or guessed."""
    modified_ns: int
    """The file's modification time when it was read, to tell later whether it changed."""

    def __init__(
        self,
        path: str,
        text: str,
        encoding: str,
        size_bytes: int,
        decoding_note: str = "",
        modified_ns: int = 0,
    ) -> None:
        self._set(path, hold(text), len(text), encoding, size_bytes, decoding_note, modified_ns)

    @classmethod
    def from_utf8(
        cls,
        path: str,
        data: bytes | memoryview,
        encoding: str,
        size_bytes: int,
        decoding_note: str,
        modified_ns: int,
    ) -> SourceFile:
        """The file whose text's UTF-8 (``surrogatepass``) is ``data`` (the memo keeps texts so)."""
        source = object.__new__(cls)
        held, length = hold_utf8(data)
        source._set(path, held, length, encoding, size_bytes, decoding_note, modified_ns)
        return source

    def _set(
        self,
        path: str,
        held: HeldText,
        length: int,
        encoding: str,
        size_bytes: int,
        decoding_note: str,
        modified_ns: int,
    ) -> None:
        for name, value in (
            ("path", path),
            ("held", held),
            ("length", length),
            ("encoding", encoding),
            ("size_bytes", size_bytes),
            ("decoding_note", decoding_note),
            ("modified_ns", modified_ns),
        ):
            object.__setattr__(self, name, value)

    @property
    def text(self) -> str:
        """The file's decoded text."""
        return text_of(self.held)

    def holds(self, needle: str) -> bool:
        """Whether the text contains ``needle`` (a text held as UTF-8 is not decoded to tell)."""
        return holds(self.held, needle)


@dataclass(frozen=True)
class SkippedFile:
    """A file (or a whole folder, with a trailing slash) that is not indexed."""

    path: str
    reason: SkipReason
    detail: str
    """The reason in words a user can act on."""


LARGEST_MAX_FILE_BYTES = 1 << 40
"""A file limit beyond any file raglens could hold in memory; larger numbers overflowed a read."""


@dataclass(frozen=True)
class CorpusOptions:
    """What the walker keeps."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    def __post_init__(self) -> None:
        if self.max_file_bytes <= 0:
            raise BadInputError(f"--max-file-bytes must be positive, got {self.max_file_bytes}")
        if self.max_file_bytes > LARGEST_MAX_FILE_BYTES:
            raise BadInputError(
                f"--max-file-bytes must be at most {LARGEST_MAX_FILE_BYTES:,} (1 TiB), "
                f"got {self.max_file_bytes:,}"
            )


class FileTexts(Mapping[str, str]):
    """Path to text of every file of a corpus, each decoded when read (see :mod:`raglens.held_text`)."""

    __slots__ = ("_by_path",)

    def __init__(self, by_path: Mapping[str, SourceFile]) -> None:
        self._by_path = by_path

    def __getitem__(self, path: str) -> str:
        return self._by_path[path].text

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_path)

    def __len__(self) -> int:
        return len(self._by_path)

    def __contains__(self, path: object) -> bool:
        return path in self._by_path  # (Mapping's own reads the text)

    def __eq__(self, other: object) -> bool:
        """Compared as held, not decoded: a text is held in one form only, so equal texts hold alike."""
        if isinstance(other, FileTexts):
            mine, theirs = self._by_path, other._by_path
            return mine.keys() == theirs.keys() and all(mine[p].held == theirs[p].held for p in mine)
        return super().__eq__(other)

    def held(self, path: str) -> HeldText:
        """The text of the file at ``path`` as held: equal for equal texts, and not decoded."""
        return self._by_path[path].held

    def length(self, path: str) -> int:
        """The length in characters of the text of the file at ``path``, not decoded."""
        return self._by_path[path].length

    def holding(self, needle: str) -> Iterator[tuple[str, str]]:
        """(path, text) of each file whose text contains ``needle``, in corpus order; the others are
        not decoded to tell."""
        return ((path, source.text) for path, source in self._by_path.items() if source.holds(needle))


@dataclass(frozen=True)
class Corpus:
    """The files of one input, read and ready to cut, plus everything left out."""

    root: Path
    """The resolved folder every path is relative to."""
    files: tuple[SourceFile, ...]
    skipped: tuple[SkippedFile, ...]
    listing: str
    """How the file list was made: ``git``, ``walk`` or ``file`` (a single file was given)."""
    identity: str | None = field(default=None, compare=False)
    """What names these files as read, when the memo of files as last read can (``corpus_memo``):
    stored indexes are found by it. None when read without a memo, or a file changed too recently."""
    _by_path: dict[str, SourceFile] = field(init=False, repr=False, compare=False)
    _texts: FileTexts = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_path", {f.path: f for f in self.files})
        object.__setattr__(self, "_texts", FileTexts(self._by_path))

    def file(self, path: str) -> SourceFile:
        """The indexed file at ``path``."""
        return self._by_path[path]

    def texts(self) -> FileTexts:
        """Path to text of every indexed file, in corpus order (the instruments look texts up by path).

        Made once: each ranking at 100k windows (10k files) spent 4 ms making it again."""
        return self._texts

    def changed_on_disk(self, path: str) -> bool:
        """Whether the indexed file at ``path`` was modified, resized or removed since it was read."""
        source = self.file(path)
        try:
            stat = (self.root / path).stat()
        except OSError:
            return True
        return stat.st_mtime_ns != source.modified_ns or stat.st_size != source.size_bytes


def _human_bytes(size: int) -> str:
    """``1.5 MB``-style size, in powers of 1000 like --max-file-bytes."""
    value = float(size)
    for unit in ("bytes", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def _vendored_folder(folder: str) -> SkippedFile:
    """The one skip entry that stands for a whole vendored or generated folder."""
    return SkippedFile(folder, SkipReason.VENDORED, "vendored or generated folder")


def _is_generated(name: str) -> bool:
    return _GENERATED_NAME.match(os.path.normcase(name)) is not None  # as fnmatch matches a name


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def read_source(
    root: Path, rel_path: str, options: CorpusOptions, memo: ReadingMemo | None = None
) -> SourceFile | SkippedFile:
    """Read one listed file, or say why it is skipped; never raises for a bad file.

    With ``memo``, a regular file whose ``lstat`` is the one it had when read before is not read again.
    """
    full = root / rel_path
    try:
        # One lstat says what it is: is_symlink, stat and is_file each asked the system again.
        status = full.lstat()
        if stat.S_ISLNK(status.st_mode):
            try:
                target = full.resolve(strict=True)
            except (RuntimeError, OSError) as error:
                loop = isinstance(error, RuntimeError) or getattr(error, "errno", None) == errno.ELOOP
                detail = "symlink loop" if loop else "dangling symlink: its target does not exist"
                return SkippedFile(rel_path, SkipReason.SYMLINK, detail)
            if not _is_within(target, root):
                return SkippedFile(rel_path, SkipReason.SYMLINK, "symlink to outside the root, not followed")
            inside = target.relative_to(root).as_posix() or "."
            # The target is listed under its own path, so following the link would only index it twice.
            return SkippedFile(rel_path, SkipReason.SYMLINK, f"symlink to {inside}, not followed")
        if not stat.S_ISREG(status.st_mode):
            folder = stat.S_ISDIR(status.st_mode)
            kind = "a folder (a git submodule?)" if folder else "a device, pipe or socket"
            return SkippedFile(rel_path, SkipReason.NOT_A_FILE, f"not a regular file: {kind}")
    except FileNotFoundError:
        return _vanished(rel_path)
    except OSError as error:
        return _unreadable(rel_path, error)
    if memo is None:
        return _read_regular(full, rel_path, status, options)
    recalled = memo.recall(rel_path, status)
    if recalled is not None:
        return recalled
    reading = _read_regular(full, rel_path, status, options)
    try:
        after = full.lstat()
    except OSError:
        after = None
    memo.remember(rel_path, status, reading, after)
    return reading


def _vanished(rel_path: str) -> SkippedFile:
    return SkippedFile(rel_path, SkipReason.VANISHED, "listed but no longer on disk")


def _unreadable(rel_path: str, error: OSError) -> SkippedFile:
    return SkippedFile(rel_path, SkipReason.UNREADABLE, f"cannot read: {error.strerror or error}")


def _read_regular(
    full: Path, rel_path: str, status: os.stat_result, options: CorpusOptions
) -> SourceFile | SkippedFile:
    """Read the regular file ``full``, whose ``lstat`` said ``status``, or say why it is skipped."""
    if status.st_size > options.max_file_bytes:
        return _too_large(rel_path, status.st_size, options)
    try:
        with full.open("rb") as handle:
            # Read one byte past the limit: the file may have grown since it was listed.
            data = handle.read(options.max_file_bytes + 1)
    except FileNotFoundError:
        return _vanished(rel_path)
    except OSError as error:
        return _unreadable(rel_path, error)
    if len(data) > options.max_file_bytes:
        return _too_large(rel_path, len(data), options)
    decoded = decode_bytes(data)
    if decoded is None:
        return SkippedFile(rel_path, SkipReason.BINARY, "binary: a NUL byte in the first 8 KB")
    if not decoded.text.strip():
        detail = "empty" if not decoded.text else "only whitespace"
        return SkippedFile(rel_path, SkipReason.EMPTY, detail)
    longest = _minified_line_length(decoded.text)
    if longest is not None:
        detail = f"minified or generated: a line of {longest:,} characters"
        return SkippedFile(rel_path, SkipReason.GENERATED, detail)
    data_note = _data_not_text(rel_path, decoded.text)
    if data_note is not None:
        return SkippedFile(rel_path, SkipReason.GENERATED, data_note)
    return SourceFile(rel_path, decoded.text, decoded.encoding, len(data), decoded.note, status.st_mtime_ns)


MINIFIED_LINE_CHARS = 10_000
"""A text whose lines average this long is a bundle or a data dump, not something people read."""


def _minified_line_length(text: str) -> int | None:
    """The longest line's length if ``text`` looks minified (long lines on average), else None.

    One long line in a large file (a data URL, a long table row) is not enough: the average is.
    """
    # CRLF, lone CR and LF all end a line, as raglens counts lines everywhere. Lone CRs only add lines:
    # where the LFs alone make the lines short, they are not counted (two passes of three saved).
    line_feeds = text.count("\n")
    if len(text) / (line_feeds + 1) < MINIFIED_LINE_CHARS:
        return None
    line_count = line_feeds + text.count("\r") - text.count("\r\n") + 1
    if len(text) / line_count < MINIFIED_LINE_CHARS:
        return None
    return max(len(line) for line in LINE_BREAK.split(text))


DIGIT_SHARE_OF_DATA = 0.5
"""A file whose visible characters are this much digits is numbers (coordinates, a table), not text."""
DATA_MIN_CHARS = 2_000


def _data_not_text(rel_path: str, text: str) -> str | None:
    """Why ``text`` is data rather than something to read, or None.

    An SVG's path data ("M12.5 3.25c-1.1 0-2 .9-2 2…") embeds close to every off-topic question:
    on one repository a drawing topped every control question of the noise floor.
    """
    if rel_path.lower().endswith((".svg", ".svgz")):
        return "a vector drawing (SVG): coordinates, not text"
    # Counted on the UTF-8 bytes, each of these characters one byte there, by deleting them in one
    # C pass each: fourteen str.count passes took 0.7 s of reading a 78 MB corpus.
    encoded = text.encode("utf-8", "surrogatepass")
    visible = len(text) - (len(encoded) - len(encoded.translate(None, b" \t\n\r")))
    if visible < DATA_MIN_CHARS:
        return None
    digits = len(encoded) - len(encoded.translate(None, b"0123456789"))
    if digits / visible < DIGIT_SHARE_OF_DATA:
        return None
    return f"data, not text: {digits / visible:.0%} of its characters are digits"


def _too_large(rel_path: str, size: int, options: CorpusOptions) -> SkippedFile:
    limit = _human_bytes(options.max_file_bytes)
    return SkippedFile(
        rel_path,
        SkipReason.TOO_LARGE,
        f"too large: {_human_bytes(size)} over the {limit} limit (--max-file-bytes)",
    )


def _run_git(root: Path, *args: str) -> bytes | None:
    """Git's stdout for ``args`` run in ``root``, or None when git is missing or refuses."""
    try:
        completed = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return completed.stdout if completed.returncode == 0 else None


def _git_paths(output: bytes) -> list[str]:
    return sorted({os.fsdecode(raw) for raw in output.split(b"\0") if raw})


def _list_with_git(root: Path) -> tuple[list[str], list[SkippedFile]] | None:
    """Tracked plus untracked-but-not-ignored files under ``root``, or None outside a git work tree."""
    inside = _run_git(root, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.strip() != b"true":
        return None
    listed = _run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed is None:
        return None
    ignored_output = _run_git(
        root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"
    )
    ignored_paths = _git_paths(ignored_output or b"")
    folders = tuple(path for path in ignored_paths if path.endswith("/"))
    ignored = [
        SkippedFile(path, SkipReason.IGNORED, "ignored by git (.gitignore or an exclude rule)")
        for path in ignored_paths
        # A folder ignored by its own .gitignore is listed whole and then file by file: keep the folder.
        if not any(path != folder and path.startswith(folder) for folder in folders)
    ]
    return _git_paths(listed), ignored


MAX_IGNORE_FILE_BYTES = 1 << 20
"""Ignore files larger than this are not read (real ones are kilobytes)."""


def _ignore_file_lines(path: Path) -> list[str] | None:
    """The lines of the ignore file at ``path``, or None when it is absent or not a small regular file.

    A FIFO named .gitignore would block the walk forever, and one linked to /dev/zero never ends.
    """
    try:
        if not stat.S_ISREG(path.stat().st_mode) or path.stat().st_size > MAX_IGNORE_FILE_BYTES:
            return None
        with path.open("rb") as stream:
            data = stream.read(MAX_IGNORE_FILE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_IGNORE_FILE_BYTES:
        return None
    return data.decode("utf-8", errors="replace").splitlines()


class _IgnoreRules:
    """The .gitignore files met on the way down a walk, deepest last."""

    def __init__(self, layers: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()) -> None:
        self._layers = layers

    def entering(self, folder: Path, rel_folder: str) -> _IgnoreRules:
        """The rules that apply inside ``folder``, including its own .gitignore if it has one."""
        lines = _ignore_file_lines(folder / ".gitignore")
        if lines is None:
            return self
        import pathspec  # only walks outside git need it; importing it costs the app's first frame 30 ms

        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        return _IgnoreRules((*self._layers, (rel_folder, spec)))

    def ignores(self, rel_path: str, is_dir: bool) -> bool:
        """Whether git would ignore ``rel_path``: the deepest .gitignore with a matching rule decides."""
        for base, spec in reversed(self._layers):
            relative = rel_path[len(base) + 1 :] if base else rel_path
            result = spec.check_file(relative + "/" if is_dir else relative)
            if result.include is not None:
                return bool(result.include)
        return False


def _list_by_walking(root: Path) -> tuple[list[str], list[SkippedFile]]:
    """Every candidate file under ``root``, honouring each .gitignore found on the way."""
    candidates: list[str] = []
    skipped: list[SkippedFile] = []
    pending: list[tuple[Path, str, _IgnoreRules]] = [(root, "", _IgnoreRules().entering(root, ""))]
    while pending:
        folder, rel_folder, rules = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as error:
            skipped.append(
                SkippedFile(f"{rel_folder}/", SkipReason.UNREADABLE, f"cannot list: {error.strerror}")
            )
            continue
        for entry in entries:
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir and entry.name in SKIPPED_DIRECTORIES:
                skipped.append(_vendored_folder(f"{rel}/"))
            elif rules.ignores(rel, is_dir):
                shown = f"{rel}/" if is_dir else rel
                skipped.append(SkippedFile(shown, SkipReason.IGNORED, "ignored by a .gitignore"))
            elif is_dir:
                pending.append((Path(entry.path), rel, rules.entering(Path(entry.path), rel)))
            else:
                candidates.append(rel)
    return candidates, skipped


def _drop_default_excludes(paths: Iterable[str]) -> tuple[list[str], list[SkippedFile]]:
    """Split listed paths into kept ones and the vendored folders and generated files they hold."""
    kept: list[str] = []
    skipped: list[SkippedFile] = []
    seen_folders: set[str] = set()
    for path in paths:
        parts = path.split("/")
        vendored = next((i for i, part in enumerate(parts[:-1]) if part in SKIPPED_DIRECTORIES), None)
        if vendored is not None:
            folder = "/".join(parts[: vendored + 1]) + "/"
            if folder not in seen_folders:
                seen_folders.add(folder)
                skipped.append(_vendored_folder(folder))
        elif _is_generated(parts[-1]):
            skipped.append(SkippedFile(path, SkipReason.GENERATED, "lock or minified file"))
        else:
            kept.append(path)
    return kept, skipped


def scan_corpus(
    path: str | os.PathLike[str], options: CorpusOptions | None = None, memo: ReadingMemo | None = None
) -> Corpus:
    """Read every indexable file under ``path`` (a folder or one file); the result may hold none.

    ``memo`` answers for the files unchanged since it was made (see :mod:`raglens.corpus_memo`).
    """
    options = options or CorpusOptions()
    given = Path(path).expanduser()
    try:
        given.stat()
    except FileNotFoundError:
        detail = " (a dangling symlink)" if given.is_symlink() else ""
        raise BadInputError(f"{path}: no such file or folder{detail}") from None
    except OSError as error:  # a folder above it this user may not enter
        raise BadInputError(f"{path}: cannot read it ({error.strerror or error})") from None
    if given.is_dir():
        try:
            with os.scandir(given):
                pass
        except OSError as error:
            raise BadInputError(f"{path}: cannot list the folder ({error.strerror or error})") from None
    if given.is_file():
        target = given.resolve()
        root = target.parent
        listing = "file"
        candidates, skipped = [target.name], list[SkippedFile]()
    elif given.is_dir():
        root = given.resolve()
        from_git = _list_with_git(root)
        if from_git is not None:
            listing = "git"
            listed, skipped = from_git
        else:
            listing = "walk"
            listed, skipped = _list_by_walking(root)
        candidates, excluded = _drop_default_excludes(listed)
        skipped = [*skipped, *excluded]
    else:
        raise BadInputError(f"{path}: not a regular file or folder")
    files: list[SourceFile] = []
    for rel_path in candidates:
        outcome = read_source(root, rel_path, options, memo)
        if isinstance(outcome, SourceFile):
            files.append(outcome)
        else:
            skipped.append(outcome)
    return Corpus(
        root=root,
        files=tuple(sorted(files, key=lambda f: f.path)),
        skipped=tuple(sorted(skipped, key=lambda s: s.path)),
        listing=listing,
    )


def load_corpus(path: str | os.PathLike[str], options: CorpusOptions | None = None) -> Corpus:
    """Like :func:`scan_corpus`, but a corpus with no indexable file is an error."""
    corpus = scan_corpus(path, options)
    require_indexable(corpus, str(path))
    return corpus


def require_indexable(corpus: Corpus, path: str) -> None:
    """Raise :class:`NothingIndexableError`, naming what was skipped, when ``corpus`` has no file."""
    if not corpus.files:
        raise NothingIndexableError(_nothing_indexable_message(path, corpus))


def _nothing_indexable_message(path: str, corpus: Corpus) -> str:
    if not corpus.skipped:
        return f"{printable_name(path)}: no files to index (the folder is empty)"
    shown = "; ".join(f"{printable_name(s.path)}: {printable_name(s.detail)}" for s in corpus.skipped[:5])
    more = f"; and {len(corpus.skipped) - 5} more" if len(corpus.skipped) > 5 else ""
    return f"{printable_name(path)}: nothing indexable ({len(corpus.skipped)} skipped: {shown}{more})"
