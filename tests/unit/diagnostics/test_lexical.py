from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from raglens.diagnostics.lexical import (
    identifier_report,
    identifier_tokens,
    lexical_match,
    looks_like_identifier,
    query_identifier,
)
from raglens.diagnostics.noise_floor import measure_noise_floor
from raglens.diagnostics.straddle import find_straddles
from raglens.embedding import normalize_rows
from raglens.engine import Engines
from raglens.index import IndexSnapshot, VectorIndex
from raglens.search import SearchResult, rank, rank_of
from raglens.windows import Unit, Window
from tests.conftest import MakeTree


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("iter_source_files", True),
        ("camelCase", True),
        ("Queue.drain", True),
        ("std::vector", True),
        ("utf8", True),
        ("retry", False),
        ("Queue", False),
        ("how are jobs retried", False),
    ],
)
def test_what_looks_like_an_identifier(token: str, expected: bool) -> None:
    assert looks_like_identifier(token) is expected


def test_identifier_tokens_and_queries() -> None:
    assert identifier_tokens("why does drain_pending_jobs call set_paused twice? drain_pending_jobs!") == [
        "drain_pending_jobs",
        "set_paused",
    ]
    assert query_identifier(" drain_pending_jobs() ") == "drain_pending_jobs"
    assert query_identifier("drain the queue") is None


def test_lexical_match_quotes_phrases_and_whole_tokens_only() -> None:
    text = "Q: How do I start a worker?\nA: call start_worker(), not restart_worker_pool."
    match = lexical_match("how do  I start a WORKER?", text)
    assert match.quotes_query and not match.identifiers
    assert lexical_match("start_worker", text).identifiers == ("start_worker",)
    assert not lexical_match("start_worker", text).quotes_query  # one word: "contains" says it
    assert not lexical_match("restart_worker", text).any  # a part of a longer name is not a match


def windows_and_index(vectors: list[list[float]]) -> tuple[list[Window], IndexSnapshot]:
    windows = [Window("f.py", Unit.CHARS, i, i * 10, i * 10 + 10, i + 1, i + 1) for i in range(len(vectors))]
    index = VectorIndex(windows, len(vectors[0]))
    index.fill(range(len(vectors)), normalize_rows(np.array(vectors, dtype=np.float32)))
    return windows, index.snapshot()


def test_identifier_report_gives_the_dense_rank_of_each_window_holding_it() -> None:
    chars = ["."] * 40
    chars[11:18] = "my_name"  # inside window 1, [10, 20)
    chars[31:38] = "my_name"  # inside window 3, [30, 40)
    text = "".join(chars)
    windows, index = windows_and_index([[1, 0], [0.2, 1], [0.6, 0.4], [0.9, 0.1]])
    result = rank(index, np.array([1, 0], dtype=np.float32), 1)
    report = identifier_report("my_name", {"f.py": text}, windows, result)
    assert [o.offset for o in report.occurrences] == [11, 31]
    assert [entry.window.index for entry in report.windows] == [3, 1]  # by rank
    assert report.ranks == [2, 4]
    assert "present in 2 window(s); dense ranks 2, 4" in report.describe()
    assert "nowhere" in identifier_report("absent_name", {"f.py": text}, windows, result).describe()


@given(arrays(np.float32, st.integers(1, 40), elements=st.sampled_from([0.0, 0.1, 0.5, 0.5, 0.9])))
def test_rank_of_matches_the_position_in_a_full_ranking(scores: np.ndarray) -> None:
    from raglens.search import SearchResult

    result = SearchResult((), scores, np.arange(scores.size), scores.size)
    order = sorted(range(scores.size), key=lambda row: (-float(scores[row]), row))
    assert [rank_of(result, row) for row in range(scores.size)] == [
        order.index(r) + 1 for r in range(scores.size)
    ]


@given(st.data())
def test_ranks_of_many_rows_equals_rank_of_each(data: st.DataObject) -> None:
    """Past the threshold ranks_of sorts once; it must agree with rank_of, unembedded rows included."""
    from raglens.search import RANKS_BY_FULL_ORDER_FROM, SearchResult, ranks_of

    window_count = data.draw(st.integers(1, 3 * RANKS_BY_FULL_ORDER_FROM))
    flags = data.draw(st.lists(st.booleans(), min_size=window_count, max_size=window_count))
    embedded = [row for row, flag in enumerate(flags) if flag]
    scores = data.draw(
        arrays(np.float32, len(embedded), elements=st.sampled_from([-0.2, 0.0, 0.1, 0.5, 0.9]))
    )
    result = SearchResult((), scores, np.array(embedded, dtype=np.int64), window_count)
    many = data.draw(st.booleans())  # half the cases take the one-sort path
    asked = data.draw(
        st.lists(
            st.integers(0, window_count - 1),
            min_size=RANKS_BY_FULL_ORDER_FROM if many else 0,
            max_size=2 * RANKS_BY_FULL_ORDER_FROM,
        )
    )
    assert ranks_of(result, asked) == [rank_of(result, row) for row in asked]


def test_rank_of_a_row_not_embedded_is_none() -> None:
    windows, index = windows_and_index([[1, 0], [0, 1]])
    partial = VectorIndex(windows, 2)
    partial.fill([1], index.vectors[1:2])
    assert rank_of(rank(partial.snapshot(), np.array([1, 0], dtype=np.float32), 1), 0) is None


def test_straddles_are_adjacent_windows_of_one_file() -> None:
    _windows, index = windows_and_index([[1, 0], [0.95, 0.1], [0, 1], [0.9, 0.2]])
    hits = rank(index, np.array([1, 0], dtype=np.float32), 3).hits
    straddles = find_straddles(hits)
    assert [(s.first.window.index, s.second.window.index) for s in straddles] == [(0, 1)]
    assert straddles[0].cut == (10, 10)


def test_noise_floor_is_the_band_of_control_questions_best_scores() -> None:
    windows, index = windows_and_index([[1, 0, 0], [0, 1, 0]])
    vectors = {"a": [1, 0, 0], "b": [0.6, 0.8, 0], "c": [0, 0, 1]}
    noise = measure_noise_floor(index, lambda q: np.array(vectors[q], dtype=np.float32), ["a", "b", "c"])
    assert noise is not None
    assert noise.low == pytest.approx(0.0) and noise.high == pytest.approx(1.0)
    assert not noise.stands_above(0.99)
    assert measure_noise_floor(VectorIndex(windows, 3), lambda q: np.zeros(3, np.float32)) is None


def test_the_probes_ask_exactly_the_queries_they_planned() -> None:
    from raglens.corpus import CorpusOptions, load_corpus
    from raglens.diagnostics.probes import ProbeContext, plan_probes, run_probes
    from raglens.pipeline import build_index
    from tests.conftest import SAMPLE_CORPUS
    from tests.fakes import HashingEmbedder

    embedder = HashingEmbedder()
    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    from raglens.windows import WindowParams

    index = build_index(corpus, WindowParams(), Engines.serving(embedder)).snapshot()
    texts = corpus.texts()
    asked: list[str] = []

    def ranked(query: str, k: int):  # type: ignore[no-untyped-def]
        asked.append(query)
        return rank(index, embedder.encode_query(query), k)

    plan = plan_probes(texts, index.windows)
    run_probes(ProbeContext(texts, index.windows, ranked, 5, embedder.name, plan), ["my own probe"])
    assert list(dict.fromkeys(asked)) == plan.queries(["my own probe"])


def test_a_long_list_of_ranks_is_cut_after_the_best_and_names_the_worst() -> None:
    from raglens.diagnostics.lexical import RANKS_SHOWN, IdentifierReport, Occurrence, WindowWithIdentifier

    window = Window("f.py", Unit.CHARS, 0, 0, 10, 1, 1)
    holding = tuple(WindowWithIdentifier(row, window, row * 3 + 1, 0.5) for row in range(RANKS_SHOWN + 5))
    report = IdentifierReport("a_name", (Occurrence("f.py", 1, 0),), holding)
    text = report.describe()
    assert text.endswith(f"… 5 more, the last at {(RANKS_SHOWN + 4) * 3 + 1}")
    assert text.count(",") == RANKS_SHOWN + 1


@pytest.mark.parametrize(
    ("docstring", "question"),
    [
        ("Drain every pending job.\n\nMore detail.", "Drain every pending job."),
        ("Rank windows by cosine similarity. Exact top-k.", "Rank windows by cosine similarity."),
        ("``raglens cache info --json``.", None),  # a code label: nobody asks that
        ("The `Queue` type.", None),
        ("Ask `drain` for the pending jobs.", "Ask `drain` for the pending jobs."),
        ("", None),
        (None, None),
    ],
)
def test_a_straddle_question_is_the_docstring_first_sentence_when_it_is_prose(
    docstring: str | None, question: str | None
) -> None:
    from raglens.diagnostics.probes import question_from_docstring

    assert question_from_docstring(docstring) == question


def test_the_straddle_probe_numbers_lines_as_citations_do_lone_cr_included(make_tree: MakeTree) -> None:
    """Lines end at CRLF, lone CR or LF everywhere in raglens; the probe must not count only LFs."""
    from raglens.corpus import CorpusOptions, load_corpus
    from raglens.diagnostics.probes import ProbeContext, plan_probes, probe_straddle
    from raglens.pipeline import build_index
    from raglens.windows import WindowParams
    from tests.fakes import HashingEmbedder

    paragraph = "The scheduler retries a failed job after a pause that doubles each time. " * 5
    text = (
        "Heading number one\rHeading number two\rHeading number three\r\n\n"
        + paragraph.strip()
        + "\n\nThe end.\n"
    )
    root = make_tree({"notes.md": text})
    embedder = HashingEmbedder()
    corpus = load_corpus(root, CorpusOptions())
    index = build_index(corpus, WindowParams(size=400, overlap=40), Engines.serving(embedder)).snapshot()

    def ranked(query: str, k: int) -> SearchResult:
        return rank(index, embedder.encode_query(query), k)

    texts = corpus.texts()
    context = ProbeContext(texts, index.windows, ranked, 5, embedder.name, plan_probes(texts, index.windows))
    result = probe_straddle(context)
    assert result.queries, "the paragraph is cut by the 400/40 grid"
    assert "A paragraph at notes.md:L5-L5 is" in result.explanation[0], result.explanation[0]


def test_the_straddle_probe_asks_about_the_most_evenly_cut_span_first() -> None:
    """On click the first cut definition lost only its last 14 characters: a weak example."""
    from raglens.corpus import CorpusOptions, load_corpus
    from raglens.diagnostics.probes import plan_probes
    from raglens.windows import Unit, WindowParams, cut_corpus
    from tests.conftest import SAMPLE_CORPUS

    corpus = load_corpus(SAMPLE_CORPUS, CorpusOptions())
    texts = corpus.texts()
    windows = cut_corpus(corpus, WindowParams(Unit.CHARS, 400, 50))
    spans = plan_probes(texts, windows).cut_spans
    assert len(spans) >= 3
    for span in spans:  # the share worked out again: the most of the span one window holds
        own = [w for w in windows if w.path == span.path and w.start < span.end and span.start < w.end]
        most = max(min(w.end, span.end) - max(w.start, span.start) for w in own)
        assert span.largest_share == pytest.approx(most / (span.end - span.start))
        assert 0 < span.largest_share < 1
    definitions = [s for s in spans if s.label != "a paragraph"]
    paragraphs = [s for s in spans if s.label == "a paragraph"]
    assert list(spans) == definitions + paragraphs
    for group in (definitions, paragraphs):
        shares = [s.largest_share for s in group]
        assert shares == sorted(shares)
