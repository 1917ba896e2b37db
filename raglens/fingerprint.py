"""Who made a vector: a fingerprint of the model's files and settings, computed without torch.

A cached vector is served only for the exact fingerprint it was stored under, so a different
model, other weights, another max_seq_length, other pooling or normalisation, or another
precision never reuses it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from raglens.embedding import default_model_path
from raglens.embedding_events import DEFAULT_MODEL_NAME
from raglens.errors import BadInputError
from raglens.precision import EXACT_PRECISION

FINGERPRINT_VERSION = 1
"""Bump when raglens changes how it turns a model's output into a stored vector."""

NORMALISATION = "l2-unit-rows"
"""raglens's own normalisation of every vector (embedding.normalize_rows), part of every fingerprint."""

DEFAULT_PRECISION = EXACT_PRECISION

_CONTENT_HASHED_BYTES = 1 << 20
"""Files up to this size (configs, tokenizers) are hashed on every launch; larger ones are weights."""

HashLargeFile = Callable[[Path], str]
"""Returns the sha256 of a large file; the cache remembers it per (path, size, mtime)."""


@dataclass(frozen=True)
class ModelFingerprint:
    """The identity of one embedding configuration."""

    digest: str
    """Hex sha256 over every model file, the settings and raglens's normalisation."""
    name: str
    """The model's short name, for people."""
    folder: Path
    """Where the model's files are."""
    max_seq_length: int | None
    precision: str
    files_digest: str
    """Hex sha256 over the model's files alone: the same at every precision, so one fp32 export
    serves the model whatever precision its window vectors were made in."""

    @property
    def label(self) -> str:
        """``name precision``, e.g. ``all-MiniLM-L6-v2 fp32``."""
        return f"{self.name} {self.precision}"


def sha256_of_file(path: Path) -> str:
    """The hex sha256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_folder(model: str | None) -> Path | None:
    """The local folder of ``model`` (None: the bundled one), or None if it is not on this machine.

    A hub name is looked up in the local Hugging Face cache only; nothing is downloaded.
    """
    if model is None:
        return default_model_path()
    as_path = Path(model).expanduser()
    if as_path.is_dir():
        return as_path.resolve()
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        return None
    names = [model] if "/" in model else [model, f"sentence-transformers/{model}"]
    for name in names:
        try:
            return Path(snapshot_download(name, local_files_only=True))
        except Exception:  # not in the local cache, or not a valid repository id
            continue
    return None


def max_seq_length_of(folder: Path) -> int | None:
    """The token limit a sentence-transformers model folder declares, if it declares one."""
    try:
        config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    length = config.get("max_seq_length") if isinstance(config, dict) else None
    return int(length) if isinstance(length, int) else None


def position_limit_of(folder: Path) -> int | None:
    """The most tokens the model's transformer can take at all (``max_position_embeddings``), if known."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    limit = config.get("max_position_embeddings") if isinstance(config, dict) else None
    return int(limit) if isinstance(limit, int) else None


def check_max_seq_length(model: str | None, max_seq_length: int | None) -> None:
    """Refuse a token limit the model cannot read, before anything loads (BadInputError)."""
    if max_seq_length is None:
        return
    if max_seq_length < 1:
        raise BadInputError(f"max_seq_length must be at least 1, got {max_seq_length}")
    folder = model_folder(model)
    limit = position_limit_of(folder) if folder is not None else None
    if limit is not None and max_seq_length > limit:
        name = DEFAULT_MODEL_NAME if model is None else model
        raise BadInputError(f"max_seq_length={max_seq_length}: {name} reads at most {limit} tokens")


def fingerprint_model(
    model: str | None,
    precision: str = DEFAULT_PRECISION,
    *,
    factory: str | None = None,
    hash_large_file: HashLargeFile = sha256_of_file,
    max_seq_length: int | None = None,
) -> ModelFingerprint | None:
    """The fingerprint of ``model`` at ``precision``, or None when its files are not on this machine.

    ``factory`` names another embedder built instead of the model (tests use fakes); it is part of
    the digest, so a fake's vectors are never served as the model's. ``max_seq_length`` overrides the
    model's own token limit, and is part of the digest too: a longer read gives other vectors.
    """
    folder = model_folder(model)
    if folder is None:
        return None
    digest = hashlib.sha256()
    header = f"raglens-fingerprint-v{FINGERPRINT_VERSION}\0{NORMALISATION}\0{precision}\0{factory or ''}\0"
    own_limit = max_seq_length_of(folder)
    if max_seq_length is not None and max_seq_length != own_limit:
        # Only a limit other than the model's own changes the vectors; absent, existing digests hold.
        header += f"max_seq_length={max_seq_length}\0"
    digest.update(header.encode())
    files_digest = hashlib.sha256(f"raglens-model-files-v{FINGERPRINT_VERSION}\0".encode())
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if relative.startswith(".") or relative.lower().endswith(".md"):
            continue  # hub metadata and model cards do not change a vector
        size = path.stat().st_size
        content = sha256_of_file(path) if size <= _CONTENT_HASHED_BYTES else hash_large_file(path)
        entry = f"{relative}\0{size}\0{content}\0".encode()
        digest.update(entry)
        files_digest.update(entry)
    name = DEFAULT_MODEL_NAME if model is None else Path(model.rstrip("/\\")).name or model
    if factory is not None:
        name = factory
    limit = max_seq_length if max_seq_length is not None else own_limit
    return ModelFingerprint(digest.hexdigest(), name, folder, limit, precision, files_digest.hexdigest())


def file_identity(path: Path) -> tuple[str, int, int]:
    """``(absolute path, size, mtime in ns)``: what must stay equal for a remembered hash to hold."""
    stat = path.stat()
    return os.fspath(path.resolve()), stat.st_size, stat.st_mtime_ns
