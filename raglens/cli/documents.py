"""The JSON documents the headless commands print: plain dicts with a stable shape."""

from __future__ import annotations

import json
from typing import Any

from raglens.corpus import Corpus
from raglens.diagnostics.coverage import CorpusCoverage, FileCoverage
from raglens.embedding_events import EngineInfo
from raglens.precision import is_exact
from raglens.printable import json_safe
from raglens.search import SearchResult
from raglens.windows import Window, WindowParams

SCHEMA_VERSION = 1


def dump(document: dict[str, Any]) -> str:
    """``document`` as JSON text that is safe to write to a terminal."""
    return json_safe(json.dumps(document, ensure_ascii=False, indent=2))


def parameters_document(params: WindowParams, max_file_bytes: int) -> dict[str, Any]:
    return {
        "unit": params.unit.value,
        "size": params.size,
        "overlap": params.overlap,
        "max_file_bytes": max_file_bytes,
    }


def model_document(engine: EngineInfo) -> dict[str, Any]:
    """The model, its precision (``exact``: fp32, the model's own ranking) and the engines that ran."""
    return {
        "name": engine.name,
        "dimension": engine.dimension,
        "max_seq_length": engine.max_seq_length,
        "device": engine.device,
        "precision": engine.precision,
        "exact": is_exact(engine.precision),
        "engine": engine.engine,
        "window_engine": engine.window_engine,
        "lexical": engine.lexical,
    }


def window_document(window: Window, file_text: str) -> dict[str, Any]:
    return {
        "path": window.path,
        "start": window.start,
        "end": window.end,
        "line_start": window.line_start,
        "line_end": window.line_end,
        "citation": window.citation,
        "text": window.text_in(file_text),
    }


def search_document(
    *,
    query: str,
    k: int,
    corpus: Corpus,
    params: WindowParams,
    max_file_bytes: int,
    engine: EngineInfo,
    result: SearchResult,
) -> dict[str, Any]:
    """Everything ``raglens search --json`` reports about one query."""
    hits = [
        {
            "rank": hit.rank,
            "score": hit.score,
            **window_document(hit.window, corpus.file(hit.window.path).text),
            "changed_on_disk": corpus.changed_on_disk(hit.window.path),
        }
        for hit in result.hits
    ]
    return {
        "schema": SCHEMA_VERSION,
        "query": query,
        "k": k,
        "parameters": parameters_document(params, max_file_bytes),
        "model": model_document(engine),
        "corpus": {
            "root": str(corpus.root),
            "listing": corpus.listing,
            "file_count": len(corpus.files),
            "skipped_count": len(corpus.skipped),
            "window_count": result.window_count,
        },
        "hits": hits,
    }


def file_coverage_document(coverage: FileCoverage | None) -> dict[str, Any] | None:
    if coverage is None:
        return None
    return {
        "unread_characters": coverage.unread_characters,
        "unread_share": coverage.unread_share,
        "truncated_windows": coverage.truncated_count,
        "unread_spans": [list(span) for span in coverage.unread_spans],
    }


def coverage_document(coverage: CorpusCoverage | None) -> dict[str, Any] | None:
    """How much of the corpus no embedding reads, and a window size that would fit the model."""
    if coverage is None:
        return None
    return {
        "token_limit": coverage.token_limit,
        "characters": coverage.characters,
        "unread_characters": coverage.unread_characters,
        "unread_share": coverage.unread_share,
        "window_count": coverage.window_count,
        "truncated_windows": coverage.truncated_count,
        "truncated_share": coverage.truncated_share,
        "suggested_window_chars": coverage.suggested_size,
    }


def files_document(
    corpus: Corpus,
    params: WindowParams,
    max_file_bytes: int,
    window_counts: dict[str, int],
    coverage: CorpusCoverage | None = None,
) -> dict[str, Any]:
    """Everything ``raglens files --json`` reports: what is indexed, in how many windows, and what is not."""
    files = [
        {
            "path": source.path,
            "bytes": source.size_bytes,
            "characters": source.length,
            "encoding": source.encoding,
            "decoding_note": source.decoding_note,
            "window_count": window_counts[source.path],
            "coverage": file_coverage_document(coverage.file(source.path) if coverage else None),
        }
        for source in corpus.files
    ]
    return {
        "schema": SCHEMA_VERSION,
        "root": str(corpus.root),
        "listing": corpus.listing,
        "parameters": parameters_document(params, max_file_bytes),
        "file_count": len(files),
        "skipped_count": len(corpus.skipped),
        "window_count": sum(entry["window_count"] for entry in files),
        "coverage": coverage_document(coverage),
        "files": files,
        "skipped": [
            {"path": skipped.path, "reason": skipped.reason.value, "detail": skipped.detail}
            for skipped in corpus.skipped
        ],
    }
