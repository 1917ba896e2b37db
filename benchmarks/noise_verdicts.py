"""Count the noise verdicts each golden case's top hit gets, before and after the band of issue 26.

Usage: uv run python benchmarks/noise_verdicts.py PATH GOLDEN.jsonl [--cache-dir DIR]

Before: the band was the best scores of five control questions; a hit above their maximum was
"above", anything else "within". After: raglens's noise floor (the 95th percentile of the control
questions' best scores, give or take their spread: above / undecided / within), and no verdict for a
question in a language the model does not read. A positive (a case with an answer) should be above;
a negative (``expect: []``) should be within. The model is the bundled one, fp32, as ``search`` runs it.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from rich.console import Console

from raglens.cli.main import build_parser
from raglens.cli.narration import Narrator
from raglens.cli.searching import noise_floor_of, prepare_index, read_corpus_named
from raglens.cli.settings import engine_settings, retrieval_config
from raglens.diagnostics.control_questions import CONTROL_QUESTIONS
from raglens.diagnostics.golden import read_golden
from raglens.diagnostics.noise_floor import ControlScore, NoiseFloor
from raglens.diagnostics.question_language import question_language
from raglens.model_languages import model_languages
from raglens.windows import WindowParams

OLD_CONTROL_COUNT = 5
"""Before issue 26 the band was the first five control questions."""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path")
    parser.add_argument("golden")
    parser.add_argument("--cache-dir")
    options = parser.parse_args()
    flags = ["search", options.path, "-", "-q"]
    flags += ["--cache-dir", options.cache_dir] if options.cache_dir else []
    args = build_parser("search").parse_args(flags[1:])
    stderr = Console(stderr=True)
    params = WindowParams.for_unit(args.unit, args.size, args.overlap)
    config = retrieval_config(args, params)
    with Narrator(stderr, quiet=True) as narrator:
        corpus = read_corpus_named(args, narrator)
        prepared = prepare_index(config, engine_settings(args), corpus, narrator, stderr)
    dense = prepared.dense
    assert dense is not None
    after = noise_floor_of(prepared)
    assert after is not None
    # As the old code measured it: a full ranking of each of the five, its top hit's score.
    before = NoiseFloor(
        tuple(
            ControlScore(question, hit.score, hit.window.citation)
            for question in CONTROL_QUESTIONS[:OLD_CONTROL_COUNT]
            for hit in dense.search(question, 1).hits
        )
    )
    languages = model_languages(config.model)
    print(f"{Path(options.path).name}: {prepared.retriever.window_count} windows")
    print(f"before: band {before.low:.3f}-{before.high:.3f} (max of {len(before.controls)} controls)")
    low, high = after.undecided_band
    print(f"after:  {after.describe_band()}; undecided {low:.3f}-{high:.3f}")
    tally: dict[tuple[str, str, str], int] = collections.Counter()
    print(f"\n{'case':<62} {'top':>6}  {'before':<7} after")
    for case in read_golden(options.golden):
        top = dense.search(case.query, 1).hits[0].score
        side = "negative" if case.is_negative else "positive"
        old = "above" if top > before.high else "within"
        language = question_language(case.query, languages)
        new = (
            "no verdict"
            if language is not None and not language.model_reads_it
            else (after.verdict(top).name.lower())
        )
        tally[(side, "before", old)] += 1
        tally[(side, "after", new)] += 1
        print(f"{side[:3]} {case.query[:58]:<58} {top:6.3f}  {old:<7} {new}")
    print()
    for side in ("positive", "negative"):
        for when in ("before", "after"):
            counts = {v: tally[(side, when, v)] for v in ("above", "undecided", "within", "no verdict")}
            print(f"{side:<9} {when:<7} " + "  ".join(f"{v} {n}" for v, n in counts.items()))


if __name__ == "__main__":
    main()
