"""The explorer's diagnostics keys: heat, pinned answers and golden cases, the prompt, the failure lab.

A mixin of the app, so the app module keeps to the panes and the index. Workers only post
messages; the handlers here own the state they add.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.worker import get_current_worker

from raglens.errors import BadInputError
from raglens.printable import printable, printable_name
from raglens.ui.explorer_screen import ExplorerScreen
from raglens.ui.futures import result_unless_cancelled
from raglens.ui.messages import (
    GoldenCaseChecked,
    GoldenCaseDone,
    ProbesReady,
    PromptReady,
    while_shown,
)
from raglens.ui.pins import Pins
from raglens.ui.screens.pin import PinScreen
from raglens.ui.screens.report import ReportScreen
from raglens.ui.screens.save_case import SaveCaseScreen
from raglens.ui.widgets.hit_list import HitList
from raglens.ui.widgets.window_view import FileLens

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from concurrent.futures import Future
    from pathlib import Path

    import numpy as np

    from raglens.attribution import Attribution
    from raglens.corpus import Corpus
    from raglens.diagnostics.golden_writer import NewCase
    from raglens.index import IndexSnapshot
    from raglens.search import SearchResult


class LabActions(ExplorerScreen):
    """Heat over the file, pinned expected answers, golden cases, the prompt and the failure lab."""

    def lens_on_file(self, path: str) -> FileLens:
        """The current query's score of each window of ``path`` (with heat on), and its straddles."""
        result, diagnostics = self.last_result, self.last_diagnostics
        if result is None or path not in self.a.file_rows:
            return FileLens(heat_on=self.heat_on)
        heat = None
        if self.heat_on and result.cosine:  # a BM25 score has no place on the heat's cosine legend
            from raglens.search import score_of  # numpy is loaded once there is a result

            heat = [score_of(result, row) for row in self.a.file_rows[path]]
        straddles = [s for s in diagnostics.straddles if s.path == path] if diagnostics else []
        cut_lines = frozenset(
            line
            for s in straddles
            for line in range(
                s.second.window.line_start, max(s.first.window.line_end, s.second.window.line_start) + 1
            )
        )
        return FileLens(heat, tuple(s.describe() for s in straddles), cut_lines, heat_on=self.heat_on)

    def action_toggle_heat(self) -> None:
        if self.a.lexical and not self.heat_on:
            self.notify("heat colours windows on the cosine scale; BM25 scores have none", timeout=5)
            return
        self.heat_on = not self.heat_on
        if self.shown_window is not None:
            self.show_file(*self.shown_window, scroll=False)
        if self.heat_on and self.last_result is None:
            self.notify("heat colours the windows by their score once a query is ranked", timeout=4)

    # Pinned answers and golden cases.

    def action_pin_answer(self) -> None:
        """Offer the highlighted hit's file and the symbols its window holds as the expected answer."""
        hit = self.query_one(HitList).highlighted_hit
        if hit is None or self.corpus is None or not self.shown_query:
            self.notify("rank a query first, then pin one of its hits as the expected answer", timeout=5)
            return
        from raglens.diagnostics.symbols import find_definitions

        window = hit.window
        definitions = find_definitions(window.path, self.corpus.file(window.path).text)
        # A name defined twice in the window (a Markdown code block and the text around it) is one choice.
        symbols = dict.fromkeys(d.name for d in definitions if d.overlaps(window.start, window.end))
        choices = [window.path, *(f"{window.path}::{name}" for name in symbols)]
        query = self.shown_query
        self.app.push_screen(PinScreen(query, choices), lambda choice: self._pin_chosen(query, choice))

    def _pin_chosen(self, question: str, choice: str | None) -> None:
        if choice is None or not self.pin_refs(question, [choice]):
            return
        self.notify(
            f"pinned {printable_name(choice)} for this question; u unpins, g saves the case",
            timeout=4,
            markup=False,
        )
        self.rerank(now=True)

    def pin_refs(self, question: str, refs: Sequence[str]) -> bool:
        """Pin the golden refs ``refs`` (``path``, ``path::symbol``, ``path:L3-L9``) as the answer to
        ``question``, resolved as eval resolves them; if this corpus lacks one, say so and pin none.

        Pins made for another question are dropped, and the user told: a label belongs to its question.
        """
        if self.corpus is None:
            return False
        from raglens.diagnostics.evaluation import resolve_expected
        from raglens.diagnostics.golden import ExpectedRef

        try:
            resolved = resolve_expected([ExpectedRef.parse(ref) for ref in refs], self.corpus.texts())
        except (ValueError, BadInputError) as error:
            why = printable(str(error))
            self.notify(why, title="not pinned", severity="warning", timeout=10, markup=False)
            return False
        pins = self.pins
        if pins is not None and pins.question != question:
            self.notify(
                f"unpinned {len(pins.answers)} answer(s) made for {pins.question!r}",
                timeout=5,
                markup=False,
            )
            pins = None
        answers = dict(pins.answers) if pins is not None else {}
        answers.update(resolved)
        self.pins = Pins(question, MappingProxyType(answers))  # read by ranking workers: never changed
        return True

    def action_unpin(self) -> None:
        if self.pins is None:
            self.notify("nothing is pinned", timeout=3)
            return
        self.pins = None
        self.notify("unpinned", timeout=3)
        self.rerank(now=True)

    def action_save_case(self) -> None:
        """Offer to append the question and its pinned answers to the golden file, with a kind."""
        query, pins = self.shown_query, self.pins
        if not query or pins is None:
            self.notify(
                "pin an expected answer first (a, on a hit), or N saves the question as a negative",
                timeout=6,
            )
            return
        if pins.question != query:
            self.notify(
                f"the pins were made for {pins.question!r}, not this question: ask that one again to "
                "save it, or u unpins",
                title="not saved",
                severity="warning",
                timeout=8,
                markup=False,
            )
            return
        self._offer_case(query, pins.refs())

    def action_save_negative(self) -> None:
        """Offer to append the question as a negative case: nothing in this corpus answers it."""
        query, pins = self.shown_query, self.pins
        if not query:
            self.notify("ask a question first: N saves it as one this corpus cannot answer", timeout=5)
            return
        if pins is not None and pins.question == query:
            self.notify(
                "this question has pinned answers: g saves them, or u unpins before saving it as a negative",
                title="not saved",
                severity="warning",
                timeout=8,
            )
            return
        self._offer_case(query, ())

    def _offer_case(self, query: str, refs: tuple[str, ...]) -> None:
        """Check the golden file in a worker; if it lacks the question, let the user choose a kind."""
        from raglens.diagnostics.golden_writer import NewCase, suggested_kind

        diagnostics = self.last_diagnostics  # the question's language, told when it was ranked
        other = diagnostics is not None and diagnostics.unread_language
        kind = suggested_kind(query, negative=not refs, other_language=other)
        self.check_golden_case(NewCase(query, refs, kind), self.golden_path())

    @work(thread=True, exclusive=True, group="golden", exit_on_error=False, description="golden file")
    def check_golden_case(self, case: NewCase, target: Path) -> None:
        from raglens.diagnostics.golden_writer import check_case

        try:
            check_case(target, case)
        except BadInputError as error:
            self.post_message(GoldenCaseDone(str(error), saved=False))
            return
        if not get_current_worker().is_cancelled:  # a second g meanwhile: only its dialog opens
            self.post_message(GoldenCaseChecked(case, target))

    @while_shown
    def on_golden_case_checked(self, message: GoldenCaseChecked) -> None:
        case, target = message.case, message.target

        def chosen(kind: str | None) -> None:
            if kind is not None:
                self.write_golden_case(replace(case, kind=kind), target)

        self.app.push_screen(SaveCaseScreen(case.query, case.expect, str(target), case.kind), chosen)

    @work(thread=True, exclusive=True, group="golden", exit_on_error=False, description="golden file")
    def write_golden_case(self, case: NewCase, target: Path) -> None:
        from raglens.diagnostics.golden_writer import append_case

        try:
            line = append_case(target, case)
        except BadInputError as error:
            self.post_message(GoldenCaseDone(str(error), saved=False))
            return
        what = "negative case" if case.is_negative else "case"
        self.post_message(GoldenCaseDone(f"saved the {what} as line {line} of {target} ({case.kind})", True))

    def on_golden_case_done(self, message: GoldenCaseDone) -> None:
        if message.saved:
            self.notify(printable(message.note), timeout=6, markup=False)
        else:
            self.notify(
                printable(message.note), title="not saved", severity="warning", timeout=10, markup=False
            )

    # The prompt.

    def action_prompt_preview(self) -> None:
        if self.last_result is None or self.corpus is None or not self.shown_query:
            self.notify("rank a query first: the prompt is built from its hits", timeout=5)
            return
        self.assemble_prompt(self.shown_query, self.last_result, self.corpus)

    @work(thread=True, exclusive=True, group="prompt", exit_on_error=False, description="the prompt")
    def assemble_prompt(self, query: str, result: SearchResult, corpus: Corpus) -> None:
        from raglens.diagnostics.coverage import token_counter_for
        from raglens.diagnostics.prompt import PromptPreview, assemble_prompt

        text = assemble_prompt(query, result.hits, corpus.texts())
        counter = token_counter_for(self.a.config.model)
        self.post_message(
            PromptReady(PromptPreview(text, counter.count(text) if counter else None, len(result.hits)))
        )

    def on_prompt_ready(self, message: PromptReady) -> None:
        preview = message.preview
        tokens = (
            f"{preview.token_count:,} tokens" if preview.token_count is not None else "tokens not counted"
        )
        title = (
            f"The prompt an LLM would get: {preview.context_count} window(s), {len(preview.text):,} "
            f"characters, {tokens} (embedding model's tokenizer)"
        )
        self.app.push_screen(ReportScreen(title, Text(printable(preview.text))))

    # The failure lab.

    def action_failure_lab(self) -> None:
        if self.a.lexical:
            from raglens.configuration import BM25_HAS_NO_NOISE_FLOOR

            self.notify(BM25_HAS_NO_NOISE_FLOOR, timeout=8)
            return
        index, corpus, process = self.a.index, self.corpus, self.a.process
        if index is None or corpus is None or index.embedded_count == 0 or process is None:
            self.notify("the failure lab runs once some windows are embedded", timeout=5)
            return
        if any(worker.group == "probes" and not worker.is_finished for worker in self.workers):
            self.notify("the failure lab is already running", timeout=3)
            return
        over = (
            f"all {index.window_count:,} windows"
            if index.is_complete
            else f"the {index.embedded_count:,} of {index.window_count:,} windows embedded so far"
        )
        self.notify(f"running the failure lab over {over}…", timeout=3)
        generation = self.a.generation

        def explain(question: str, row: int) -> Attribution:
            """Window ``row``'s score taken apart by the process (called from the lab's worker)."""
            from raglens.attribution import Unexplained

            window = index.windows[row]
            text = window.text_in(corpus.file(window.path).text)
            answer = result_unless_cancelled(process.explain(question, text, generation, row))
            return answer if answer is not None else Unexplained("the embedding process ended first")

        self.run_failure_lab(
            index.snapshot(),
            corpus,
            process.embed_query,
            explain,
            self.k,
            self.a.model_label(),
            (self.a.config.model, self.config.engine.embedder_factory),
        )

    @work(thread=True, exclusive=True, group="probes", exit_on_error=False, description="failure lab")
    def run_failure_lab(
        self,
        index: IndexSnapshot,
        corpus: Corpus,
        embed_query: Callable[[str], Future[np.ndarray]],
        explain: Callable[[str, int], Attribution],
        k: int,
        model_label: str,
        model: tuple[str | None, str | None],
    ) -> None:
        """Choose the probes, have the process embed their questions and the control questions, then
        rank each one and measure the noise band as search does."""
        from raglens.bm25_index import lazy_bm25_ranker
        from raglens.diagnostics.noise_floor import CONTROL_QUESTIONS, measure_noise_floor
        from raglens.diagnostics.probes import ProbeContext, plan_probes, run_probes
        from raglens.diagnostics.question_language import identifier_ready
        from raglens.model_languages import languages_of
        from raglens.search import rank

        plan = plan_probes(corpus.texts(), index.windows)
        queries = dict.fromkeys([*plan.queries(), *CONTROL_QUESTIONS])
        asked = {query: embed_query(query) for query in queries}
        answered = {query: result_unless_cancelled(vector) for query, vector in asked.items()}
        vectors = {query: vector for query, vector in answered.items() if vector is not None}
        if get_current_worker().is_cancelled or len(vectors) < len(asked):
            return  # cancelled, or the embedding process died: the app reports that and starts it again

        def ranked(query: str, top: int) -> SearchResult:
            return rank(index, vectors[query], top)  # every query was embedded first: a KeyError is a bug

        noise = measure_noise_floor(index, vectors.__getitem__)
        lexical = lazy_bm25_ranker(index.windows, corpus.texts())  # only the exact symbol asks BM25
        context = ProbeContext(
            corpus.texts(),
            index.windows,
            ranked,
            k,
            model_label,
            plan,
            noise,
            # As a ranking does: until the explorer's worker has loaded the identifier over its tables,
            # no check (here, it would load it the library's way, 75 MiB for the rest of the session).
            languages_of(*model) if identifier_ready() else None,
            lexical,
            explain,
        )
        self.post_message(ProbesReady(run_probes(context), index.embedded_count, index.window_count))

    def on_probes_ready(self, message: ProbesReady) -> None:
        from raglens.diagnostics.describe import probe_report_lines

        body = Text()
        for style, line in probe_report_lines(message.results):
            body.append(printable(line) + "\n", style=style)
        ranked, total = message.ranked_count, message.window_count
        over = "" if ranked == total else f" (over {ranked} windows so far)"
        self.app.push_screen(ReportScreen(f"The failure lab{over}", body))
