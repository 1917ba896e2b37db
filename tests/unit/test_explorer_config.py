"""``raglens PATH …`` becomes the explorer's start-up settings: every flag reaches it, bad ones fail first."""

from __future__ import annotations

import pytest

from raglens.cli.main import build_parser, explorer_config
from raglens.errors import BadInputError
from raglens.windows import Unit, WindowParams


def test_the_explorer_gets_every_model_flag_the_headless_commands_take() -> None:
    args = build_parser(None).parse_args(
        [
            "sample_corpus",
            "a question",
            "--size",
            "800",
            "--overlap",
            "100",
            "--max-seq-length",
            "512",
            "-k",
            "7",
        ]
    )
    config = explorer_config(args)
    assert (
        config.retrieval.params == WindowParams(Unit.CHARS, 800, 100)
        and config.k == 7
        and config.query == "a question"
    )
    assert config.retrieval.max_seq_length == 512
    assert config.engine.choice(config.retrieval).max_seq_length == 512


@pytest.mark.parametrize(
    ("flags", "message"),
    [(["--max-seq-length", "4096"], "reads at most 512 tokens"), (["-k", "0"], "-k must be at least 1")],
)
def test_a_bad_flag_fails_before_the_screen_opens(flags: list[str], message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        explorer_config(build_parser(None).parse_args(["sample_corpus", *flags]))
