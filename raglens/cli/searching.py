"""``raglens search``: load, index, rank, print."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from raglens.bm25_index import BM25_ENGINE, BM25Index
from raglens.cli.consoles import console_for
from raglens.cli.documents import dump, search_document
from raglens.cli.explain_output import explanation_document
from raglens.cli.lab_documents import diagnostics_document, prompt_document
from raglens.cli.lab_render import print_prompt
from raglens.cli.narration import Narrator
from raglens.cli.render import print_search
from raglens.cli.settings import engine_settings, language_check, retrieval_config, top_k
from raglens.configuration import RetrievalConfig, is_bm25
from raglens.corpus import Corpus, CorpusOptions
from raglens.devices import asks_for_cpu_queries
from raglens.diagnostics.coverage import token_counter_for
from raglens.diagnostics.evaluation import resolve_expected
from raglens.diagnostics.lexical import query_identifier
from raglens.diagnostics.noise_floor import CONTROL_QUESTIONS, NoiseFloor, measure_noise_floor
from raglens.diagnostics.prompt import PromptPreview, assemble_prompt
from raglens.diagnostics.query_report import diagnose_query
from raglens.embedding_events import EngineInfo
from raglens.engine import Engines
from raglens.fingerprint import ModelFingerprint, check_max_seq_length
from raglens.locations import cache_dir_named
from raglens.pipeline import build_index, read_corpus
from raglens.pipeline_steps import PipelineStep, WindowsCut, WindowsEmbedded
from raglens.precision import precision_note, read_cpu_features
from raglens.retrieval import DenseRetriever, Retriever
from raglens.run import EngineSettings
from raglens.search import SearchResult
from raglens.vector_cache import ModelCache, VectorCache
from raglens.windows import WindowParams, cut_corpus, window_texts


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
    from_cache: int
    embedded: int


@dataclass(frozen=True)
class PreparedIndex:
    """A corpus read and one configuration's retriever over its windows: an embedding model's
    index (its windows embedded or taken from the cache), or BM25's."""

    corpus: Corpus
    retriever: Retriever
    engine: EngineInfo
    """What computed the scores: named in every header, status line and JSON document."""
    cache_use: CacheUse
    engines: Engines | None = None
    """The model's engines; None for BM25, which has no model."""
    fingerprint: ModelFingerprint | None = None
    """The model as the cache knows it (None: no cache), to keep query vectors beside the windows'."""

    @property
    def dense(self) -> DenseRetriever | None:
        """The embedding model's index and query engine; None for a lexical configuration."""
        return self.retriever if isinstance(self.retriever, DenseRetriever) else None


def read_corpus_named(args: argparse.Namespace, narrator: Narrator) -> Corpus:
    """The corpus ``PATH`` and ``--max-file-bytes`` name, read with its steps narrated; with the cache on,
    only the files changed since the cache last saw them are read."""
    cache_dir = None if args.no_cache else cache_dir_named(args.cache_dir)
    options = CorpusOptions(max_file_bytes=args.max_file_bytes)
    return read_corpus(args.path, options, cache_dir=cache_dir, on_step=narrator)


def prepare_index(
    config: RetrievalConfig,
    settings: EngineSettings,
    corpus: Corpus,
    narrator: Narrator,
    stderr: Console,
    watch: Callable[[PipelineStep], None] | None = None,
) -> PreparedIndex:
    """Open the engines ``config``'s model needs (none for cached windows) and fill its index; for
    BM25, index its windows by their tokens (no model and no cache).

    Every headless configuration comes through here, A, ``--vs``'s B and each row of a grid, with
    the model choice the explorer's embedding process makes (``EngineSettings.choice``) and the same
    cache (``ModelCache.for_model``). ``watch`` sees each pipeline step as it is narrated (the grid
    times its embedding with them).
    """
    if is_bm25(config.model):
        windows = cut_corpus(corpus, config.params)
        cut = WindowsCut(len(windows), config.params)
        narrator(cut)
        if watch is not None:
            watch(cut)
        lexical = BM25Index(windows, corpus.texts())
        narrator.say(f"model {BM25_ENGINE.describe()}: reads every token")
        return PreparedIndex(corpus, lexical, BM25_ENGINE, CacheUse(None, 0, 0))
    choice = settings.choice(config)
    check_max_seq_length(config.model, choice.max_seq_length)
    note = precision_note(choice.precision, asks_for_cpu_queries(choice.device), read_cpu_features())
    if note is not None:
        stderr.print(f"raglens: note: {note}", markup=False)
    with contextlib.ExitStack() as stack:
        cache = None
        if settings.cache_dir is not None:
            cache = stack.enter_context(VectorCache.open(Path(settings.cache_dir)))
        if cache is not None and not cache.is_usable:
            _print_warnings(cache, stderr)  # the search goes on without it, and says so now
            cache = None
        model_cache = ModelCache.for_model(cache, choice) if cache is not None else None
        if cache is not None and model_cache is None:
            narrator.say(f"cache off: the files of {choice.label} are not on this machine to identify it")
        fingerprint = model_cache.fingerprint if model_cache is not None else None
        folder = model_cache.cache.path.parent if model_cache is not None else None
        engines = Engines(
            choice,
            fingerprint,
            folder,
            on_note=narrator.say,
            on_warning=lambda warning: stderr.print(f"raglens: warning: {warning}", markup=False),
        )
        counted = _CountingNarrator(narrator, watch)
        index = build_index(corpus, config.params, engines, cache=model_cache, on_step=counted)
        info = engines.info()
        narrator.say(
            f"model {info.describe()}: {info.dimension} dimensions, "
            f"reads at most {info.max_seq_length or 'all'} tokens"
        )
        if cache is not None:
            _print_warnings(cache, stderr)
        use = CacheUse(folder, index.window_count - counted.embedded, counted.embedded)
    retriever = DenseRetriever(index.snapshot(), engines.for_queries())
    return PreparedIndex(corpus, retriever, info, use, engines, fingerprint)


def windows_to_embed(
    config: RetrievalConfig, settings: EngineSettings, corpus: Corpus, stderr: Console
) -> int:
    """How many of ``config``'s windows :func:`prepare_index` would embed now: those the cache lacks,
    every one without a usable cache, none for BM25. Cuts the windows and reads the cache; opens no model.
    """
    if is_bm25(config.model):
        return 0
    windows = cut_corpus(corpus, config.params)
    if settings.cache_dir is None:
        return len(windows)
    with VectorCache.open(Path(settings.cache_dir)) as cache:
        model_cache = ModelCache.for_model(cache, settings.choice(config)) if cache.is_usable else None
        entries = model_cache.lookup(window_texts(corpus, windows)) if model_cache is not None else None
        _print_warnings(cache, stderr)
    return len(windows) if entries is None else sum(entry is None for entry in entries)


def engine_header(engine: EngineInfo) -> str:
    """The line that heads a command's human output: model, precision and engine."""
    return f"model {engine.describe()}"


def _print_warnings(cache: VectorCache, stderr: Console) -> None:
    for warning in cache.warnings:
        stderr.print(f"raglens: warning: {warning}", markup=False)
    cache.warnings.clear()


class _CountingNarrator:
    """Passes every step on (to ``watch`` too) and remembers how many windows were embedded rather
    than cached."""

    def __init__(self, narrator: Narrator, watch: Callable[[PipelineStep], None] | None = None) -> None:
        self._narrator = narrator
        self._watch = watch
        self.embedded = 0

    def __call__(self, step: PipelineStep) -> None:
        if isinstance(step, WindowsEmbedded):
            self.embedded = step.done
        self._narrator(step)
        if self._watch is not None:
            self._watch(step)


def noise_floor_of(prepared: PreparedIndex) -> NoiseFloor | None:
    """The noise band over the prepared index, as the explorer measures it; None for BM25, whose scores
    have no fixed scale to hold an off-topic band."""
    dense = prepared.dense
    if dense is None:
        return None
    questions = list(CONTROL_QUESTIONS)
    folder, fingerprint, engines = prepared.cache_use.folder, prepared.fingerprint, prepared.engines
    embed = dense.embedder.encode_query
    vectors = None
    if folder is not None and fingerprint is not None and engines is not None:  # once per model and engine
        with VectorCache.open(folder) as cache:
            if cache.is_usable:
                vectors = ModelCache.of(cache, fingerprint).query_vectors(
                    questions, engines.query_engine(), embed
                )
    if vectors is None:
        vectors = [embed(question) for question in questions]
    return measure_noise_floor(dense.index, dict(zip(questions, vectors, strict=True)).__getitem__, questions)


def run_search(args: argparse.Namespace, params: WindowParams, stderr: Console) -> int:
    """Index ``args.path``, rank it against ``args.query`` and print the hits (or one JSON document)."""
    # comparing builds on this module (prepare_index), so it is imported here rather than at the top.
    from raglens.cli.comparing import config_b, print_versus, rank_versus, versus_document

    json_mode = bool(getattr(args, "json", False))
    top_k(args)
    a = retrieval_config(args, params)
    b = config_b(args, a)  # a bad --vs fails here, before anything loads
    settings = engine_settings(args)
    with Narrator(stderr, quiet=args.quiet) as narrator, stdout_kept_for_data(json_mode):
        corpus = read_corpus_named(args, narrator)
        # What --expect names must be in the corpus: checked before any model loads.
        expected = resolve_expected(args.expect, corpus.texts()) if args.expect else None
        prepared = prepare_index(a, settings, corpus, narrator, stderr)
        retriever, dense, cache_use = prepared.retriever, prepared.dense, prepared.cache_use
        result = retriever.search(args.query, args.k)
        noise = noise_floor_of(prepared)
        texts = corpus.texts()
        # An identifier query: where BM25 ranks the windows that hold it, beside where the model does.
        bm25 = None
        if dense is not None and query_identifier(args.query) is not None:
            bm25 = BM25Index(retriever.windows, texts).search(args.query, max(1, retriever.window_count))
        languages = language_check(a.model, args.embedder_factory, settings)
        diagnostics = diagnose_query(
            args.query, result, args.k, texts, retriever.windows, noise, expected, bm25, languages
        )
        prompt = prompt_preview(a, args.query, result, texts) if args.prompt else None
        explanations = None
        if args.explain:
            explanations = [
                retriever.explain(args.query, hit.row, hit.window.text_in(texts[hit.window.path]))
                for hit in result.hits
            ]
        if prepared.engines is not None:
            prepared.engines.export_if_wanted()
        versus = None
        if b is not None:
            versus = rank_versus(args, b, settings, prepared, result, expected, narrator, stderr)
    if json_mode:
        document = search_document(
            query=args.query,
            k=args.k,
            corpus=corpus,
            params=params,
            max_file_bytes=args.max_file_bytes,
            engine=prepared.engine,
            result=result,
        )
        document["cache"] = {
            "folder": str(cache_use.folder) if cache_use.folder is not None else None,
            "from_cache": cache_use.from_cache,
            "embedded": cache_use.embedded,
        }
        document["diagnostics"] = diagnostics_document(diagnostics, cosine=result.cosine)
        for hit, match in zip(document["hits"], diagnostics.lexical, strict=True):
            hit["lexical"] = {"quotes_query": match.quotes_query, "identifiers": list(match.identifiers)}
            verdict = diagnostics.noise_verdict(hit["score"])
            hit["noise"] = None if verdict is None else verdict.name.lower()
            hit["above_noise"] = diagnostics.above_noise(hit["score"])
        if explanations is not None:
            for hit, attribution in zip(document["hits"], explanations, strict=True):
                hit["explanation"] = explanation_document(attribution, hit["score"])
        if prompt is not None:
            document["prompt"] = prompt_document(prompt)
        if versus is not None:
            document["vs"] = versus_document(args, versus, document["hits"])
        print(dump(document))
    else:
        console = console_for()
        print_search(
            console,
            query=args.query,
            k=args.k,
            params=params,
            engine=prepared.engine,
            corpus=corpus,
            result=result,
            max_lines=args.max_lines,
            diagnostics=diagnostics,
            languages=languages,
            explanations=explanations,
        )
        if versus is not None:
            print_versus(console, args, a, result, versus)
        if prompt is not None:
            print_prompt(console, prompt)
    return 0


def prompt_preview(
    config: RetrievalConfig, query: str, result: SearchResult, texts: Mapping[str, str]
) -> PromptPreview:
    """The prompt an LLM would get for ``query``, counted with the model's tokenizer where it is here;
    BM25 has no tokenizer of a model, so its count is left out."""
    text = assemble_prompt(query, result.hits, texts)
    counter = None if is_bm25(config.model) else token_counter_for(config.model)
    return PromptPreview(text, counter.count(text) if counter else None, len(result.hits))
