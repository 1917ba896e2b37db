"""``raglens probe``: the failure lab on the user's corpus, printed or as one JSON document."""

from __future__ import annotations

import argparse

from rich.console import Console

from raglens.bm25_index import lazy_bm25_ranker
from raglens.cli.consoles import console_for
from raglens.cli.documents import SCHEMA_VERSION, dump, model_document, parameters_document
from raglens.cli.lab_documents import probe_document
from raglens.cli.lab_render import print_probes
from raglens.cli.narration import Narrator
from raglens.cli.searching import (
    engine_header,
    noise_floor_of,
    prepare_index,
    read_corpus_named,
    stdout_kept_for_data,
)
from raglens.cli.settings import engine_settings, language_check, retrieval_config, top_k
from raglens.configuration import BM25_HAS_NO_NOISE_FLOOR, is_bm25
from raglens.diagnostics.probes import ProbeContext, plan_probes, run_probes
from raglens.errors import BadInputError
from raglens.windows import WindowParams


def run_probe(args: argparse.Namespace, params: WindowParams, stderr: Console) -> int:
    """Index ``args.path`` and run the four built-in probes plus the user's own (an empty or runaway
    one was refused before: ``main._refuse_careless_arguments``)."""
    top_k(args)
    config, settings = retrieval_config(args, params), engine_settings(args)
    if is_bm25(config.model):
        raise BadInputError(BM25_HAS_NO_NOISE_FLOOR)
    json_mode = bool(args.json)
    with Narrator(stderr, quiet=args.quiet) as narrator, stdout_kept_for_data(json_mode):
        corpus = read_corpus_named(args, narrator)
        prepared = prepare_index(config, settings, corpus, narrator, stderr)
        retriever, engine = prepared.retriever, prepared.engine
        narrator.say("running the probes")
        texts = prepared.corpus.texts()
        plan = plan_probes(texts, retriever.windows)
        context = ProbeContext(
            texts,
            retriever.windows,
            retriever.search,
            args.k,
            engine.name,
            plan,
            noise_floor_of(prepared),
            language_check(config.model, args.embedder_factory, settings),
            lazy_bm25_ranker(retriever.windows, texts),
            lambda question, row: retriever.explain(
                question, row, retriever.windows[row].text_in(texts[retriever.windows[row].path])
            ),
        )
        results = run_probes(context, args.probes)
    if json_mode:
        print(
            dump(
                {
                    "schema": SCHEMA_VERSION,
                    "k": args.k,
                    "parameters": parameters_document(params, args.max_file_bytes),
                    "model": model_document(engine),
                    "window_count": retriever.window_count,
                    "probes": [probe_document(result) for result in results],
                }
            )
        )
    else:
        console = console_for()
        console.print(engine_header(engine), markup=False, style="dim")
        print_probes(console, results)
    return 0
