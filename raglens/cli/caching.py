"""``raglens cache info|clear``: where the vector cache is, what it holds, and emptying it."""

from __future__ import annotations

import argparse
import stat
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from raglens.cli.consoles import console_for
from raglens.cli.documents import SCHEMA_VERSION, dump
from raglens.corpus_memo import MEMO_FOLDER, memo_files
from raglens.diagnostics.language_tables import TABLES_FOLDER, tables_size
from raglens.display import describe_age
from raglens.errors import BadInputError, CacheUnreadableError, CacheUnwritableError
from raglens.locations import ONNX_FOLDER
from raglens.printable import printable_name
from raglens.stored_index import INDEX_FOLDER, stored_indexes
from raglens.vector_cache import CACHE_FILE_NAME, CacheInfo, VectorCache


def onnx_exports(directory: Path) -> list[tuple[Path, int]]:
    """The ONNX exports in the cache folder ``directory`` and their sizes in bytes, largest first; an
    export that failed its check (``*.onnx.rejected``, kept to be looked at) is listed too."""
    folder = directory / ONNX_FOLDER
    try:
        found = [
            (path, path.stat().st_size)
            for pattern in ("*.onnx", "*.onnx.rejected")
            for path in folder.glob(pattern)
        ]
    except OSError:
        return []
    return sorted(found, key=lambda entry: -entry[1])


def info_document(
    info: CacheInfo,
    exports: list[tuple[Path, int]],
    readings: list[tuple[Path, int]],
    indexes: list[tuple[str, int]],
    language_tables_bytes: int,
) -> dict[str, Any]:
    """``raglens cache info --json``."""
    return {
        "schema": SCHEMA_VERSION,
        "path": str(info.path),
        "size_bytes": info.size_bytes,
        "entries": info.entries,
        "models": [
            {
                "name": model.name,
                "precision": model.precision,
                "fingerprint": model.fingerprint,
                "dimension": model.dimension,
                "max_seq_length": model.max_seq_length,
                "folder": model.folder,
                "entries": model.entries,
                "first_used": model.first_used,
                "last_used": model.last_used,
            }
            for model in info.models
        ],
        "onnx_exports": [{"path": str(path), "size_bytes": size} for path, size in exports],
        "corpus_readings": [{"path": str(path), "size_bytes": size} for path, size in readings],
        "stored_indexes": [{"key": key, "size_bytes": size} for key, size in indexes],
        "language_tables_bytes": language_tables_bytes,
    }


def _ago(timestamp: float) -> str:
    return describe_age(time.time() - timestamp) + " ago"


def print_info(
    console: Console,
    info: CacheInfo,
    exports: list[tuple[Path, int]],
    readings: list[tuple[Path, int]],
    indexes: list[tuple[str, int]],
    language_tables_bytes: int,
) -> None:
    console.print(
        Text(f"cache: {printable_name(str(info.path))} ({info.size_bytes / 1e6:.1f} MB)", style="bold")
    )
    if not info.models:
        console.print(Text("  empty", style="dim"))
    for model in info.models:
        line = Text("  ")
        line.append(f"{printable_name(model.name)} {model.precision}", style="bold")
        line.append(f"  {model.dimension} d  {model.entries:,} vector(s)  last used {_ago(model.last_used)}")
        line.append(f"  fingerprint {model.fingerprint[:12]}", style="dim")
        console.print(line)
    for path, size in exports:
        # What lets a warm start embed queries without torch; made once per model's files.
        kind = "rejected onnx export" if path.suffix == ".rejected" else "onnx export"
        line = Text(f"  {kind} {size / 1e6:.1f} MB", style="bold")
        line.append(f"  {printable_name(path.name)}", style="dim")
        console.print(line)
    if readings:
        # What lets a relaunch read only the files that changed; each holds a copy of a corpus's text.
        total = sum(size for _, size in readings)
        line = Text(f"  files as last read {total / 1e6:.1f} MB", style="bold")
        line.append(f"  {len(readings)} corpus folder(s), in {MEMO_FOLDER}/", style="dim")
        console.print(line)
    if indexes:
        # What lets a relaunch on unchanged files rank at once, without sending any text to the model.
        total = sum(size for _, size in indexes)
        line = Text(f"  complete indexes {total / 1e6:.1f} MB", style="bold")
        line.append(f"  {len(indexes)} stored, in {INDEX_FOLDER}/", style="dim")
        console.print(line)
    if language_tables_bytes:
        # The language identifier's tables, read from these files instead of held in memory.
        line = Text(f"  language identifier's tables {language_tables_bytes / 1e6:.1f} MB", style="bold")
        line.append(f"  in {TABLES_FOLDER}/, made again when needed", style="dim")
        console.print(line)


def unusable_folder(directory: Path) -> str | None:
    """Why ``directory`` can neither be nor become the cache folder (it is a file, it lies under a file,
    it cannot be looked at); None when it is a folder or could be made as one. Makes nothing."""
    candidate = directory
    while True:
        try:
            mode = candidate.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            if candidate.parent == candidate:
                return None
            candidate = candidate.parent  # not there (yet): what about the folder it would go in?
            continue
        except OSError as error:
            return f"{printable_name(str(candidate))}: {error.strerror or error}"
        if stat.S_ISDIR(mode):
            return _unreachable_file(directory / CACHE_FILE_NAME) if candidate == directory else None
        if candidate == directory:
            return f"{printable_name(str(directory))} is a file, not a folder"
        return f"{printable_name(str(candidate))} is a file, so no folder can be made under it"


def _unreachable_file(path: Path) -> str | None:
    """Why the cache file ``path`` cannot even be looked at (a folder without search permission)."""
    try:
        path.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"{printable_name(str(path))}: {error.strerror or error}"
    return None


def run_cache(args: argparse.Namespace, directory: Path) -> int:
    """Report on or clear the cache in ``directory``; exit code 0, or 4 when the cache cannot be read
    (info) or cleared (clear): a folder that is a file, a cache that cannot be opened."""
    stdout = console_for()
    problem = unusable_folder(directory)
    if args.action == "clear":
        if problem is not None:
            raise CacheUnwritableError(f"could not clear the cache: {problem}")
        if not (directory / CACHE_FILE_NAME).exists():
            removed = 0
        else:
            with VectorCache.open(directory) as cache:
                cleared = cache.clear(args.model)
                if cleared is None:
                    # Opened read-only: SQLite's reason; not opened at all: the warnings say why.
                    why = cache.unwritable_because if cache.is_usable else None
                    raise CacheUnwritableError(
                        f"could not clear the cache {cache.path}: " + (why or "; ".join(cache.warnings))
                    )
                _report_warnings(cache)
            removed = cleared
        forgotten = 0
        if args.model is None:
            _remove_rejected_exports(directory)
            forgotten = _remove_readings(directory)
        # Every model's: a stored index lends its vectors without the cache, so one model's cleared
        # vectors must not outlive the clear there; the others' come back at their next complete index.
        dropped = _remove_indexes(directory)
        if args.json:
            where = str(directory / CACHE_FILE_NAME)
            counts = {"removed": removed, "removed_readings": forgotten, "removed_indexes": dropped}
            print(dump({"schema": SCHEMA_VERSION, "path": where, **counts}))
        else:
            target = f" of {printable_name(args.model)}" if args.model else ""
            texts = f", the texts of {forgotten} corpus folder(s)" if forgotten else ""
            texts += f", {dropped} complete index(es)" if dropped else ""
            folder = printable_name(str(directory))
            stdout.print(Text(f"removed {removed:,} vector(s){target}{texts} from {folder}"))
        return 0
    if args.model:
        raise BadInputError("--model only goes with: raglens cache clear")
    if problem is not None:
        raise CacheUnreadableError(f"could not read the cache: {problem}")
    if (directory / CACHE_FILE_NAME).exists():
        with VectorCache.open(directory) as cache:
            info = cache.info()
            if not cache.is_usable:  # it could not be opened, or failed while it was read
                shown, why = printable_name(str(cache.path)), "; ".join(cache.warnings)
                raise CacheUnreadableError(f"could not read the cache {shown}: {why}")
            _report_warnings(cache)
    else:
        info = CacheInfo(directory / CACHE_FILE_NAME, 0, ())
    exports, readings, indexes = onnx_exports(directory), memo_files(directory), stored_indexes(directory)
    tables = tables_size(directory)
    if args.json:
        print(dump(info_document(info, exports, readings, indexes, tables)))
    else:
        print_info(stdout, info, exports, readings, indexes, tables)
    return 0


def _remove_rejected_exports(directory: Path) -> None:
    """``cache clear`` of everything also deletes the exports that failed their check (90 MB each),
    and says so on stderr (stdout may be JSON)."""
    from raglens.export_witness import witness_path

    for path, size in onnx_exports(directory):
        if path.suffix == ".rejected":
            path.unlink(missing_ok=True)
            witness_path(path).unlink(missing_ok=True)
            note = f"removed the rejected onnx export {printable_name(path.name)} ({size / 1e6:.1f} MB)"
            console_for(stderr=True).print(Text(note))


def _remove_readings(directory: Path) -> int:
    """Delete the memos of files as last read (copies of corpora's texts) and whatever a killed writer
    left beside them; how many memos there were."""
    count = len(memo_files(directory))
    _empty_folder(directory / MEMO_FOLDER)
    return count


def _remove_indexes(directory: Path) -> int:
    """Delete the stored complete indexes and whatever a killed writer left beside them; how many
    indexes there were."""
    count = len(stored_indexes(directory))
    _empty_folder(directory / INDEX_FOLDER)
    return count


def _empty_folder(folder: Path) -> None:
    """Delete every file in ``folder`` (the cache's own: nothing else is kept there)."""
    try:
        files = [path for path in folder.iterdir() if path.is_file() or path.is_symlink()]
    except FileNotFoundError:
        return
    except OSError as error:
        raise CacheUnwritableError(f"could not list {printable_name(str(folder))}: {error}") from error
    for path in files:
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            raise CacheUnwritableError(f"could not remove {printable_name(str(path))}: {error}") from error


def _report_warnings(cache: VectorCache) -> None:
    """Report what went wrong with the cache on stderr; the command itself still succeeds."""
    stderr = console_for(stderr=True)
    for warning in cache.warnings:
        stderr.print(f"raglens: warning: {warning}", markup=False)
