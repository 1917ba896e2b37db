"""The JSON shapes of the diagnostics: per-query instruments, prompts, probes and evaluation reports."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from raglens.diagnostics.char_overlap import CharOverlap
from raglens.diagnostics.evaluation import EvalReport
from raglens.diagnostics.noise_floor import EDGE_PERCENTILE
from raglens.diagnostics.probes import ProbeResult
from raglens.diagnostics.prompt import PromptPreview
from raglens.diagnostics.query_report import QueryDiagnostics
from raglens.diagnostics.score_profile import BIN_COUNT, BIN_FLOOR, BIN_WIDTH


def diagnostics_document(diagnostics: QueryDiagnostics, *, cosine: bool = True) -> dict[str, Any]:
    """Score distribution, noise floor, straddles and (for an identifier) where it literally is.

    Not ``cosine`` (BM25): the histogram's bins are cosines, so there is none, and no noise floor.
    """
    profile = diagnostics.profile
    noise = diagnostics.noise
    identifier = diagnostics.identifier
    return {
        "scores": {
            "scale": "cosine" if cosine else "bm25",
            "ranked": profile.ranked_count,
            "bins": {"floor": BIN_FLOOR, "width": BIN_WIDTH, "count": BIN_COUNT} if cosine else None,
            "histogram": list(profile.counts) if cosine else None,
            "top": profile.top_score,
            "kth": profile.kth_score,
            "next": profile.next_score,
            "gap": profile.gap,
            "median": profile.median,
            "mean": profile.mean,
            "std": profile.std,
            "top_z": profile.top_z,
        },
        "noise_floor": None
        if noise is None
        else {
            "low": noise.low,
            "high": noise.high,
            "edge": noise.edge,
            "spread": noise.spread,
            "undecided": list(noise.undecided_band),
            "percentile": EDGE_PERCENTILE,
            "controls": [asdict(control) for control in noise.controls],
        },
        "language": None
        if diagnostics.language is None
        else {
            "code": diagnostics.language.code,
            "confidence": diagnostics.language.confidence,
            "model_reads_it": diagnostics.language.model_reads_it,
            "note": diagnostics.language.describe(),
        },
        "straddles": [
            {
                "path": straddle.path,
                "ranks": [straddle.first.rank, straddle.second.rank],
                "cut": list(straddle.cut),
                "note": straddle.describe(),
            }
            for straddle in diagnostics.straddles
        ],
        "expected": [{"ref": str(entry.ref), "rank": entry.rank} for entry in diagnostics.expected],
        "identifier": None
        if identifier is None
        else {
            "identifier": identifier.identifier,
            "occurrences": [{"path": o.path, "line": o.line} for o in identifier.occurrences],
            "windows": [
                {
                    "citation": entry.window.citation,
                    "rank": entry.rank,
                    "score": entry.score,
                    "bm25_rank": entry.bm25_rank,
                }
                for entry in identifier.windows
            ],
            "summary": identifier.describe(),
        },
    }


def prompt_document(prompt: PromptPreview) -> dict[str, Any]:
    return {"text": prompt.text, "token_count": prompt.token_count, "context_windows": prompt.context_count}


def probe_document(result: ProbeResult) -> dict[str, Any]:
    return {
        "probe": result.name,
        "queries": list(result.queries),
        "top_scores": list(result.top_scores),
        "watched": [asdict(window) for window in result.windows],
        "explanation": list(result.explanation),
        "warning": result.warning,
    }


def _characters_document(chars: CharOverlap) -> dict[str, Any]:
    """One span answer's characters against the top k's, with the counts the shares come from."""
    return {
        "answer": chars.answer,
        "retrieved": chars.retrieved,
        "shared": chars.shared,
        "recall": chars.recall,
        "precision": chars.precision,
        "iou": chars.iou,
    }


def eval_document(report: EvalReport) -> dict[str, Any]:
    """Recall@k, MRR, per kind, calibration, abstention and one row per case."""
    calibration = report.calibration
    abstention = report.abstention
    return {
        "k": report.k,
        "cases": len(report.results),
        "positives": len(report.positives),
        "recall_at_k": report.recall,
        "mrr": report.mrr,
        "ndcg_at_k": report.ndcg,
        "characters": asdict(report.characters),
        "kinds": [
            {
                "kind": kind.kind,
                "cases": kind.cases,
                "positives": kind.positives,
                "found": kind.found,
                "recall_at_k": kind.recall,
                "mrr": kind.mrr,
                "ndcg_at_k": kind.ndcg,
                "negatives": kind.negatives,
                "abstain_rate": kind.abstain_rate,
            }
            for kind in report.kinds
        ],
        "calibration": {
            "lowest_found_top": calibration.lowest_found_top,
            "highest_negative_top": calibration.highest_negative_top,
            "separable": calibration.separable,
            "suggested_floor": calibration.suggested_floor,
            "suggested_note": calibration.suggested_note,
        },
        "abstention": None
        if abstention is None
        else {
            "floor": abstention.floor,
            "floor_suggested": abstention.suggested,
            "negatives": abstention.negatives,
            "abstained": abstention.abstained,
            "abstain_rate": abstention.abstain_rate,
            "positives": abstention.positives,
            "false_weak": abstention.false_weak,
            "false_weak_rate": abstention.false_weak_rate,
        },
        "results": [
            {
                "line": row.case.line,
                "query": row.case.query,
                "kind": row.case.kind,
                "mode": row.case.mode,
                "expect": [str(ref) for ref in row.case.expect],
                "ref_ranks": list(row.ref_ranks),
                "rank": row.rank,
                "refs_found": row.refs_found,
                "recall": row.recall,
                "reciprocal_rank": row.reciprocal_rank,
                "ndcg": row.ndcg,
                "characters": None if row.chars is None else _characters_document(row.chars),
                "found": row.found,
                "top_score": row.top_score,
                "hits": [asdict(hit) for hit in row.hits],
            }
            for row in report.results
        ],
    }
