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
    paths = data.draw(st.lists(st.sampled_from(PATHS), min_size=count, max_size=count))
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
