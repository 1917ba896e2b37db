"""The language identifier over its tables kept in the cache folder: the library's own answers, without
its ~75 MiB held in memory."""

from __future__ import annotations

import gc
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raglens.diagnostics import language_tables
from raglens.diagnostics import question_language as question_language_module
from raglens.diagnostics.language_tables import (
    TABLES_FOLDER,
    LanguageTables,
    StoredEntries,
    StoredRows,
    identifier_from_tables,
    tables_size,
)
from raglens.diagnostics.question_language import question_language
from raglens.model_languages import ModelLanguages
from tests.unit.diagnostics.test_question_language import ENGLISH, OTHER


@pytest.fixture(scope="module")
def library() -> Any:
    """py3langid's identifier loaded its own way, the oracle."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return identifier_from_tables(tmp_path_factory.mktemp("cache"))


def table_files(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / TABLES_FOLDER).rglob("*.npy"))


@pytest.mark.parametrize("text", [*ENGLISH, *(question for question, _ in OTHER), "", "ok", "日本語"])
def test_the_kept_tables_answer_as_the_library_does(text: str, library: Any, kept: Any) -> None:
    assert kept.classify(text) == library.classify(text)


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(st.text(max_size=120), st.binary(max_size=120)))
def test_any_text_is_classified_as_the_library_does(text: str | bytes, library: Any, kept: Any) -> None:
    assert kept.classify(text) == library.classify(text)


def test_the_large_tables_are_read_from_their_files_not_held(kept: Any) -> None:
    assert isinstance(kept.tk_nextmove, StoredEntries)
    assert isinstance(kept.nb_ptc, StoredRows)


def test_the_tables_are_unpacked_once_then_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unpacked = []
    unpack = language_tables.unpack_tables
    monkeypatch.setattr(language_tables, "unpack_tables", lambda path: unpacked.append(path) or unpack(path))
    first = identifier_from_tables(tmp_path)
    second = identifier_from_tables(tmp_path)
    assert len(unpacked) == 1
    assert first.classify("wie kann ich das machen") == second.classify("wie kann ich das machen")
    assert len(table_files(tmp_path)) == 6
    assert tables_size(tmp_path) == sum(path.stat().st_size for path in table_files(tmp_path)) > 60_000_000


def test_a_table_cut_short_is_unpacked_anew(tmp_path: Path, library: Any) -> None:
    identifier_from_tables(tmp_path)
    [moves] = [path for path in table_files(tmp_path) if path.name == "moves.npy"]
    whole = moves.stat().st_size
    with moves.open("r+b") as handle:
        handle.truncate(whole // 2)  # a power cut, or a disk that filled, mid-write
    again = identifier_from_tables(tmp_path)
    assert isinstance(again.tk_nextmove, StoredEntries)
    assert moves.stat().st_size == whole
    assert again.classify("¿cómo se reintentan los trabajos?") == library.classify(
        "¿cómo se reintentan los trabajos?"
    )


def test_where_no_table_can_be_kept_the_library_loads_its_own(tmp_path: Path, library: Any) -> None:
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file where the cache folder would be")
    identifier = identifier_from_tables(not_a_folder)
    assert not isinstance(identifier.tk_nextmove, StoredEntries)
    assert identifier.classify("wo ist der Fehler") == library.classify("wo ist der Fehler")
    assert identifier_from_tables(None).classify("ok") == library.classify("ok")


def test_the_tables_are_private_files_in_private_folders(tmp_path: Path) -> None:
    identifier_from_tables(tmp_path)
    [folder] = {path.parent for path in table_files(tmp_path)}
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {stat.S_IMODE(path.stat().st_mode) for path in table_files(tmp_path)} == {0o600}


@pytest.mark.skipif(sys.platform != "linux", reason="counts the open files in /proc/self/fd")
def test_an_identifier_let_go_closes_its_files(tmp_path: Path) -> None:
    identifier_from_tables(tmp_path)  # unpacked: the next one only opens
    before = len(os.listdir("/proc/self/fd"))
    identifier = identifier_from_tables(tmp_path)
    assert len(os.listdir("/proc/self/fd")) == before + 2
    del identifier
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == before


def counting_unpacks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Count the model's unpackings (~0.5 s each) from now on."""
    unpacked: list[Path] = []
    unpack = language_tables.unpack_tables
    monkeypatch.setattr(language_tables, "unpack_tables", lambda path: unpacked.append(path) or unpack(path))
    return unpacked


def library_load_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from py3langid.langid import LanguageIdentifier

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was unpacked already: the library's load would unpack it again")

    monkeypatch.setattr(LanguageIdentifier, "from_model_file", refused)


def test_where_the_tables_cannot_be_written_the_unpacked_ones_are_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library: Any
) -> None:
    unpacked = counting_unpacks(monkeypatch)
    library_load_refused(monkeypatch)

    def full_disk(path: Path, write: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(language_tables, "write_privately", full_disk)
    identifier = identifier_from_tables(tmp_path)
    assert len(unpacked) == 1
    assert not isinstance(identifier.tk_nextmove, StoredEntries)
    assert identifier.classify("wo ist der Fehler") == library.classify("wo ist der Fehler")


def test_tables_that_do_not_fit_are_held_not_written_at_every_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library: Any
) -> None:
    library_load_refused(monkeypatch)
    monkeypatch.setattr(LanguageTables, "fit_together", lambda self: False)
    identifier = identifier_from_tables(tmp_path)
    assert table_files(tmp_path) == []
    assert identifier.classify("wo ist der Fehler") == library.classify("wo ist der Fehler")


def test_another_releases_tables_are_forgotten_when_these_are_written(tmp_path: Path) -> None:
    old = tmp_path / TABLES_FOLDER / "0123456789abcdef"
    old.mkdir(parents=True)
    (old / "moves.npy").write_bytes(b"an older release's table")
    identifier_from_tables(tmp_path)
    assert not old.exists()
    assert len(table_files(tmp_path)) == 6


def test_a_table_failing_under_a_loaded_identifier_gives_no_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    english_only = ModelLanguages(frozenset({"en"}), "model card")
    german = "wie kann ich eine Option mit einem Standardwert hinzufügen"
    monkeypatch.setattr(question_language_module, "_loaded", identifier_from_tables(tmp_path))
    told = question_language(german, english_only)
    assert told is not None and told.code == "de"
    [moves] = [path for path in table_files(tmp_path) if path.name == "moves.npy"]
    with moves.open("r+b") as handle:
        handle.truncate(1024)  # cut short in place under the open file
    assert question_language(german, english_only) is None


def test_the_command_line_loads_the_identifier_only_for_a_question_it_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from raglens.cli.settings import language_check
    from raglens.run import EngineSettings

    monkeypatch.setattr(question_language_module, "_loaded", None)
    monkeypatch.setattr(question_language_module, "_tables_in", None)
    languages = language_check(None, None, EngineSettings(cache_dir=str(tmp_path)))  # the bundled model
    assert languages is not None and languages.codes == frozenset({"en"})
    assert question_language("make_context", languages) is None  # too short to check: nothing loaded
    assert not question_language_module.identifier_ready() and table_files(tmp_path) == []
    told = question_language("wie kann ich eine Option mit einem Standardwert hinzufügen", languages)
    assert told is not None and told.code == "de"
    assert len(table_files(tmp_path)) == 6, "loaded over its tables in the command's cache folder"
    assert isinstance(question_language_module.load_identifier().tk_nextmove, StoredEntries)


def test_where_a_file_cannot_be_read_at_an_offset_the_library_loads_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library: Any
) -> None:
    monkeypatch.setattr(language_tables, "TABLES_WORK_HERE", False)  # Windows: no os.pread
    identifier = identifier_from_tables(tmp_path)
    assert not isinstance(identifier.tk_nextmove, StoredEntries) and table_files(tmp_path) == []
    assert identifier.classify("wo ist der Fehler") == library.classify("wo ist der Fehler")
