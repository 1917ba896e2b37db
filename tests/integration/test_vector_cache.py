"""The vector cache on a real SQLite file: hits and misses, fingerprints, crashes, two writers, damage."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from multiprocessing.synchronize import Barrier
from pathlib import Path

import numpy as np
import pytest

from raglens.corpus import CorpusOptions, load_corpus
from raglens.embedding import normalize_rows
from raglens.embedding_events import ReadingExtent
from raglens.engine import Engines
from raglens.fingerprint import ModelFingerprint, fingerprint_model
from raglens.pipeline import build_index
from raglens.vector_cache import CACHE_FILE_NAME, ModelCache, VectorCache, keys_of
from raglens.windows import Unit, WindowParams
from tests.conftest import wait_for_cached_vectors
from tests.fakes import HashingEmbedder

REPO = Path(__file__).resolve().parents[2]


def fake_fingerprint(tag: str = "a") -> ModelFingerprint:
    return ModelFingerprint(tag * 64, "fake-hashing", Path("/nowhere"), 128, "fp32", tag * 64)


class CountingEmbedder(HashingEmbedder):
    """Counts the texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts_embedded = 0

    def encode(self, texts):  # type: ignore[no-untyped-def]
        self.texts_embedded += len(texts)
        return super().encode(texts)


def test_stored_vectors_come_back_exactly_and_only_for_their_fingerprint(tmp_path: Path) -> None:
    vectors = normalize_rows(np.random.default_rng(1).standard_normal((3, 4)))  # raglens stores unit rows
    extents = [ReadingExtent(10 + i, 100 + i) for i in range(3)]
    with VectorCache.open(tmp_path) as cache:
        ModelCache(cache, fake_fingerprint("a"), 4).store(["x", "y", "z"], vectors, extents)
        found = ModelCache(cache, fake_fingerprint("a"), 4).lookup(["z", "nope", "x"])
        assert found[1] is None
        assert found[0] is not None and found[2] is not None
        np.testing.assert_array_equal(found[0].vector, vectors[2])
        np.testing.assert_array_equal(found[2].vector, vectors[0])
        assert found[0].extent == ReadingExtent(12, 102)
        assert ModelCache(cache, fake_fingerprint("b"), 4).lookup(["x"]) == [None], "another model"
        assert ModelCache(cache, fake_fingerprint("a"), 8).lookup(["x"]) == [None], "another dimension"
        assert cache.warnings.pop().startswith("1 stored vector(s) in"), "a row of another length is damage"
        assert cache.dimension_of("a" * 64) == 4
        info = cache.info()
        assert info.entries == 3 and info.models[0].name == "fake-hashing"
        assert cache.clear("fake-hashing") == 3
        assert cache.info().entries == 0
        assert not cache.warnings


def _model_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 4}')
    (folder / "modules.json").write_text('[{"type": "Transformer"}, {"type": "Normalize"}]')
    (folder / "sentence_bert_config.json").write_text('{"max_seq_length": 256}')
    (folder / "model.safetensors").write_bytes(os.urandom(2 << 20))
    (folder / "README.md").write_text("a model card")
    return folder


def test_the_fingerprint_follows_weights_settings_normalisation_and_precision(tmp_path: Path) -> None:
    folder = _model_folder(tmp_path)
    hashed: list[Path] = []
    with VectorCache.open(tmp_path / "cache") as cache:

        def remembered(path: Path) -> str:
            hashed.append(path)
            return cache.file_sha256(path)

        def digest(precision: str = "fp32") -> str:
            fingerprint = fingerprint_model(str(folder), precision, hash_large_file=remembered)
            assert fingerprint is not None
            return fingerprint.digest

        first = digest()
        assert digest() == first, "nothing changed"
        (folder / "README.md").write_text("another model card")
        assert digest() == first, "the model card does not change a vector"
        assert digest("bf16") != first
        weights = folder / "model.safetensors"
        data = bytearray(weights.read_bytes())
        data[12345] ^= 0xFF
        weights.write_bytes(bytes(data))
        os.utime(weights, ns=(time.time_ns(), time.time_ns() + 1_000_000))
        changed_weights = digest()
        assert changed_weights != first, "same size, other bytes"
        (folder / "sentence_bert_config.json").write_text('{"max_seq_length": 128}')
        shorter = digest()
        assert shorter != changed_weights
        (folder / "modules.json").write_text('[{"type": "Transformer"}]')
        assert digest() != shorter, "no Normalize module"
    assert fingerprint_model(str(tmp_path / "absent")) is None
    fake = fingerprint_model(str(folder), factory="tests.fakes:HashingEmbedder")
    assert fake is not None and fake.digest != digest_of(folder)


def digest_of(folder: Path) -> str:
    fingerprint = fingerprint_model(str(folder))
    assert fingerprint is not None
    return fingerprint.digest


def test_a_relaunch_embeds_nothing_and_new_windows_only_what_is_new(tmp_path: Path) -> None:
    corpus = load_corpus(REPO / "sample_corpus", CorpusOptions())
    with VectorCache.open(tmp_path) as cache:
        model_cache = ModelCache(cache, fake_fingerprint(), 64)
        first = CountingEmbedder()
        reference = build_index(corpus, WindowParams(), Engines.serving(first), cache=model_cache)
        assert first.texts_embedded == reference.window_count
        again = CountingEmbedder()
        cached = build_index(corpus, WindowParams(), Engines.serving(again), cache=model_cache)
        assert again.texts_embedded == 0
        np.testing.assert_array_equal(cached.snapshot().vectors, reference.snapshot().vectors)
        assert [cached.extent(r) for r in range(cached.window_count)] == [
            reference.extent(r) for r in range(reference.window_count)
        ]
        rewindowed = CountingEmbedder()
        other = build_index(
            corpus, WindowParams(Unit.CHARS, 1000, 100), Engines.serving(rewindowed), cache=model_cache
        ).snapshot()
        # Windows that start a file are the same text under both grids: those are reused.
        assert 0 < rewindowed.texts_embedded < other.window_count


def test_editing_one_file_re_embeds_only_its_changed_windows(tmp_path: Path) -> None:
    corpus_dir = tmp_path / "corpus"
    shutil.copytree(REPO / "sample_corpus", corpus_dir)
    with VectorCache.open(tmp_path / "cache") as cache:
        model_cache = ModelCache(cache, fake_fingerprint(), 64)
        build_index(
            load_corpus(corpus_dir, CorpusOptions()),
            WindowParams(),
            Engines.serving(CountingEmbedder()),
            cache=model_cache,
        )
        queues = corpus_dir / "docs" / "queues.md"
        queues.write_text(queues.read_text() + "\nOne more closing line.\n")
        edited = CountingEmbedder()
        build_index(
            load_corpus(corpus_dir, CorpusOptions()),
            WindowParams(),
            Engines.serving(edited),
            cache=model_cache,
        )
        assert edited.texts_embedded == 1, "only the last window of docs/queues.md changed"


def test_an_unreadable_cache_is_moved_aside_and_started_anew(tmp_path: Path) -> None:
    (tmp_path / CACHE_FILE_NAME).write_bytes(b"this is not a database" * 100)
    with VectorCache.open(tmp_path) as cache:
        assert cache.is_usable
        assert cache.warnings and "moved it to" in cache.warnings[0]
        ModelCache(cache, fake_fingerprint(), 2).store(
            ["x"], np.array([[0.6, 0.8]], np.float32), [ReadingExtent(1, 1)]
        )
        assert cache.info().entries == 1
    assert list(tmp_path.glob(f"{CACHE_FILE_NAME}.broken-*"))


def test_a_damaged_cache_serves_nothing_is_moved_aside_and_does_not_raise(tmp_path: Path) -> None:
    texts = [f"text {i} " * 50 for i in range(400)]
    vectors = HashingEmbedder().encode(texts)
    with VectorCache.open(tmp_path) as cache:
        ModelCache(cache, fake_fingerprint(), 64).store(texts, vectors, [ReadingExtent(1, 1)] * len(texts))
    path = tmp_path / CACHE_FILE_NAME
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    noise = np.random.default_rng(3)
    for offset in range(3 * 4096, len(data) - 4096, 4096):  # every page but the first three
        data[offset : offset + 4096] = noise.bytes(4096)
    path.write_bytes(bytes(data))
    with VectorCache.open(tmp_path) as cache:
        found = ModelCache(cache, fake_fingerprint(), 64).lookup(texts)
        # Noticed on opening (a fresh file is then in use) or on reading (the cache is then off).
        assert any("moved it to" in warning for warning in cache.warnings), "the damage was noticed"
        assert all(entry is None for entry in found), "nothing from a damaged file is served"
    assert list(tmp_path.glob(f"{CACHE_FILE_NAME}.broken-*"))
    with VectorCache.open(tmp_path) as cache:
        assert cache.is_usable and not cache.warnings, "the next start has a fresh, working cache"
        assert cache.info().entries == 0


def _write_many(directory: str, writer: int) -> None:
    with VectorCache.open(Path(directory)) as cache:
        model_cache = ModelCache(cache, fake_fingerprint(), 8)
        for batch in range(60):
            texts = [f"shared {batch} {i}" for i in range(4)] + [
                f"writer {writer} {batch} {i}" for i in range(4)
            ]
            vectors = HashingEmbedder(dimension=8).encode(texts)
            model_cache.store(texts, vectors, [ReadingExtent(1, 1)] * len(texts))
        assert not cache.warnings, cache.warnings


def test_two_processes_writing_at_once_leave_a_consistent_cache(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_many, args=(str(tmp_path), n)) for n in range(2)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(120)
        assert process.exitcode == 0
    with sqlite3.connect(tmp_path / CACHE_FILE_NAME) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert connection.execute("SELECT count(*) FROM vectors").fetchone() == (60 * 4 + 2 * 60 * 4,)


def _open_fresh_caches_together(directories: list[str], barrier: Barrier, writer: int) -> None:
    for directory in directories:
        barrier.wait(30)
        with VectorCache.open(Path(directory)) as cache:
            assert not cache.warnings, f"writer {writer}: {cache.warnings}"


def test_processes_creating_one_new_cache_together_all_get_it(tmp_path: Path) -> None:
    """Two raglens started together on a new cache: SQLite answers one of them "database is locked"
    without waiting (each holds a lock the other needs); before the retry, 1 in 5 rounds lost a writer."""
    context = multiprocessing.get_context("spawn")
    directories = [str(tmp_path / f"cache-{round_}") for round_ in range(40)]
    barrier = context.Barrier(4)
    openers = [
        context.Process(target=_open_fresh_caches_together, args=(directories, barrier, n)) for n in range(4)
    ]
    for process in openers:
        process.start()
    try:
        for process in openers:
            process.join(120)
    finally:
        for process in openers:
            if process.is_alive():
                process.kill()  # a hung opener fails the test without outliving it
    assert [process.exitcode for process in openers] == [0, 0, 0, 0]


KILLED_INDEXER = """
import sys
from pathlib import Path
from raglens.corpus import CorpusOptions, load_corpus
from raglens.engine import Engines
from raglens.fingerprint import ModelFingerprint
from raglens.pipeline import build_index
from raglens.vector_cache import ModelCache, VectorCache
from raglens.windows import WindowParams
from tests.fakes import SlowHashingEmbedder

fingerprint = ModelFingerprint("a" * 64, "fake-hashing", Path("/nowhere"), 128, "fp32", "a" * 64)
with VectorCache.open(Path(sys.argv[1])) as cache:
    corpus = load_corpus(sys.argv[2], CorpusOptions())
    model_cache = ModelCache(cache, fingerprint, 64)
    slow = Engines.serving(SlowHashingEmbedder())
    build_index(corpus, WindowParams(), slow, cache=model_cache, batch_size=2)
"""


def test_kill_9_mid_index_keeps_every_committed_batch(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    indexer = subprocess.Popen(
        [sys.executable, "-c", KILLED_INDEXER, str(cache_dir), str(REPO / "sample_corpus")],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        wait_for_cached_vectors(indexer, cache_dir, at_least=10)
        indexer.send_signal(signal.SIGKILL)
        indexer.wait(10)
    finally:
        indexer.kill()
    with sqlite3.connect(cache_dir / CACHE_FILE_NAME) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    corpus = load_corpus(REPO / "sample_corpus", CorpusOptions())
    with VectorCache.open(cache_dir) as cache:
        kept = cache.info().entries
        assert 10 <= kept < 66, "killed part-way"
        resumed = CountingEmbedder()
        index = build_index(
            corpus, WindowParams(), Engines.serving(resumed), cache=ModelCache(cache, fake_fingerprint(), 64)
        ).snapshot()
        assert resumed.texts_embedded == index.window_count - kept
    fresh = build_index(corpus, WindowParams(), Engines.serving(HashingEmbedder())).snapshot()
    np.testing.assert_array_equal(index.vectors, fresh.vectors)


@pytest.mark.parametrize("texts", [["é", "e\u0301"], ["a", "a "], ["\udcff"]])
def test_keys_tell_apart_texts_that_differ_at_all(texts: list[str]) -> None:
    keys = keys_of(texts)
    assert len(set(keys)) == len(texts)
    assert all(len(key) == 16 for key in keys)


def test_a_cache_that_cannot_be_opened_is_left_alone(tmp_path: Path) -> None:
    import raglens.vector_cache as vector_cache

    one = normalize_rows(np.ones((1, 2), np.float32))
    with VectorCache.open(tmp_path) as cache:
        ModelCache(cache, fake_fingerprint(), 2).store(["x"], one, [ReadingExtent(1, 1)])

    def locked(path: Path, busy_wait_s: float = 10.0) -> sqlite3.Connection:
        raise sqlite3.OperationalError("database is locked")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vector_cache, "_connect", locked)
        patch.setattr(vector_cache, "BUSY_TIMEOUT_S", 0.2)  # tried again until then
        with VectorCache.open(tmp_path) as cache:
            assert not cache.is_usable and "database is locked" in cache.warnings[0]
            assert ModelCache(cache, fake_fingerprint(), 2).lookup(["x"]) == [None]
    assert not list(tmp_path.glob(f"{CACHE_FILE_NAME}.broken-*")), "a locked file is not moved aside"
    with VectorCache.open(tmp_path) as cache:
        assert ModelCache(cache, fake_fingerprint(), 2).lookup(["x"])[0] is not None


@pytest.mark.parametrize(
    "poison",
    [np.full(64, np.nan), np.full(64, 1e30), np.eye(64)[0] * 32.9, np.zeros(64)],
    ids=["all-nan", "huge", "not-unit", "zero"],
)
def test_a_poisoned_vector_is_never_served_and_is_embedded_again(tmp_path: Path, poison: np.ndarray) -> None:
    """Only finite unit vectors come back from the cache: anything else would rank first or break JSON."""
    corpus = load_corpus(REPO / "sample_corpus", CorpusOptions())
    with VectorCache.open(tmp_path) as cache:
        model_cache = ModelCache(cache, fake_fingerprint(), 64)
        build_index(corpus, WindowParams(), Engines.serving(CountingEmbedder()), cache=model_cache)
    with sqlite3.connect(tmp_path / CACHE_FILE_NAME) as connection:
        (key,) = connection.execute("SELECT text_hash FROM vectors LIMIT 1").fetchone()
        blob = np.asarray(poison, dtype="<f4").tobytes()
        connection.execute("UPDATE vectors SET vector = ? WHERE text_hash = ?", (blob, key))
    with VectorCache.open(tmp_path) as cache:
        again = CountingEmbedder()
        index = build_index(
            corpus, WindowParams(), Engines.serving(again), cache=ModelCache(cache, fake_fingerprint(), 64)
        )
    assert again.texts_embedded == 1, "the poisoned vector was embedded again"
    vectors = index.snapshot().vectors
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_a_full_disk_stops_writing_keeps_reading_and_moves_nothing_aside(tmp_path: Path) -> None:
    """SQLITE_FULL mid-index is not corruption: one warning, the index completes, the file stays good."""
    corpus = load_corpus(REPO / "sample_corpus", CorpusOptions())
    first = normalize_rows(np.ones((1, 64), np.float32))
    with VectorCache.open(tmp_path) as cache:
        ModelCache(cache, fake_fingerprint(), 64).store(["stored before"], first, [ReadingExtent(1, 1)])
        connection = cache._connection
        assert connection is not None
        (pages,) = connection.execute("PRAGMA page_count").fetchone()
        connection.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full from here on
        embedder = CountingEmbedder()
        index = build_index(
            corpus, WindowParams(), Engines.serving(embedder), cache=ModelCache(cache, fake_fingerprint(), 64)
        )
        assert index.is_complete and embedder.texts_embedded == index.window_count
        assert not cache.writable
        assert len(cache.warnings) == 1 and "cannot be written" in cache.warnings[0], cache.warnings
        assert "full" in cache.warnings[0]
        found = ModelCache(cache, fake_fingerprint(), 64).lookup(["stored before"])[0]
        assert found is not None, "the cache is still read after it filled up"
    assert not list(tmp_path.glob(f"{CACHE_FILE_NAME}.broken-*")), "a full disk is not a broken cache"
    with sqlite3.connect(tmp_path / CACHE_FILE_NAME) as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with VectorCache.open(tmp_path) as cache:
        again = ModelCache(cache, fake_fingerprint(), 64).lookup(["stored before"])[0]
        assert again is not None
        np.testing.assert_array_equal(again.vector, first[0])


def test_clearing_a_cache_held_by_another_writer_says_so(tmp_path: Path) -> None:
    import raglens.vector_cache as vector_cache
    from raglens.cli.main import main

    one = normalize_rows(np.ones((1, 2), np.float32))
    with VectorCache.open(tmp_path) as cache:
        ModelCache(cache, fake_fingerprint(), 2).store(["x"], one, [ReadingExtent(1, 1)])
    holder = sqlite3.connect(tmp_path / CACHE_FILE_NAME, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(vector_cache, "BUSY_TIMEOUT_S", 0.2)
            code = main(["cache", "clear", "--cache-dir", str(tmp_path)])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 4
    with VectorCache.open(tmp_path) as cache:
        assert cache.info().entries == 1, "nothing was removed"


def without_write_permission() -> list[str]:
    """A command prefix under which the cache files made read-only below really cannot be written.

    root may write anything, so as root the child runs without the capabilities that allow it.
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "running as root, the read-only test needs setpriv (util-linux)"
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def test_a_read_only_cache_is_read_reported_and_never_changed(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    env = {**os.environ, "RAGLENS_CACHE_DIR": str(cache_dir)}
    fake = ["--embedder-factory", "tests.fakes:HashingEmbedder"]

    def raglens(*argv: str, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
        command = [*(prefix or []), sys.executable, "-m", "raglens", *argv]
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=120)

    built = raglens("search", "sample_corpus", "retry", "--json", *fake)
    assert built.returncode == 0, built.stderr
    windows = json.loads(built.stdout)["corpus"]["window_count"]
    database = cache_dir / CACHE_FILE_NAME
    before = database.read_bytes()
    database.chmod(0o444)
    cache_dir.chmod(0o555)
    try:
        reader = without_write_permission()
        info = raglens("cache", "info", "--json", prefix=reader)
        assert info.returncode == 0 and json.loads(info.stdout)["entries"] == windows, info.stderr
        assert "cannot be written" in info.stderr
        search = raglens("search", "sample_corpus", "retry", "--json", *fake, prefix=reader)
        assert search.returncode == 0, search.stderr
        assert json.loads(search.stdout)["cache"] == {
            "folder": str(cache_dir),
            "from_cache": windows,
            "embedded": 0,
        }
        assert "Traceback" not in search.stderr
        cleared = raglens("cache", "clear", prefix=reader)
        assert cleared.returncode == 4, cleared.stderr
        assert (
            cleared.stderr.startswith("raglens: could not clear the cache")
            and "Traceback" not in cleared.stderr
        )
    finally:
        cache_dir.chmod(0o755)
        database.chmod(0o644)
    assert database.read_bytes() == before
    assert not list(cache_dir.glob("*.broken-*")), "a read-only cache is not broken"


def test_query_vectors_are_kept_per_model_and_engine_replaced_when_damaged_and_cleared(
    tmp_path: Path,
) -> None:
    embedder = HashingEmbedder()
    asked: list[str] = []

    def embed(text: str) -> np.ndarray:
        asked.append(text)
        return embedder.encode_query(text)

    questions = ["how do cats purr?", "what is the capital of Mongolia?"]
    with VectorCache.open(tmp_path) as cache:
        first = ModelCache(cache, fake_fingerprint("a"), None).query_vectors(
            questions, "onnx|fp32|cpu", embed
        )
        again = ModelCache(cache, fake_fingerprint("a"), None).query_vectors(
            [*questions, "new one"], "onnx|fp32|cpu", embed
        )
        assert asked == [*questions, "new one"], "each question embedded once for this model and engine"
        for stored, vector in zip(first, again, strict=False):
            np.testing.assert_array_equal(stored, vector)  # exactly what the engine gave, bit for bit
        a = ModelCache(cache, fake_fingerprint("a"), 64)
        assert a.lookup(questions) == [None, None], "not windows"
        assert a.lookup_queries(questions, "torch|bf16|cpu") == [None, None], "another engine's are its own"
        assert ModelCache(cache, fake_fingerprint("b"), 64).lookup_queries(questions, "onnx|fp32|cpu") == [
            None,
            None,
        ]
        cache._require().execute("UPDATE control_vectors SET vector = zeroblob(length(vector))")  # damaged
        asked.clear()
        a.query_vectors(questions, "onnx|fp32|cpu", embed)
        assert asked == questions, "a damaged row is embedded again"
        assert a.lookup_queries(questions, "onnx|fp32|cpu")[0] is not None, "and replaced"
        cache.clear()
        assert a.lookup_queries(questions, "onnx|fp32|cpu") == [None, None]
        assert not cache.warnings


def test_a_second_search_takes_the_control_questions_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from raglens.cli.main import main
    from raglens.diagnostics.control_questions import CONTROL_QUESTIONS

    asked: list[str] = []
    encode_query = HashingEmbedder.encode_query

    def counting(embedder: HashingEmbedder, text: str) -> np.ndarray:
        asked.append(text)
        return encode_query(embedder, text)

    monkeypatch.setattr(HashingEmbedder, "encode_query", counting)
    argv = ["search", str(REPO / "sample_corpus"), "how are jobs retried?", "--json", "-q"]
    argv += ["--embedder-factory", "tests.fakes:HashingEmbedder", "--cache-dir", str(tmp_path)]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)["diagnostics"]["noise_floor"]
    assert sorted(set(asked)) == sorted({*CONTROL_QUESTIONS, "how are jobs retried?"})
    asked.clear()
    assert main(argv) == 0
    second = json.loads(capsys.readouterr().out)["diagnostics"]["noise_floor"]
    assert asked == ["how are jobs retried?"], "the 32 control questions came from the cache"
    assert second == first, "the same band, bit for bit"


def test_the_embedding_process_answers_a_question_asked_before_from_the_cache(tmp_path: Path) -> None:
    from raglens.embedding_events import ModelChoice
    from raglens.embedding_process import EmbeddingProcess

    question = "have you ever been to a five-star resort?"

    def ask() -> np.ndarray:
        choice = ModelChoice(factory="tests.fakes:HashingEmbedder")
        process = EmbeddingProcess(choice, cache_dir=str(tmp_path))  # one launch of the explorer
        try:
            future = process.embed_query(question)
            while not future.done():
                process.next_event(timeout=1.0)
            return future.result()
        finally:
            process.close()

    first = ask()
    marker = np.zeros_like(first)
    marker[0] = 1.0  # a unit vector the model never gives: seen again only if read from the cache
    with sqlite3.connect(tmp_path / CACHE_FILE_NAME) as connection:
        connection.execute("UPDATE control_vectors SET vector = ?", (marker.astype("<f4").tobytes(),))
    np.testing.assert_array_equal(ask(), marker)


def test_opening_tries_again_only_while_the_file_is_busy_and_only_for_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from raglens import vector_cache

    real_connect = vector_cache._connect
    tries: list[float] = []

    def busy_twice(path: Path, busy_wait_s: float = 10.0) -> sqlite3.Connection:
        tries.append(busy_wait_s)
        if len(tries) <= 2:
            raise sqlite3.OperationalError("database is locked")
        return real_connect(path, busy_wait_s)

    monkeypatch.setattr(vector_cache, "_connect", busy_twice)
    vector_cache._connect_when_free(tmp_path / "a.sqlite3", wait_s=5).close()
    assert len(tries) == 3 and all(later <= earlier for earlier, later in itertools.pairwise(tries)), (
        "each try waits only for what is left of the time"
    )

    def refused(path: Path, busy_wait_s: float = 10.0) -> sqlite3.Connection:
        tries.append(busy_wait_s)
        raise sqlite3.OperationalError("unable to open database file")

    tries.clear()
    monkeypatch.setattr(vector_cache, "_connect", refused)
    with pytest.raises(sqlite3.OperationalError, match="unable to open"):
        vector_cache._connect_when_free(tmp_path / "b.sqlite3", wait_s=5)
    assert len(tries) == 1, "a file that cannot be opened is not tried again"

    def always_busy(path: Path, busy_wait_s: float = 10.0) -> sqlite3.Connection:
        tries.append(busy_wait_s)
        raise sqlite3.OperationalError("database is locked")

    tries.clear()
    monkeypatch.setattr(vector_cache, "_connect", always_busy)
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        vector_cache._connect_when_free(tmp_path / "c.sqlite3", wait_s=0.3)
    assert time.monotonic() - started < 0.3 + 0.25 and len(tries) > 1, "it gave up at its time"
