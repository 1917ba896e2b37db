"""The explorer driven through Pilot, with the fake model in a real embedding process."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from textual.app import App
from textual.message import Message
from textual.widgets import Input, RichLog, Static

from raglens.corpus import CorpusOptions, load_corpus
from raglens.diagnostics.straddle import Straddle
from raglens.engine import Engines
from raglens.pipeline import build_index, search_index
from raglens.ui.screens import main as main_screen
from raglens.ui.screens.settings import SettingsScreen
from raglens.ui.widgets.corpus_tree import CorpusTree
from raglens.ui.widgets.file_lines import FileLines
from raglens.ui.widgets.hit_list import HitList
from raglens.ui.widgets.window_view import WindowView
from raglens.windows import Unit, WindowParams
from tests.conftest import REPO_ROOT, SAMPLE_CORPUS
from tests.fakes import HashingEmbedder
from tests.ui.conftest import (
    fully_ranked,
    hit_texts,
    hits_drawn,
    index_complete,
    make_app,
    notification_recorder,
    ranked_with_noise_band,
    ranking_recorder,
    screen_shown,
    wait_until,
)

QUERY = "how are failed jobs retried with backoff"


def expected_citations(query: str, k: int, params: WindowParams | None = None) -> list[str]:
    """The oracle: the same fake model and core ranking, in this process."""
    embedder = HashingEmbedder()
    index = build_index(
        load_corpus(SAMPLE_CORPUS, CorpusOptions()), params or WindowParams(), Engines.serving(embedder)
    ).snapshot()
    return [hit.window.citation for hit in search_index(index, embedder, query, k).hits]


def shown_citations(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [hit.window.citation for hit in app.query_one(HitList).hits]


def text_of(app, selector: str) -> str:  # type: ignore[no-untyped-def]
    return str(app.query_one(selector, Static).render())


async def test_typing_a_query_shows_the_exact_top_k() -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        await pilot.click("#query")
        await pilot.press(*QUERY)
        expected = expected_citations(QUERY, 5)
        await wait_until(pilot, lambda: shown_citations(app) == expected, f"hits {expected}")
        assert "ranked over all 66 windows" in text_of(app, "#hit-summary")


async def test_a_query_given_at_start_is_ranked_over_the_partial_index_then_again() -> None:
    rankings, record = ranking_recorder()

    app = make_app(factory="tests.fakes:PacedHashingEmbedder", query=QUERY)
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        await wait_until(
            pilot, lambda: bool(rankings) and rankings[-1].result.ranked_count == 66, "a full ranking"
        )
        assert app.query_one("#query", Input).value == QUERY
        partial = [r for r in rankings if r.result.ranked_count < r.result.window_count]
        assert partial, "the query was ranked before the index was complete"
        assert len(rankings) < 20, "re-ranking is throttled, not run on every batch"
        assert shown_citations(app) == expected_citations(QUERY, 5)


async def test_selecting_a_hit_opens_its_window() -> None:
    app = make_app(query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "hits over the whole index")
        second = app.query_one(HitList).hits[1]
        app.main.action_focus_hits()
        await pilot.press("down", "enter")
        await wait_until(
            pilot, lambda: app.main.shown_window == (second.window.path, second.window.index), "the hit"
        )
        header = str(app.query_one("#window-header", Static).render())
        assert f"window {second.window.index + 1} of" in header
        assert f"L{second.window.line_start}-L{second.window.line_end}" in header


async def test_stepping_through_windows_crosses_files() -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        assert app.main.shown_window == ("CONTRIBUTING.md", 0)
        await pilot.press("escape", "n")
        assert app.main.shown_window == ("README.md", 0), "CONTRIBUTING.md has one window, so n moves on"
        await pilot.press("n")
        assert app.main.shown_window == ("README.md", 1)
        await pilot.press("p", "p")
        assert app.main.shown_window == ("CONTRIBUTING.md", 0)


async def test_a_narrow_terminal_folds_the_corpus_pane_until_t_shows_it() -> None:
    from raglens.ui.widgets.corpus_tree import CorpusTree

    app = make_app(query=QUERY)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the hits")
        corpus_pane, tree = app.query_one("#left"), app.query_one(CorpusTree)
        assert not corpus_pane.display, "at 80 columns the window view and the hits get the room"
        assert app.query_one(WindowView).size.width >= 36 and app.query_one(HitList).size.width >= 36
        await pilot.press("escape", "t")
        await wait_until(pilot, lambda: corpus_pane.display and tree.has_focus, "the corpus pane, focused")
        await wait_until(pilot, lambda: tree.is_filled, "the corpus pane filled")
        await pilot.press("down", "down", "enter")
        await wait_until(pilot, lambda: not corpus_pane.display, "the pane folded for the chosen file")
        chosen = tree.cursor_node
        assert chosen is not None and chosen.data is not None and chosen.data.path != "CONTRIBUTING.md"
        assert app.main.shown_window == (chosen.data.path, 0)
        await pilot.press("t")
        await wait_until(pilot, lambda: tree.has_focus, "the tree again")
        await pilot.press("t")
        await wait_until(pilot, lambda: not corpus_pane.display, "t folds it again")
        from raglens.ui.screens.report import ReportScreen

        hits_width = app.query_one(HitList).size.width
        await pilot.press("l")
        await wait_until(
            pilot, lambda: screen_shown(app, ReportScreen, "#report-body"), "the log, over the panes"
        )
        body = str(app.screen.query_one("#report-body", Static).render())
        assert "-> reading sample_corpus" in body
        box = app.screen.query_one("#report-box")
        await wait_until(pilot, lambda: box.scroll_y == box.max_scroll_y, "the newest lines in view")
        await pilot.press("l")
        await wait_until(pilot, lambda: not isinstance(app.screen, ReportScreen), "l closes it again")
        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, ReportScreen), "l opens it again")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ReportScreen), "the log closed")
        assert not corpus_pane.display and app.query_one(HitList).size.width == hits_width, "no pane squeezed"
        await pilot.resize_terminal(160, 45)
        await wait_until(pilot, lambda: corpus_pane.display, "a wide terminal always shows the corpus")
        await pilot.press("t")
        await pilot.press("t")
        assert corpus_pane.display, "t only focuses the tree when there is room for it"


async def test_the_window_view_marks_where_the_model_stops_reading() -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        app.main.show_file("docs/queues.md", 1)
        await pilot.pause()
        header = str(app.query_one("#window-header", Static).render())
        assert "the model stops after" in header, header
        extent = app.main.index.extent(app.main.a.file_rows["docs/queues.md"].start + 1)  # type: ignore[union-attr]
        assert extent is not None and extent.token_count > 126


async def test_k_changes_with_a_key_and_the_ranking_follows() -> None:
    app = make_app(query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "five hits")
        await pilot.press("escape", "plus", "plus")
        await wait_until(pilot, lambda: fully_ranked(app, 7), "seven hits")
        assert shown_citations(app) == expected_citations(QUERY, 7)
        assert "k=7" in text_of(app, "#status")


async def test_new_window_settings_rebuild_the_index() -> None:
    app = make_app(query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the first index, ranked")
        app.main.show_file("CONTRIBUTING.md", 0)  # as the user opens a file: the view no longer follows
        await pilot.press("escape", "w")
        await wait_until(pilot, lambda: screen_shown(app, SettingsScreen, "#settings-apply"), "the settings")
        size = app.screen.query_one("#settings-size", Input)
        size.value = "500"
        overlap = app.screen.query_one("#settings-overlap", Input)
        overlap.value = "50"
        await pilot.click("#settings-apply")
        params = WindowParams(Unit.CHARS, 500, 50)
        await wait_until(
            pilot,
            lambda: app.main.a.config.params == params and index_complete(app),
            "the index of 500/50 windows",
        )
        expected = expected_citations(QUERY, 5, params)
        await wait_until(pilot, lambda: shown_citations(app) == expected, "the re-ranked hits")
        header = str(app.query_one("#window-header", Static).render())
        assert "window 1 of 2" in header, "the shown file is redrawn with the new grid"
        assert "500/50 chars" in text_of(app, "#status")


async def test_bad_settings_are_refused_with_a_message() -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("escape", "w")
        await wait_until(pilot, lambda: screen_shown(app, SettingsScreen, "#settings-apply"), "the settings")
        app.screen.query_one("#settings-overlap", Input).value = "5000"
        await pilot.click("#settings-apply")

        def refused() -> str:
            return str(app.screen.query_one("#settings-error", Static).render())

        await wait_until(
            pilot, lambda: isinstance(app.screen, SettingsScreen) and bool(refused()), "a refusal"
        )
        assert "must be smaller than the size" in refused()


async def test_a_corpus_with_nothing_to_index_is_a_notification_not_a_crash(tmp_path: Path) -> None:
    app = make_app(path=str(tmp_path))
    notifications, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: bool(notifications), "a notification")
        [notification] = notifications
        assert "the folder is empty" in notification.message
        assert app.is_running


async def test_a_model_that_cannot_load_is_a_notification() -> None:
    app = make_app(factory="tests.fakes:failing_embedder")
    notifications, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: bool(notifications), "a notification")
        assert any("cannot be loaded (on purpose)" in n.message for n in notifications)
        assert app.is_running


async def test_a_rescan_says_so_on_screen() -> None:
    """An unchanged corpus is re-read in a blink: a newcomer pressed r and saw nothing happen."""
    app = make_app()
    notifications, record = notification_recorder()
    async with app.run_test(size=(80, 24), message_hook=record) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        assert not notifications
        await pilot.press("escape", "r")
        await wait_until(
            pilot, lambda: any(n.title == "re-scanning" for n in notifications), "a notification"
        )
        await wait_until(pilot, lambda: index_complete(app), "the re-scan's index")


async def test_selecting_a_skipped_file_says_why(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    app = make_app(path=str(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.main.corpus is not None, "the corpus")
        app.query_one(WindowView)
        tree = app.query_one(CorpusTree)
        await wait_until(pilot, lambda: tree.is_filled, "the corpus pane filled")
        node = tree.node_for("blob.bin")
        assert node is not None
        tree.select_node(node)
        lines = app.query_one(FileLines)
        await wait_until(
            pilot, lambda: "binary: a NUL byte" in lines.shown_text(1), "the reason it is skipped"
        )


@pytest.mark.parametrize("hostile", ["\x1b[2J\x1b]0;owned\x07 [bold]not markup[/bold]"])
async def test_file_content_is_shown_as_inert_text(tmp_path: Path, hostile: str) -> None:
    (tmp_path / "hostile.txt").write_text(f"line one\n{hostile}\n")
    app = make_app(path=str(tmp_path), query="owned")
    async with app.run_test(size=(160, 45)) as pilot:
        file_lines = app.query_one(FileLines)
        await wait_until(
            pilot,
            lambda: len(app.query_one(HitList).hits) == 1 and file_lines.layout_shown is not None,
            "the hit and the file",
        )
        assert file_lines.layout_shown is not None
        shown = "\n".join(file_lines.shown_text(n) for n in range(1, file_lines.layout_shown.line_count + 1))
        assert "␛[2J␛]0;owned␇ [bold]not markup[/bold]" in shown
        assert "\x1b" not in shown


async def test_a_relaunch_takes_every_vector_from_the_cache(tmp_path: Path) -> None:
    first = make_app(cache_dir=str(tmp_path), query="how are windows cut")
    async with first.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(first, 5), "the first launch's hits")
        expected = shown_citations(first)
        assert first.main.a.from_cache == 0
    second = make_app(cache_dir=str(tmp_path), query="how are windows cut")
    async with second.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(second, 5), "the relaunch's hits")
        assert second.main.a.from_cache == 66, "nothing is embedded again"
        assert shown_citations(second) == expected
        assert "66 from the cache" in text_of(second, "#status")


def pipeline_log(app) -> str:  # type: ignore[no-untyped-def]
    """The pipeline log's text, its lines as they wrap joined again (each keeps its wrapping space)."""
    return "".join(strip.text for strip in app.query_one("#pipeline-log", RichLog).lines)


async def test_a_relaunch_on_unchanged_files_takes_the_stored_index_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from raglens import corpus_memo
    from raglens.embedding_process import EmbeddingProcess
    from raglens.stored_index import stored_indexes

    monkeypatch.setattr(corpus_memo, "RACY_NS", -3_600_000_000_000)  # files just copied count as settled
    corpus_dir = tmp_path / "corpus"
    shutil.copytree(REPO_ROOT / "sample_corpus", corpus_dir)
    cache, query = tmp_path / "cache", "how are windows cut"
    sent: list[int] = []
    real_index_windows = EmbeddingProcess.index_windows

    def recording(self, generation, texts, *args):  # type: ignore[no-untyped-def]
        sent.append(len(texts))
        return real_index_windows(self, generation, texts, *args)

    monkeypatch.setattr(EmbeddingProcess, "index_windows", recording)
    first = make_app(path=str(corpus_dir), cache_dir=str(cache), query=query)
    async with first.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(first, 5), "the first launch's hits")
        expected = shown_citations(first)
        await wait_until(pilot, lambda: bool(stored_indexes(cache)), "the complete index stored")
        assert not first.main.a.index_taken and sent == [66]
    second = make_app(path=str(corpus_dir), cache_dir=str(cache), query=query)
    async with second.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(second, 5), "the relaunch's hits")
        assert second.main.a.index_taken and sent == [66], "no text went to the embedding process"
        assert shown_citations(second) == expected
        assert "all 66 from the index kept when these files were last read" in pipeline_log(second)
        assert "66 from the cache" in text_of(second, "#status")
        (corpus_dir / "docs" / "queues.md").write_text("# Queues\n\nRewritten.\n")
        await pilot.press("escape", "r")
        await wait_until(pilot, lambda: index_complete(second) and len(sent) == 2, "the re-scan's windows")
        assert sent[1] == len(second.main.a.windows) == 64, "the windows' texts went to the process"
        assert not second.main.a.index_taken, "a changed file: the stored index is not the index any more"


async def test_an_edited_file_marks_its_hits_stale_and_a_rescan_embeds_only_its_change(
    tmp_path: Path, files_read: list[str]
) -> None:
    from raglens import corpus_memo

    read = files_read
    corpus_dir = tmp_path / "corpus"
    shutil.copytree(REPO_ROOT / "sample_corpus", corpus_dir)
    query = "what happens after a job is acknowledged"
    app = make_app(path=str(corpus_dir), cache_dir=str(tmp_path / "cache"), query=query)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the hits")
        assert "changed on disk" not in text_of_hits(app)
        queues = corpus_dir / "docs" / "queues.md"
        queues.write_text(queues.read_text() + "\nOne more closing line.\n")
        await app.query_one("#query", Input).action_submit()
        await wait_until(
            pilot, lambda: hits_drawn(app) and "changed on disk" in text_of_hits(app), "the stale mark"
        )
        assert len(read) > 30, "the first launch read every file"
        memo = corpus_memo.memo_path(tmp_path / "cache", corpus_dir.resolve(), CorpusOptions())
        await wait_until(pilot, memo.exists, "the memo of the files as read")
        read.clear()
        await pilot.press("escape", "r")
        await wait_until(pilot, lambda: index_complete(app) and app.main.a.from_cache == 65, "the re-scan")
        assert read == ["docs/queues.md"], "the re-scan read only the file that changed"
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the hits again")
        await wait_until(
            pilot, lambda: hits_drawn(app) and "changed on disk" not in text_of_hits(app), "fresh hits"
        )


async def test_the_memo_of_the_files_is_written_once_the_cached_vectors_are_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written as the corpus was drawn, the memo competed for the GIL with the texts' sending and the
    cached vectors' arrival (the worst stall of a start-up at 100k windows)."""
    from raglens import corpus_memo
    from raglens.corpus_memo import MemoToSave

    monkeypatch.setattr(corpus_memo, "RACY_NS", -3_600_000_000_000)  # files just copied count as settled
    corpus_dir, cache = tmp_path / "corpus", str(tmp_path / "cache")
    shutil.copytree(REPO_ROOT / "sample_corpus", corpus_dir)
    first = make_app(path=str(corpus_dir), cache_dir=cache)
    async with first.run_test(size=(160, 45)) as pilot:  # every vector cached, the memo written
        await wait_until(pilot, lambda: index_complete(first), "the first launch's index")
        memo = corpus_memo.memo_path(tmp_path / "cache", corpus_dir.resolve(), CorpusOptions())
        await wait_until(pilot, memo.exists, "the first memo")
    queues = corpus_dir / "docs" / "queues.md"
    queues.write_text(queues.read_text() + "\nOne more closing line.\n")  # the memo changes
    real_save = MemoToSave.save
    states: list[tuple[int, int]] = []
    app = make_app(path=str(corpus_dir), cache_dir=cache)

    def recording(memo: MemoToSave) -> bool:
        states.append((app.main.a.embedded_count, app.main.a.from_cache))
        return real_save(memo)

    monkeypatch.setattr(MemoToSave, "save", recording)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        await wait_until(pilot, lambda: bool(states), "the memo written")
    assert len(states) == 1, states
    embedded, from_cache = states[0]
    assert from_cache > 0 and embedded >= from_cache, f"written before the cached vectors were in: {states}"


async def test_the_memo_of_the_files_is_written_when_the_model_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No cache answers for a model that failed to open: the memo does not wait for one."""
    from raglens import corpus_memo

    monkeypatch.setattr(corpus_memo, "RACY_NS", -3_600_000_000_000)
    monkeypatch.setattr(main_screen, "MEMO_AT_LATEST_S", 3600.0)  # not the time cap: the failure
    corpus_dir = tmp_path / "corpus"
    shutil.copytree(REPO_ROOT / "sample_corpus", corpus_dir)
    app = make_app(
        path=str(corpus_dir), factory="tests.fakes:failing_embedder", cache_dir=str(tmp_path / "c")
    )
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.main.a.failure is not None, "the model's failure")
        memo = corpus_memo.memo_path(tmp_path / "c", corpus_dir.resolve(), CorpusOptions())
        await wait_until(pilot, memo.exists, "the memo of the files as read")


async def test_the_memo_of_the_files_waits_for_no_cache_longer_than_its_time_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from raglens import corpus_memo
    from raglens.run import ConfigurationRun

    monkeypatch.setattr(corpus_memo, "RACY_NS", -3_600_000_000_000)
    monkeypatch.setattr(main_screen, "MEMO_AT_LATEST_S", 0.2)
    monkeypatch.setattr(ConfigurationRun, "cache_reply_over", property(lambda run: False))  # never
    corpus_dir = tmp_path / "corpus"
    shutil.copytree(REPO_ROOT / "sample_corpus", corpus_dir)
    app = make_app(path=str(corpus_dir), cache_dir=str(tmp_path / "c"))
    async with app.run_test(size=(160, 45)) as pilot:
        memo = corpus_memo.memo_path(tmp_path / "c", corpus_dir.resolve(), CorpusOptions())
        await wait_until(pilot, memo.exists, "the memo of the files as read")


def text_of_hits(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(hit_texts(app))


async def test_the_file_opened_while_indexing_is_embedded_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a file moves its windows to the front; only their row numbers travel, never texts again."""
    from raglens.embedding_process import EmbeddingProcess

    sent: list[tuple[str, tuple[object, ...]]] = []
    for name in ("index_windows", "embed_first"):
        original = getattr(EmbeddingProcess, name)

        def recording(self, *args, _name=name, _original=original, **kwargs):  # type: ignore[no-untyped-def]
            sent.append((_name, args))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(EmbeddingProcess, name, recording)
    app = make_app(factory="tests.fakes:PacedHashingEmbedder")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(
            pilot, lambda: app.main.index is not None and app.main.index.embedded_count > 0, "the first batch"
        )
        last = app.main.corpus.files[-1].path  # type: ignore[union-attr]
        rows = app.main.a.file_rows[last]
        assert not any(app.main.index.has_vector(row) for row in rows)  # type: ignore[union-attr]
        tree = app.query_one(CorpusTree)
        await wait_until(pilot, lambda: tree.is_filled, "the corpus pane filled")
        node = tree.node_for(last)
        assert node is not None
        tree.select_node(node)
        await wait_until(pilot, lambda: all(app.main.index.has_vector(row) for row in rows), "its windows")  # type: ignore[union-attr]
        assert not app.main.index.is_complete, "embedded before the rest of the corpus"  # type: ignore[union-attr]
        await wait_until(pilot, lambda: index_complete(app), "the whole index")
    assert [name for name, _ in sent].count("index_windows") == 1, "the texts travel once"
    priorities = [args for name, args in sent if name == "embed_first"]
    assert priorities, "opening the file asked for its windows first"
    for generation, asked in priorities:
        assert generation == 1 and all(isinstance(row, int) for row in asked)  # type: ignore[attr-defined]
        assert set(asked) <= set(rows)  # type: ignore[arg-type]


async def test_the_score_strip_draws_the_noise_band_and_hits_carry_literal_marks() -> None:
    rankings, record = ranking_recorder()

    app = make_app(query="drain_pending_jobs")
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:

        def banded() -> bool:
            return bool(rankings) and rankings[-1].diagnostics.noise is not None and fully_ranked(app, 5)

        await wait_until(pilot, banded, "a full ranking with the noise band")
        diagnostics = rankings[-1].diagnostics
        # The fake model's control questions score the same in this process: the band is theirs.
        embedder = HashingEmbedder()
        index = build_index(
            load_corpus(SAMPLE_CORPUS, CorpusOptions()), WindowParams(), Engines.serving(embedder)
        ).snapshot()
        from raglens.diagnostics.noise_floor import CONTROL_QUESTIONS, measure_noise_floor

        expected = measure_noise_floor(index, embedder.encode_query, CONTROL_QUESTIONS)
        assert expected is not None and diagnostics.noise is not None
        assert diagnostics.noise.high == pytest.approx(expected.high)
        assert diagnostics.noise.edge == pytest.approx(expected.edge)
        strip = text_of(app, "#score-strip")
        assert "?" in strip and f"noise edge {expected.edge:.3f} ± {expected.spread:.3f}" in strip
        assert "drain_pending_jobs: 10 occurrence(s) in 7 file(s)" in strip
        items = hit_texts(app)
        marked = [m.identifiers for m in diagnostics.lexical]
        assert any(marked), "some hit holds the identifier"
        for text, identifiers in zip(items, marked, strict=True):
            assert ("≡ contains drain_pending_jobs" in text) == bool(identifiers)
        await pilot.press("ctrl+a", "ctrl+k")  # clear the query: the strip goes with the hits
        await wait_until(pilot, lambda: not app.query_one("#score-strip").display, "the strip hidden")


async def test_the_window_view_marks_what_no_window_reads() -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        app.main.show_file("docs/queues.md", 0)
        await pilot.pause()
        layout = app.query_one(FileLines).layout_shown
        assert layout is not None and layout.never_read, "the fake model reads 128 tokens: tails are lost"
        start, end = layout.never_read[0]
        from raglens.window_layout import Band

        assert layout.band_at(start) is Band.NEVER_READ and layout.band_at(end - 1) is Band.NEVER_READ
        assert "read by no window" in text_of(app, "#window-header")
        from textual.widgets import RichLog

        log = "\n".join(strip.text for strip in app.query_one("#pipeline-log", RichLog).lines)
        assert "windows of about" in log and "read by no window" in log.replace("\n", " ")


async def test_heat_colours_each_window_by_its_score_for_the_query() -> None:
    app = make_app(query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "hits over the whole index")
        app.main.show_file("docs/queues.md", 0)
        app.main.action_leave_query()
        await pilot.press("m")
        await wait_until(pilot, lambda: app.query_one(FileLines).layout_shown is not None, "the file")
        layout = app.query_one(FileLines).layout_shown
        assert layout is not None and layout.heat is not None
        result = app.main.last_result
        assert result is not None
        rows = app.main.a.file_rows["docs/queues.md"]
        assert list(layout.heat) == [float(result.scores[row]) for row in rows]
        await pilot.press("m")
        layout = app.query_one(FileLines).layout_shown
        assert layout is not None and layout.heat is None


async def test_pinning_a_hit_tracks_its_rank_and_g_appends_a_golden_case(tmp_path: Path) -> None:
    import json

    from raglens.ui.screens.pin import PinScreen
    from raglens.ui.screens.save_case import SaveCaseScreen

    golden = tmp_path / "golden" / "cases.jsonl"
    app = make_app(query=QUERY, golden_path=str(golden))
    notices, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "hits over the whole index")
        app.main.action_focus_hits()
        await pilot.press("down")  # the second hit
        second = app.query_one(HitList).highlighted_hit
        assert second is not None and second.rank == 2
        await pilot.press("a")
        await wait_until(pilot, lambda: screen_shown(app, PinScreen, "OptionList:focus"), "the pin choices")
        await pilot.press("enter")  # the first choice: the hit's whole file
        await wait_until(
            pilot,
            lambda: f"expected {second.window.path}: rank" in text_of(app, "#score-strip"),
            "the pinned answer's rank in the strip",
        )
        # The file's best window may rank above this hit, never below it.
        assert app.main.last_diagnostics is not None
        (expected,) = app.main.last_diagnostics.expected
        assert expected.rank is not None and expected.rank <= 2
        await pilot.press("g")
        await wait_until(pilot, lambda: screen_shown(app, SaveCaseScreen, "OptionList:focus"), "the kinds")
        await pilot.press("down", "enter")  # the suggested kind (prose) is first: take the next one
        await wait_until(pilot, golden.exists, "the golden file")
        (line,) = golden.read_text(encoding="utf-8").splitlines()
        assert json.loads(line) == {"q": QUERY, "expect": [second.window.path], "kind": "identifier"}
        from raglens.diagnostics.golden import read_golden

        assert read_golden(golden)[0].query == QUERY  # what g writes, raglens eval reads
        await pilot.press("g")  # the same case again: refused, the file unchanged
        await wait_until(
            pilot, lambda: any("line 1 already holds this case" in n.message for n in notices), "the refusal"
        )
        assert not isinstance(app.screen, SaveCaseScreen)
        assert golden.read_text(encoding="utf-8").splitlines() == [line]


async def test_the_prompt_preview_shows_the_exact_context() -> None:
    from raglens.ui.screens.report import ReportScreen

    app = make_app(query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "hits over the whole index")
        app.main.action_leave_query()
        await pilot.press("c")
        await wait_until(pilot, lambda: screen_shown(app, ReportScreen, "#report-body"), "the prompt")
        body = str(app.screen.query_one("#report-body", Static).render())
        for position, hit in enumerate(app.query_one(HitList).hits, start=1):
            assert f"[{position}] {hit.window.citation}" in body
        assert f"Question: {QUERY}" in body
        assert "tokens" in str(app.screen.query_one("#report-title", Static).render())


async def test_the_failure_lab_runs_every_probe_from_the_app() -> None:
    from raglens.ui.messages import ProbesReady
    from raglens.ui.screens.report import ReportScreen

    reports: list[ProbesReady] = []

    notices, record_notice = notification_recorder()

    def record(message: Message) -> None:
        record_notice(message)
        if isinstance(message, ProbesReady):
            reports.append(message)

    app = make_app()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        app.main.action_leave_query()
        await pilot.press("f")
        await wait_until(pilot, lambda: screen_shown(app, ReportScreen, "#report-body"), "the failure lab")
        names = [result.name for result in reports[-1].results]
        assert names == ["exact symbol", "boundary straddle", "other language", "unanswerable"]
        body = str(app.screen.query_one("#report-body", Static).render())
        assert "drain_pending_jobs" in body and "hits anyway" in body
        assert "BM25 ranks 1" in body, "the exact symbol's windows ranked by BM25 beside the model's ranks"
        assert "noise edge" in body, "the lab judges with the band search and the strip use"
        said = [n.message for n in notices if "failure lab" in n.message]
        assert said == ["running the failure lab over all 66 windows…"], said


async def test_a_failing_worker_is_a_notification_and_a_logged_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from raglens.ui import ranking

    real = ranking.rank_for_display
    failures = iter([RuntimeError("the ranking broke")])

    def flaky(*args, **kwargs):  # type: ignore[no-untyped-def]
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return real(*args, **kwargs)

    monkeypatch.setattr(ranking, "rank_for_display", flaky)
    log = tmp_path / "logs" / "raglens.log"
    app = make_app(error_log_path=str(log))
    notifications, record = notification_recorder()
    async with app.run_test(size=(160, 45), message_hook=record) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        await pilot.click("#query")
        await pilot.press(*"first query", "enter")
        await wait_until(pilot, log.exists, "the error log")
        assert "RuntimeError: the ranking broke" in log.read_text(encoding="utf-8")
        notes = [str(n.message) for n in notifications]
        assert any("ranking failed" in note and str(log) in note for note in notes)
        await pilot.press("ctrl+a", "ctrl+k", *QUERY, "enter")  # the app is still running
        await wait_until(pilot, lambda: fully_ranked(app, 5), "hits after the failure")


async def test_ctrl_c_while_indexing_quits_and_stops_the_embedding_process() -> None:
    app = make_app(factory="tests.fakes:PacedHashingEmbedder")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(
            pilot, lambda: app.main.index is not None and app.main.index.embedded_count > 0, "indexing"
        )
        process = app.main.a.process
        assert process is not None and not app.main.index.is_complete
        await pilot.press("ctrl+c")  # the question box has the focus: Ctrl+C still quits
        await wait_until(pilot, lambda: not app.is_running, "the app to quit")
    assert app.main.a.process is None
    assert not process.is_alive()


async def test_rankings_and_vectors_arriving_under_a_modal_screen_are_drawn_behind_it() -> None:
    from raglens.ui.screens.help import HelpScreen

    app = make_app(factory="tests.fakes:PacedHashingEmbedder", query=QUERY)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.main.last_result is not None, "a first, partial ranking")
        app.main.action_leave_query()
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        await wait_until(pilot, lambda: index_complete(app), "the index, under the help screen")
        await wait_until(
            pilot,
            lambda: app.main.last_result is not None and app.main.last_result.ranked_count == 66,
            "a full ranking, under the help screen",
        )
        await pilot.press("escape")
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the full hits once the help is closed")
        assert shown_citations(app) == expected_citations(QUERY, 5)


AROUND_THE_CUT = " ".join((REPO_ROOT / "sample_corpus/docs/queues.md").read_text()[700:1100].split())
"""The words around the cut between docs/queues.md's windows 1 and 2: with the bag-of-words fake model
both windows rank, the first well above the noise band of the control questions."""


async def open_the_straddle(app, pilot) -> Straddle:  # type: ignore[no-untyped-def]
    """Wait for AROUND_THE_CUT's ranking, with its noise band, and open the straddle it finds."""
    await wait_until(
        pilot, lambda: ranked_with_noise_band(app, 5), "hits over the whole index, with the noise band"
    )
    diagnostics = app.main.last_diagnostics
    assert diagnostics is not None and diagnostics.straddles, "the fake ranking has a straddle"
    straddle = diagnostics.straddles[0]
    app.main.show_file(straddle.path, straddle.second.window.index)
    await pilot.pause()
    assert "both rank" in text_of(app, "#window-header")
    return straddle


async def test_a_straddle_marks_the_shared_lines_in_the_gutter() -> None:
    app = make_app(query=AROUND_THE_CUT, k=5)
    async with app.run_test(size=(160, 45)) as pilot:
        straddle = await open_the_straddle(app, pilot)
        lines = app.query_one(FileLines)
        shared = range(straddle.second.window.line_start, straddle.first.window.line_end + 1)
        assert len(shared) >= 1
        for number in shared:
            assert "┆" in lines.shown_text(number)[:6], lines.shown_text(number)
        before = straddle.first.window.line_start
        if before not in shared:
            assert "│" in lines.shown_text(before)[:6]


async def test_a_straddle_note_goes_with_the_question_that_found_it() -> None:
    """A new question without the straddle, or an emptied question box, takes the note and the gutter
    marks off the window view: they were a claim about the question before (found by a newcomer)."""
    app = make_app(query=AROUND_THE_CUT, k=5)
    async with app.run_test(size=(160, 45)) as pilot:
        straddle = await open_the_straddle(app, pilot)
        other = "how do I replay a dead-letter job"
        box = app.main.query_one("#query", Input)
        box.value = other
        await box.action_submit()
        await wait_until(pilot, lambda: app.main.shown_query == other and fully_ranked(app, 5), "new hits")
        new = app.main.last_diagnostics
        assert new is not None and not [s for s in new.straddles if s.path == straddle.path]
        assert app.main.shown_window is not None and app.main.shown_window[0] == straddle.path
        assert "both rank" not in text_of(app, "#window-header")
        lines = app.query_one(FileLines)
        shared = range(straddle.second.window.line_start, straddle.first.window.line_end + 1)
        assert shared and all("┆" not in lines.shown_text(number)[:6] for number in shared)

        box.value = AROUND_THE_CUT
        await box.action_submit()
        await wait_until(pilot, lambda: "both rank" in text_of(app, "#window-header"), "the note again")
        box.value = ""
        await box.action_submit()
        await wait_until(pilot, lambda: "both rank" not in text_of(app, "#window-header"), "no note")
        assert app.main.last_result is None and app.main.last_diagnostics is None


async def test_bf16_asked_for_is_labelled_approximate_wherever_a_score_is_shown() -> None:
    app = make_app(precision="bf16", query="how are windows cut")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the hits")
        assert "bf16 ≈ approximate" in text_of(app, "#status")
        summary = str(app.query_one("#hit-summary", Static).render())
        assert "bf16 ≈ approximate scores" in summary


async def test_the_default_precision_is_exact_and_says_so() -> None:
    app = make_app(query="how are windows cut")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: fully_ranked(app, 5), "the hits")
        status = text_of(app, "#status")
        assert " · fp32 · " in status and "approximate" not in status
        assert "approximate" not in str(app.query_one("#hit-summary", Static).render())


@pytest.mark.parametrize(
    ("size", "corpus_pane"),
    [((80, 24), False), ((80, 24), True), ((160, 45), False)],
    ids=["80x24", "80x24-corpus-pane-open", "160x45"],
)
async def test_citations_and_markers_are_never_cut(
    tmp_path: Path, size: tuple[int, int], corpus_pane: bool
) -> None:
    """A long path is shortened from the left (…/name.py:L1-L9); the line range and markers stay whole."""
    from raglens.ui.widgets.hit_list import HitBody

    folder = tmp_path / "src" / "a_rather_deeply_nested_package" / "with_long_folder_names"
    folder.mkdir(parents=True)
    for number in range(6):
        lines = "".join(
            f"def handler_{number}_{line}(): return 'shell completion {line}'\n" for line in range(30)
        )
        (folder / f"completion_{number}.py").write_text(lines, encoding="utf-8")
    app = make_app(path=str(tmp_path), query="shell completion for bash", k=5)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: ranked_with_noise_band(app, 5), "the hits, with the noise band")
        if corpus_pane:
            app.main.action_leave_query()
            await pilot.press("t")
            await wait_until(pilot, lambda: app.query_one("#left").display, "the corpus pane")
        await pilot.pause()
        for body in app.query(HitBody):
            width = body.size.width
            assert width > 0
            heading = [line for line in str(body.render()).split("\n") if "│" not in line]
            window = body.hit.window
            line_range = f":L{window.line_start}-L{window.line_end}"
            assert any(line.rstrip().endswith(line_range) or f"{line_range}  " in line for line in heading), (
                heading
            )
            assert all(len(line) <= width for line in heading), (width, heading)
            name = window.path.rsplit("/", 1)[-1]
            assert any(name in line for line in heading), ("the file name is kept whole", width, heading)
            marks = "".join("".join(heading).split())
            if body.lines.noise_mark:
                assert "".join(body.lines.noise_mark.split()) in marks, heading
            if body.lines.literal:
                assert "".join(f"≡ {body.lines.literal}".split()) in marks, heading


async def test_the_footer_says_how_to_leave_the_question_box() -> None:
    """The box has the focus at launch: the footer offers escape, not `/` (which types a slash there)."""

    def footer_actions(app: App[None]) -> set[str]:
        return {
            binding.action
            for (_, binding, enabled, _) in app.active_bindings.values()
            if enabled and binding.show
        }

    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.main.corpus is not None, "the corpus")
        assert isinstance(app.focused, Input)
        assert "leave_query" in footer_actions(app) and "focus_query" not in footer_actions(app)
        await pilot.press("q")
        assert app.is_running and app.query_one("#query", Input).value == "q", "q types in the box"
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.focused, Input)
        assert "focus_query" in footer_actions(app) and "leave_query" not in footer_actions(app)


INSTRUMENTS = ("straddle", "pinned answer", "identifier", "all at once")


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
@pytest.mark.parametrize("instrument", INSTRUMENTS)
async def test_every_finding_of_the_score_strip_is_on_screen(size: tuple[int, int], instrument: str) -> None:
    """The strip had a fixed height and cut its own findings: a straddle line ended mid-sentence and
    the identifier's dense ranks never appeared. At 160x45 each instrument's lines are shown whole; at
    80x24 each takes one line, cut with "(i)", and i shows them whole."""
    import dataclasses

    from raglens.diagnostics.golden import ExpectedRef
    from raglens.diagnostics.query_report import ExpectedRank
    from raglens.diagnostics.straddle import Straddle
    from raglens.ui.widgets.score_strip import ScoreStrip

    query = "drain_pending_jobs" if instrument in ("identifier", "all at once") else QUERY
    app = make_app(query=query, k=5)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: ranked_with_noise_band(app, 5), "the hits, with the noise band")
        diagnostics, result = app.main.last_diagnostics, app.main.last_result
        assert diagnostics is not None and result is not None
        assert (diagnostics.identifier is not None) == (query == "drain_pending_jobs")
        hits = result.hits
        straddles = (Straddle(hits[0], hits[1]), Straddle(hits[2], hits[3]))
        expected = (
            ExpectedRank(ExpectedRef("docs/queues.md"), 3),
            ExpectedRank(ExpectedRef("tidepool/retry.py", "compute_backoff_delay"), 41),
        )
        if instrument == "straddle":
            diagnostics = dataclasses.replace(diagnostics, straddles=straddles[:1])
        elif instrument == "pinned answer":
            diagnostics = dataclasses.replace(diagnostics, expected=expected[1:])
        elif instrument == "all at once":
            diagnostics = dataclasses.replace(diagnostics, straddles=straddles, expected=expected)
        await wait_until(pilot, lambda: not any(w.group == "rank" for w in app.workers), "no ranking running")
        strip = app.query_one(ScoreStrip)
        strip.show_diagnostics(diagnostics, hits, 5)
        scroll = app.query_one("#strip-scroll")

        def layout() -> tuple[int, int]:
            return strip.outer_size.height, scroll.scrollable_content_region.height

        seen = None
        while seen != layout() or not strip.settled:  # until a refresh changes nothing more
            seen = layout()
            await pilot.pause(0.05)
        needed, visible = layout()
        assert strip.content_size.height >= len(str(strip.render()).split("\n")), "the strip holds every line"
        assert app.query_one(HitList).size.height >= 4, "the hits keep room below the strip"
        # At 80x24 every finding is one line (i shows them whole), so even all of them at once fit.
        assert needed <= visible, f"{needed} lines of findings in a strip showing {visible}"
        if size == (80, 24):
            rendered = str(strip.render()).split("\n")
            assert all(len(line) <= strip.size.width for line in rendered), rendered
            await pilot.press("escape", "i")  # the findings whole: they may scroll, never cut
            await wait_until(pilot, lambda: strip.unfolded and "(i)" not in str(strip.render()), "unfolded")


async def test_a_rescan_lets_the_old_corpus_tree_go(monkeypatch: pytest.MonkeyPatch) -> None:
    """The heap is frozen after each corpus load (a full collection stalled the loop); what a re-scan
    replaces (the tree's nodes, which hold each other in cycles) would be kept for good by it.

    Cutting the windows' texts is slowed as on a large corpus (~0.1 s at 82k windows), where the old
    tree was still shown when the heap was frozen again."""
    import gc
    import time
    import weakref

    from raglens import windows

    cut_texts = windows.window_texts

    def slowly(*args: object) -> list[str]:
        time.sleep(0.2)
        return cut_texts(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(windows, "window_texts", slowly)
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: index_complete(app), "the index")
        read_before = [app.main.corpus]
        await wait_until(pilot, lambda: app.query_one(CorpusTree).is_filled, "the corpus pane filled")
        gone = weakref.ref(next(iter(app.query_one(CorpusTree).root.children)))
        app.main.action_rescan()
        await wait_until(
            pilot,
            lambda: app.main.corpus is not read_before[0] and index_complete(app),
            "the corpus read again",
        )
        read_before.clear()
        await pilot.pause()
        gc.collect()  # frozen objects survive it: only what the app unfroze can go
        assert gone() is None, "the tree's old nodes outlive the re-scan that replaced them"


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
async def test_while_embedding_the_status_line_s_numbers_are_never_cut(size: tuple[int, int]) -> None:
    """The status row is one line: words past its width wrapped out of sight ("· embedded" with no
    numbers at 80 columns, where the progress bar took 30 of them). At 80 the bar gives way."""
    from textual.widgets import ProgressBar

    from raglens.ui.widgets.status_line import StatusLine

    app = make_app(factory="tests.fakes:PacedHashingEmbedder")
    seen: list[tuple[int, str, bool, int]] = []

    def embedding_shown() -> bool:
        index = app.main.index
        if index is None or not 0 < index.embedded_count < index.window_count:
            return False
        status = app.query_one(StatusLine)
        text = status.render()
        lines = text.wrap(app.console, status.size.width)
        bar = app.query_one("#progress", ProgressBar)
        seen.append((len(lines), text.plain, bar.display, status.size.width))
        return "embedded " in text.plain

    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, embedding_shown, "the status line while embedding")
    line_count, words, bar_shown, width = seen[-1]
    assert line_count == 1, words
    assert re.search(r"embedded \d+/66", words), words
    narrow = size[0] < 110
    assert bar_shown != narrow
    if narrow:
        assert width == size[0] - 2, "the whole row but its padding, for the model's name and the numbers"
