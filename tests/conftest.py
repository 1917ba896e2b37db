"""Shared fixtures: temporary corpora and the one real model, loaded once per test session."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests check invariants, not speed: Hypothesis's 200 ms per-example deadline fails them
# on a loaded CI machine (a first Pygments lexer load alone can take that long).
settings.register_profile("raglens", deadline=None)
settings.load_profile("raglens")

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CORPUS = REPO_ROOT / "sample_corpus"

MakeTree = Callable[[dict[str, str | bytes]], Path]


@pytest.fixture(autouse=True)
def user_folders_of_its_own(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The explorer and its children write logs and golden sets to the user's folders: each test gets
    fresh ones, so no test writes to the machine's or reads another test's."""
    home = tmp_path_factory.mktemp("user")
    for variable in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(variable, str(home / variable.lower()))


@pytest.fixture
def make_tree(tmp_path: Path) -> MakeTree:
    """Write ``{relative path: text or bytes}`` under a fresh folder and return the folder."""

    def make(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "corpus"
        root.mkdir(exist_ok=True)
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8", newline="")
        return root

    return make


@pytest.fixture
def files_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path the corpus reader reads from disk (rather than recalls from the memo of files as
    last read), in order; files just written count as settled (no 2 s racily-clean wait)."""
    from raglens import corpus, corpus_memo

    monkeypatch.setattr(corpus_memo, "RACY_NS", -3_600_000_000_000)
    read: list[str] = []
    real_read = corpus._read_regular

    def counted(full: Path, rel_path: str, *rest: object) -> object:
        read.append(rel_path)
        return real_read(full, rel_path, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(corpus, "_read_regular", counted)
    return read


def _export_once(tmp_path_factory: pytest.TempPathFactory, *, trace: bool):  # type: ignore[no-untyped-def]
    from raglens.fingerprint import fingerprint_model
    from raglens.onnx_model import export_model, export_path

    cache_dir = tmp_path_factory.mktemp("onnx-cache")
    fingerprint = fingerprint_model(None)
    assert fingerprint is not None
    target = export_path(cache_dir, fingerprint)
    export_model(fingerprint, target, trace=trace)
    assert target.exists() and not list(target.parent.glob("*.partial"))
    return cache_dir, fingerprint


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The bundled model's ONNX export as raglens makes it (written from the weights, ~2 s, no torch),
    in a cache folder of its own, made once. Tests that change it work on a copy (:func:`copy_export`).
    """
    return _export_once(tmp_path_factory, trace=False)


@pytest.fixture(scope="session")
def traced(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The bundled model exported through torch's tracer, as every model without a written graph is."""
    return _export_once(tmp_path_factory, trace=True)


def copy_export(exported, cache_dir: Path) -> Path:  # type: ignore[no-untyped-def]
    """A copy of the session's export, witness and all, in the cache folder ``cache_dir``."""
    import shutil

    from raglens.export_witness import witness_path
    from raglens.onnx_model import export_path

    source_dir, fingerprint = exported
    source = export_path(source_dir, fingerprint)
    target = export_path(cache_dir, fingerprint)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
    shutil.copy2(witness_path(source), witness_path(target))
    return target


@pytest.fixture(scope="session")
def real_embedder():  # type: ignore[no-untyped-def]
    """The bundled all-MiniLM-L6-v2 on the CPU; importing sentence-transformers takes seconds, so once."""
    from raglens.embedding import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(device="cpu")


def wait_for_cached_vectors(
    process: subprocess.Popen[str] | subprocess.Popen[bytes] | int, cache_dir: Path, at_least: int
) -> None:
    """Wait until ``process`` (or the process with that pid), still running, has committed
    ``at_least`` vectors to ``cache_dir``."""
    from raglens.vector_cache import CACHE_FILE_NAME, VectorCache

    def running() -> bool:
        if isinstance(process, int):
            return Path(f"/proc/{process}").exists()
        return process.poll() is None

    deadline = time.monotonic() + 60
    stored = 0
    while stored < at_least:
        assert time.monotonic() < deadline, f"fewer than {at_least} vectors were stored within 60 s"
        assert running(), "the process finished before it could be interrupted"
        time.sleep(0.05)
        if (cache_dir / CACHE_FILE_NAME).exists():
            with VectorCache.open(cache_dir) as peek:
                stored = peek.info().entries


@pytest.fixture(autouse=True)
def _no_git_identity_prompts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Git commands in tests never read the developer's config nor wait for input."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "raglens tests")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "tests@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "raglens tests")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "tests@example.invalid")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)


@pytest.fixture(autouse=True)
def _cache_in_a_temporary_folder(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads or writes the developer's own vector cache."""
    monkeypatch.setenv("RAGLENS_CACHE_DIR", str(tmp_path_factory.mktemp("raglens-cache")))
