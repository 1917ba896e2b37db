"""The command line's flags as the shapes every surface shares: a RetrievalConfig and EngineSettings.

The explorer, ``search``, ``probe``, ``eval`` and each row of ``eval --grid`` read their flags here
and nowhere else, so a flag means the same on every surface. Cheap to import: the explorer builds its
settings before the embedding process starts, and numpy loads only to check a token limit.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from raglens.configuration import RetrievalConfig, is_bm25
from raglens.errors import BadInputError
from raglens.locations import cache_dir_named
from raglens.model_languages import ModelLanguages, languages_of
from raglens.model_names import model_source
from raglens.run import EngineSettings
from raglens.windows import WindowParams


def top_k(args: argparse.Namespace) -> int:
    """``-k``, refused (BadInputError) unless it is at least 1."""
    if args.k <= 0:
        raise BadInputError(f"-k must be at least 1, got {args.k}")
    return int(args.k)


def retrieval_config(args: argparse.Namespace, params: WindowParams) -> RetrievalConfig:
    """Configuration A, as the flags ask for it; a token limit the model cannot read fails here."""
    max_seq_length, precision = getattr(args, "max_seq_length", None), getattr(args, "precision", None)
    config = RetrievalConfig(params, args.model, max_seq_length, precision)
    check_model_path(config, getattr(args, "embedder_factory", None))
    if config.max_seq_length is not None:
        # Only then: the check imports numpy, ~50 ms before the explorer's process could start.
        from raglens.fingerprint import check_max_seq_length

        check_max_seq_length(config.model, config.max_seq_length)
    return config


def check_model_path(config: RetrievalConfig, embedder_factory: str | None) -> None:
    """Refuse ``config``'s model when it is a path to no folder (ModelLoadError), before anything loads;
    a factory's fake loads no model, so its name is not checked."""
    if config.model is not None and not is_bm25(config.model) and embedder_factory is None:
        model_source(config.model)


def engine_settings(args: argparse.Namespace, log_path: str | None = None) -> EngineSettings:
    """How the flags ask every configuration's model to run: device, downloads, cache."""
    return EngineSettings(
        device=args.device,
        offline=not args.allow_download,
        embedder_factory=args.embedder_factory,
        cache_dir=None if args.no_cache else str(cache_dir_named(args.cache_dir)),
        log_path=log_path,
    )


def language_check(
    model: str | None, embedder_factory: str | None, settings: EngineSettings
) -> ModelLanguages | None:
    """The languages ``model`` reads, which a question's language is checked against, with the
    language identifier's tables to be kept in the cache folder when a check first loads it; None
    for BM25 or a model whose languages are not known."""
    from raglens.diagnostics.question_language import checks_language, keep_tables_in

    languages = None if is_bm25(model) else languages_of(model, embedder_factory)
    if checks_language(languages):
        keep_tables_in(Path(settings.cache_dir) if settings.cache_dir is not None else None)
    return languages
