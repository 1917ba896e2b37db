"""The JSON documents the headless commands print: plain dicts with a stable shape."""

from __future__ import annotations

import json
from typing import Any

from raglens.corpus import Corpus
from raglens.embedding import Embedder
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


def model_document(embedder: Embedder) -> dict[str, Any]:
    return {
        "name": embedder.name,
        "dimension": embedder.dimension,
        "max_seq_length": embedder.max_seq_length,
        "device": getattr(embedder, "device", None),
        "precision": getattr(embedder, "precision", "fp32"),
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
    embedder: Embedder,
    result: SearchResult,
) -> dict[str, Any]:
    """Everything ``raglens search --json`` reports about one query."""
    hits = [
        {
            "rank": hit.rank,
            "score": hit.score,
            **window_document(hit.window, corpus.file(hit.window.path).text),
        }
        for hit in result.hits
    ]
    return {
        "schema": SCHEMA_VERSION,
        "query": query,
        "k": k,
        "parameters": parameters_document(params, max_file_bytes),
        "model": model_document(embedder),
        "corpus": {
            "root": str(corpus.root),
            "listing": corpus.listing,
            "file_count": len(corpus.files),
            "skipped_count": len(corpus.skipped),
            "window_count": result.window_count,
        },
        "hits": hits,
    }


def files_document(
    corpus: Corpus, params: WindowParams, max_file_bytes: int, window_counts: dict[str, int]
) -> dict[str, Any]:
    """Everything ``raglens files --json`` reports: what is indexed, in how many windows, and what is not."""
    files = [
        {
            "path": source.path,
            "bytes": source.size_bytes,
            "characters": len(source.text),
            "encoding": source.encoding,
            "decoding_note": source.decoding_note,
            "window_count": window_counts[source.path],
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
        "files": files,
        "skipped": [
            {"path": skipped.path, "reason": skipped.reason.value, "detail": skipped.detail}
            for skipped in corpus.skipped
        ],
    }
