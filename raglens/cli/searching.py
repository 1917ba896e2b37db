"""``raglens search``: load, index, rank, print."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from raglens.cli.documents import dump, search_document
from raglens.cli.lab_documents import diagnostics_document, prompt_document
from raglens.cli.lab_render import print_prompt
from raglens.cli.main import cache_dir
from raglens.cli.narration import Narrator
from raglens.cli.render import print_search
from raglens.corpus import Corpus, CorpusOptions
from raglens.diagnostics.coverage import token_counter_for
from raglens.diagnostics.noise_floor import measure_noise_floor
from raglens.diagnostics.prompt import PromptPreview, assemble_prompt
from raglens.diagnostics.query_report import diagnose_query
from raglens.embedding import (
    Embedder,
    SentenceTransformerEmbedder,
    choose_precision,
    embedder_from_factory,
)
from raglens.errors import BadInputError
from raglens.fingerprint import ModelFingerprint, fingerprint_model
from raglens.index import VectorIndex
from raglens.onnx_model import export_model, export_path, export_stands_in, export_wanted, load_exported
from raglens.pipeline import PipelineStep, WindowsEmbedded, build_index, read_corpus, search_index
from raglens.search import SearchResult
from raglens.vector_cache import ModelCache, VectorCache
from raglens.windows import WindowParams


@contextlib.contextmanager
def stdout_kept_for_data(json_mode: bool) -> Iterator[None]:
    """In JSON mode, send anything the model libraries print to stderr, so stdout holds one document."""
    if not json_mode:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


@dataclass(frozen=True)
class CacheUse:
    """What the vector cache did for one search."""

    folder: Path | None
    """None when the cache was off (``--no-cache``) or the model's files could not be identified."""
    fingerprint: ModelFingerprint | None
    from_cache: int
    embedded: int


@dataclass(frozen=True)
class PreparedIndex:
    """A corpus read, its windows embedded (or taken from the cache), and the model to ask."""

    corpus: Corpus
    embedder: Embedder
    index: VectorIndex
    cache_use: CacheUse


def prepare_index(
    args: argparse.Namespace, params: WindowParams, narrator: Narrator, stderr: Console
) -> PreparedIndex:
    """Read the corpus, load the fastest exact engine for the model, and fill the index."""
    if args.k <= 0:
        raise BadInputError(f"-k must be at least 1, got {args.k}")
    corpus = read_corpus(args.path, CorpusOptions(max_file_bytes=args.max_file_bytes), on_step=narrator)
    with contextlib.ExitStack() as stack:
        cache = None if args.no_cache else stack.enter_context(VectorCache.open(cache_dir(args)))
        if cache is not None and not cache.is_usable:
            _print_warnings(cache, stderr)  # the search goes on without it, and says so now
            cache = None
        precision = choose_precision(args.precision, args.device)
        factory = args.embedder_factory
        fingerprint = None
        if cache is not None:
            fingerprint = fingerprint_model(
                args.model, precision, factory=factory, hash_large_file=cache.file_sha256
            )
            if fingerprint is None:
                narrator.say(f"cache off: the files of {args.model} are not on this machine to identify it")
        embedder: Embedder | None = None
        if factory is not None:
            embedder = embedder_from_factory(factory)
        elif cache is not None and fingerprint is not None and export_stands_in(precision, args.device):
            embedder = load_exported(cache.path.parent, fingerprint)
        if embedder is None:
            label = args.model or "the bundled all-MiniLM-L6-v2"
            narrator.say(f"loading {label} (importing sentence-transformers takes a few seconds)")
            embedder = load_model(args, precision)
        device = getattr(embedder, "device", "cpu")
        narrator.say(
            f"model {embedder.name} on {device} ({precision}): {embedder.dimension} dimensions, "
            f"reads at most {embedder.max_seq_length or 'all'} tokens"
        )
        model_cache = None
        if cache is not None and fingerprint is not None:
            model_cache = ModelCache(cache, fingerprint, embedder.dimension)
        counted = _CountingNarrator(narrator)
        index = build_index(corpus, params, embedder, cache=model_cache, on_step=counted)
        if cache is not None:
            _print_warnings(cache, stderr)
        folder = cache.path.parent if model_cache is not None and cache is not None else None
        kept = fingerprint if folder is not None else None
        use = CacheUse(folder, kept, index.window_count - counted.embedded, counted.embedded)
    return PreparedIndex(corpus, embedder, index, use)


def _print_warnings(cache: VectorCache, stderr: Console) -> None:
    for warning in cache.warnings:
        stderr.print(f"raglens: warning: {warning}", markup=False)
    cache.warnings.clear()


def load_model(args: argparse.Namespace, precision: str) -> SentenceTransformerEmbedder:
    """The model through sentence-transformers, as the arguments ask (seconds: it imports torch)."""
    offline = not args.allow_download
    return SentenceTransformerEmbedder(args.model, args.device, offline=offline, precision=precision)


def _export_for_next_time(use: CacheUse, embedder: Embedder, narrator: Narrator, stderr: Console) -> None:
    """Export the model to ONNX into the cache once, so later searches need no torch at all."""
    fingerprint = use.fingerprint
    if use.folder is None or fingerprint is None:
        return
    target = export_path(use.folder, fingerprint)
    if not export_wanted(embedder, fingerprint, target):
        return
    narrator.say("exporting the model to ONNX once, so that later searches need not import torch")
    try:
        export_model(fingerprint, target)
    except Exception as error:  # any failure only costs the fast path; the search itself succeeded
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        stderr.print(f"raglens: note: no ONNX export of {fingerprint.name}: {reason}", markup=False)
        return
    narrator.say(f"exported to {target}")


class _CountingNarrator:
    """Passes every step on and remembers how many windows were embedded rather than cached."""

    def __init__(self, narrator: Narrator) -> None:
        self._narrator = narrator
        self.embedded = 0

    def __call__(self, step: PipelineStep) -> None:
        if isinstance(step, WindowsEmbedded):
            self.embedded = step.done
        self._narrator(step)


def run_search(args: argparse.Namespace, params: WindowParams, stderr: Console) -> int:
    """Index ``args.path``, rank it against ``args.query`` and print the hits (or one JSON document)."""
    json_mode = bool(getattr(args, "json", False))
    with Narrator(stderr, quiet=args.quiet) as narrator, stdout_kept_for_data(json_mode):
        prepared = prepare_index(args, params, narrator, stderr)
        corpus, embedder, index, cache_use = (
            prepared.corpus,
            prepared.embedder,
            prepared.index,
            prepared.cache_use,
        )
        result = search_index(index, embedder, args.query, args.k)
        noise = measure_noise_floor(index, embedder.encode_query)
        texts = corpus.texts()
        diagnostics = diagnose_query(args.query, result, args.k, texts, index.windows, noise)
        prompt = prompt_preview(args, args.query, result, texts) if args.prompt else None
        _export_for_next_time(cache_use, embedder, narrator, stderr)
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
        document["cache"] = {
            "folder": str(cache_use.folder) if cache_use.folder is not None else None,
            "from_cache": cache_use.from_cache,
            "embedded": cache_use.embedded,
        }
        document["diagnostics"] = diagnostics_document(diagnostics)
        for hit, match in zip(document["hits"], diagnostics.lexical, strict=True):
            hit["lexical"] = {"quotes_query": match.quotes_query, "identifiers": list(match.identifiers)}
            hit["above_noise"] = diagnostics.above_noise(hit["score"])
        if prompt is not None:
            document["prompt"] = prompt_document(prompt)
        print(dump(document))
    else:
        console = Console(highlight=False)
        print_search(
            console,
            query=args.query,
            k=args.k,
            params=params,
            embedder=embedder,
            corpus=corpus,
            result=result,
            max_lines=args.max_lines,
            diagnostics=diagnostics,
        )
        if prompt is not None:
            print_prompt(console, prompt)
    return 0


def prompt_preview(
    args: argparse.Namespace, query: str, result: SearchResult, texts: dict[str, str]
) -> PromptPreview:
    """The prompt an LLM would get for ``query``, counted with the model's tokenizer where it is here."""
    text = assemble_prompt(query, result.hits, texts)
    counter = token_counter_for(args.model)
    return PromptPreview(text, counter.count(text) if counter else None, len(result.hits))
