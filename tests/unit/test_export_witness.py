"""The witness an ONNX export is proved by, and the half-written exports a stopped process leaves."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from raglens import onnx_model
from raglens.export_witness import (
    largest_difference,
    read_witness,
    witness_of,
    witness_path,
    write_witness,
)
from raglens.fingerprint import sha256_of_file

FLOATS = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=25, deadline=None)
@given(vectors=arrays(np.float32, (2, 8), elements=FLOATS))
def test_a_witness_comes_back_bit_for_bit(vectors: np.ndarray) -> None:
    with tempfile.TemporaryDirectory() as folder:
        _round_trip(Path(folder) / "model.onnx", vectors)


def _round_trip(export: Path, vectors: np.ndarray) -> None:
    export.write_bytes(b"graph bytes")
    witness = witness_of(export, ("one", "two"), vectors)
    write_witness(export, witness)
    back = read_witness(export)
    assert back is not None
    assert back.texts == ("one", "two") and back.sha256 == sha256_of_file(export)
    assert back.vectors.tobytes() == vectors.astype(np.float32).tobytes(), "JSON keeps float32 exactly"
    assert back.size == len(b"graph bytes")


def test_a_witness_that_cannot_be_read_whole_is_no_witness(tmp_path: Path) -> None:
    export = tmp_path / "model.onnx"
    export.write_bytes(b"graph")
    assert read_witness(export) is None, "none kept"
    for damaged in ("{", "[]", '{"format": 2}', '{"format": 2, "texts": ["a"], "vectors": [[1, 2], [3, 4]]}'):
        witness_path(export).write_text(damaged)
        assert read_witness(export) is None, damaged


def test_the_difference_is_the_largest_of_any_component_and_infinite_for_nan_or_shape() -> None:
    expected = np.zeros((2, 3), dtype=np.float32)
    produced = expected.copy()
    produced[1, 2] = -0.25
    produced[0, 0] = 1e-6
    assert largest_difference(expected, produced) == 0.25
    assert largest_difference(expected, expected) == 0.0
    produced[0, 1] = np.nan
    assert largest_difference(expected, produced) == float("inf")
    assert largest_difference(expected, np.zeros((1, 3), dtype=np.float32)) == float("inf")


def test_an_export_without_a_witness_is_not_opened_and_the_note_says_why(tmp_path: Path) -> None:
    from raglens.fingerprint import ModelFingerprint

    fingerprint = ModelFingerprint("a" * 64, "fake", tmp_path, 128, "fp32", "b" * 64)
    export = onnx_model.export_path(tmp_path, fingerprint)
    export.parent.mkdir()
    export.write_bytes(b"not even a graph")
    notes: list[str] = []
    warnings: list[str] = []
    assert (
        onnx_model.load_exported(tmp_path, fingerprint, on_warning=warnings.append, on_note=notes.append)
        is None
    )
    assert warnings == [] and len(notes) == 1 and "no witness" in notes[0]
    assert export.exists(), "left for the next export to replace"


def test_an_export_whose_bytes_are_not_its_witnesss_is_set_aside(tmp_path: Path) -> None:
    from raglens.fingerprint import ModelFingerprint

    fingerprint = ModelFingerprint("a" * 64, "fake", tmp_path, 128, "fp32", "b" * 64)
    export = onnx_model.export_path(tmp_path, fingerprint)
    export.parent.mkdir()
    export.write_bytes(b"the bytes that were checked")
    write_witness(export, witness_of(export, ("a",), np.ones((1, 2), dtype=np.float32)))
    export.write_bytes(b"the bytes that were damaged")  # the same size, as a bad disk leaves it
    warnings: list[str] = []
    assert onnx_model.load_exported(tmp_path, fingerprint, on_warning=warnings.append) is None
    assert len(warnings) == 1 and "its bytes are not the ones checked" in warnings[0]
    assert not export.exists() and not witness_path(export).exists()
    aside = export.with_name(export.name + ".rejected")
    assert aside.read_bytes() == b"the bytes that were damaged" and witness_path(aside).exists()


def test_a_half_written_export_whose_writer_is_gone_is_removed_and_a_live_ones_kept(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    dead_pid = int(gone.stdout)
    dead = tmp_path / f"export-{dead_pid}-abc.partial"
    live = tmp_path / f"export-{os.getppid()}-def.partial"  # the parent of this test: alive
    mine = tmp_path / f"export-{os.getpid()}-ghi.partial"
    young_legacy = tmp_path / "tmp123.partial"
    old_legacy = tmp_path / "tmp456.partial"
    for path in (dead, live, mine, young_legacy, old_legacy):
        path.write_bytes(b"half a graph")
    hour_ago = time.time() - 3000
    os.utime(old_legacy, (hour_ago, hour_ago))
    onnx_model._remove_abandoned_exports(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [live.name, mine.name, young_legacy.name]
    )


def test_a_process_that_stops_while_exporting_removes_its_half_written_files(tmp_path: Path) -> None:
    with onnx_model._partial_file(tmp_path) as plain, onnx_model._partial_file(tmp_path) as fused:
        assert plain.exists() and fused.exists()
        assert plain.name.startswith(f"export-{os.getpid()}-")
        onnx_model.abandon_exports()  # what the embedding process does when told to stop
        assert list(tmp_path.iterdir()) == []
    assert onnx_model._open_partials == set()
