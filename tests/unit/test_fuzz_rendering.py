"""Random bytes as file content, through the corpus reader, the window grid and both renderers."""

from __future__ import annotations

import io
import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from raglens.cli.render import hits_renderable
from raglens.corpus import Corpus, CorpusOptions, SourceFile, read_source
from raglens.search import Hit, SearchResult
from raglens.ui.widgets.file_lines import line_text
from raglens.window_layout import FileLayout
from raglens.windows import Unit, WindowParams, cut_windows

_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
PARAMS = (WindowParams(Unit.CHARS, 40, 10), WindowParams(Unit.WORDS, 5, 1), WindowParams(Unit.LINES, 3, 1))

# Bytes biased towards what breaks things: controls, line breaks, UTF-8 lead bytes, BOMs.
hostile_bytes = st.lists(
    st.one_of(
        st.binary(min_size=1, max_size=8),
        st.sampled_from(
            [b"\x1b[2J", b"\x1b]52;c;", b"\x07", b"\r\n", b"\r", b"\n", b"\xff\xfe", b"\xc3", b"[b]"]
        ),
        st.text(max_size=8).map(lambda text: text.encode("utf-8", "surrogatepass")),
    ),
    max_size=40,
).map(b"".join)


@settings(max_examples=150)
@given(hostile_bytes)
def test_any_bytes_are_read_cut_and_drawn_without_a_raw_control(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "f.txt").write_bytes(data)
        outcome = read_source(root, "f.txt", CorpusOptions())
    if not isinstance(outcome, SourceFile):
        assert outcome.detail, "a skip always says why"
        return
    for params in PARAMS:
        windows = cut_windows("f.txt", outcome.text, params)
        for current in (None, 0) if windows else (None,):
            layout = FileLayout(outcome.text, windows, current, chars_read=3)
            for number in range(1, layout.line_count + 1):
                shown = line_text(layout, number, 3).plain
                assert _TERMINAL_CONTROLS.search(shown) is None, repr(shown)
        if not windows:
            continue
        corpus = Corpus(root=Path("/corpus"), files=(outcome,), skipped=(), listing="walk")
        import numpy as np

        hits = tuple(Hit(rank + 1, 0.5, window, rank) for rank, window in enumerate(windows[:3]))
        result = SearchResult(hits, np.zeros(len(windows), np.float32), np.arange(len(windows)), len(windows))
        out = io.StringIO()
        Console(file=out, width=80, highlight=False).print(hits_renderable(result, corpus, 6))
        assert _TERMINAL_CONTROLS.search(out.getvalue()) is None, repr(out.getvalue())
