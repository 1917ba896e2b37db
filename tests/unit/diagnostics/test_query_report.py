"""Where pinned answers rank, against a brute-force ordering of the embedded windows."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from raglens.diagnostics.golden import ExpectedRef
from raglens.diagnostics.query_report import diagnose_query
from raglens.search import SearchResult
from raglens.windows import Unit, Window

PATHS = ("a.py", "b.md", "c.txt")


@given(st.data())
def test_a_pinned_file_ranks_at_its_best_embedded_window(data: st.DataObject) -> None:
    count = data.draw(st.integers(1, 600))  # past the count where ranks_of sorts once
    # Sorted: a file's windows come in one run, as a corpus is cut.
    paths = sorted(data.draw(st.lists(st.sampled_from(PATHS), min_size=count, max_size=count)))
    windows = [Window(path, Unit.CHARS, row, 0, 10, 1, 1) for row, path in enumerate(paths)]
    flags = data.draw(st.lists(st.booleans(), min_size=count, max_size=count))
    embedded = [row for row, flag in enumerate(flags) if flag] or [0]
    values = st.sampled_from([-0.1, 0.0, 0.2, 0.2, 0.7])
    scores = np.array(data.draw(st.lists(values, min_size=len(embedded), max_size=len(embedded))), np.float32)
    result = SearchResult((), scores, np.array(embedded, dtype=np.int64), count)
    texts = dict.fromkeys(PATHS, " " * 10)
    expected = {ExpectedRef(path): () for path in PATHS}

    diagnostics = diagnose_query("what?", result, 5, texts, windows, None, expected)

    order = sorted(range(len(embedded)), key=lambda position: (-float(scores[position]), embedded[position]))
    for found in diagnostics.expected:
        places = [
            place for place, position in enumerate(order, 1) if paths[embedded[position]] == found.ref.path
        ]
        assert found.rank == (places[0] if places else None)


def test_no_straddle_is_reported_among_hits_that_score_like_off_topic_questions() -> None:
    from raglens.diagnostics.noise_floor import ControlScore, NoiseFloor
    from raglens.search import Hit

    windows = [
        Window("a.md", Unit.CHARS, row, row * 800, row * 800 + 1000, row + 1, row + 2) for row in range(3)
    ]
    texts = {"a.md": "x" * 2600}

    def diagnosed(first: float, second: float) -> int:
        hits = (Hit(1, first, windows[0], 0), Hit(2, second, windows[1], 1))
        result = SearchResult(hits, np.array([first, second, 0.0], np.float32), np.arange(3), 3)
        noise = NoiseFloor((ControlScore("lasagna?", 0.3, "a.md:L1-L2"),))
        return len(diagnose_query("how?", result, 2, texts, windows, noise).straddles)

    assert diagnosed(0.25, 0.2) == 0, "both within the noise band: no answer to be split"
    assert diagnosed(0.45, 0.2) == 1, "one of them stands above it: the answer may straddle the cut"
