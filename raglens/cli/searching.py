"""``raglens search``: load, index, rank, print."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator

from rich.console import Console

from raglens.cli.documents import dump, search_document
from raglens.cli.narration import Narrator
from raglens.cli.render import print_search
from raglens.corpus import Corpus, CorpusOptions
from raglens.embedding import SentenceTransformerEmbedder
from raglens.errors import BadInputError
from raglens.index import VectorIndex
from raglens.pipeline import build_index, read_corpus, search_index
from raglens.windows import WindowParams


@contextlib.contextmanager
def _stdout_kept_for_data(json_mode: bool) -> Iterator[None]:
    """In JSON mode, send anything the model libraries print to stderr, so stdout holds one document."""
    if not json_mode:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _prepare(
    args: argparse.Namespace, params: WindowParams, narrator: Narrator
) -> tuple[Corpus, SentenceTransformerEmbedder, VectorIndex]:
    if args.k <= 0:
        raise BadInputError(f"-k must be at least 1, got {args.k}")
    corpus = read_corpus(args.path, CorpusOptions(max_file_bytes=args.max_file_bytes), on_step=narrator)
    label = args.model or "the bundled all-MiniLM-L6-v2"
    narrator.say(f"loading {label} (importing sentence-transformers takes a few seconds)")
    embedder = SentenceTransformerEmbedder(args.model, args.device, offline=not args.allow_download)
    narrator.say(
        f"model {embedder.name} on {embedder.device}: {embedder.dimension} dimensions, "
        f"reads at most {embedder.max_seq_length or 'all'} tokens"
    )
    index = build_index(corpus, params, embedder, on_step=narrator)
    return corpus, embedder, index


def run_search(args: argparse.Namespace, params: WindowParams, stderr: Console) -> int:
    """Index ``args.path``, rank it against ``args.query`` and print the hits (or one JSON document)."""
    json_mode = bool(getattr(args, "json", False))
    with Narrator(stderr, quiet=args.quiet) as narrator, _stdout_kept_for_data(json_mode):
        corpus, embedder, index = _prepare(args, params, narrator)
        result = search_index(index, embedder, args.query, args.k)
    if json_mode:
        document = search_document(
            query=args.query,
            k=args.k,
            corpus=corpus,
            params=params,
            max_file_bytes=args.max_file_bytes,
            embedder=embedder,
            result=result,
        )
        print(dump(document))
    else:
        print_search(
            Console(highlight=False),
            query=args.query,
            k=args.k,
            params=params,
            embedder=embedder,
            corpus=corpus,
            result=result,
            max_lines=args.max_lines,
        )
    return 0
