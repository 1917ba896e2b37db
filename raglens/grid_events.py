"""The eval grid's progress and outcome as events, each sent as one JSON line.

``raglens eval … --grid … --events`` writes them on stdout and the explorer reads them back from its
child, so neither side parses the other's prose. Plain Python: no numpy, no Textual.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from raglens.diagnostics.char_overlap import CharacterSummary
from raglens.errors import BadInputError

if TYPE_CHECKING:
    from raglens.diagnostics.grid import GridRow


@dataclass(frozen=True)
class KindFigures:
    """One kind of golden case in a row: recall, MRR and nDCG over its answerable cases, abstain rate over
    its negatives (None where there is nothing to measure)."""

    kind: str
    positives: int
    negatives: int
    recall: float | None
    mrr: float | None
    abstain_rate: float | None
    ndcg: float | None


@dataclass(frozen=True)
class RowFigures:
    """One configuration's row of the grid, as the table and ``--json`` show it."""

    config: str
    """The configuration as ``RetrievalConfig.describe`` names it."""
    unit: str
    size: int
    overlap: int
    model: str
    """The model's name as its engine reports it."""
    model_argument: str | None
    """The model the configuration asked for; None is the bundled default."""
    score_scale: str
    """``cosine``, or ``bm25`` for the lexical baseline, whose scores and floor have no fixed scale."""
    max_seq_length: int | None
    """The token limit the model ran with."""
    precision: str
    recall: float | None
    mrr: float | None
    ndcg: float | None
    characters: CharacterSummary
    kinds: tuple[KindFigures, ...]
    suggested_floor: float | None
    separable: bool | None
    unread_share: float | None
    embedded: int
    from_cache: int

    @classmethod
    def of(cls, row: GridRow) -> RowFigures:
        """The figures of an evaluated row."""
        params, report = row.config.params, row.report
        return cls(
            config=row.config.describe(),
            unit=params.unit.value,
            size=params.size,
            overlap=params.overlap,
            model=row.model_name,
            model_argument=row.config.model,
            score_scale=row.config.score_scale,
            max_seq_length=row.max_seq_length,
            precision=row.precision,
            recall=report.recall,
            mrr=report.mrr,
            ndcg=report.ndcg,
            characters=report.characters,
            kinds=tuple(
                KindFigures(
                    kind.kind,
                    kind.positives,
                    kind.negatives,
                    kind.recall,
                    kind.mrr,
                    kind.abstain_rate,
                    kind.ndcg,
                )
                for kind in report.kinds
            ),
            suggested_floor=report.calibration.suggested_floor,
            separable=report.calibration.separable,
            unread_share=row.unread_share,
            embedded=row.embedded,
            from_cache=row.from_cache,
        )


@dataclass(frozen=True)
class GridStarted:
    """The grid started configuration ``number`` of ``total``; sent again with a new time left while
    that configuration embeds."""

    number: int
    total: int
    config: str
    seconds_left: int | None
    """The time the rest should take: the windows still to embed at the pace windows embedded so far,
    and the rest at the finished configurations' pace (``raglens.diagnostics.grid_pace``); None while
    that is not known, such as before any window was embedded."""


@dataclass(frozen=True)
class GridRowDone:
    """Configuration ``number`` of ``total`` was evaluated."""

    number: int
    total: int
    row: RowFigures


@dataclass(frozen=True)
class GridCase:
    """One answerable golden case across the grid's rows, as the explorer offers it to open."""

    line: int
    """Its line in the golden file."""
    query: str
    expect: tuple[str, ...]
    """Its expected refs as the golden file writes them."""
    cells: tuple[str, ...]
    """Its rank in each row as the per-question table shows it (``3 ▲``, ``miss ▼``, ``1``)."""


@dataclass(frozen=True)
class GridFinished:
    """Every configuration was evaluated: the table and the chart, as the human output prints them,
    and each answerable case with its ranks, for the explorer to open with its answer pinned."""

    report: str
    cases: tuple[GridCase, ...] = ()
    best: int | None = None
    """The best row's index (None when no row found anything): a case opened is compared with it."""


@dataclass(frozen=True)
class GridFailed:
    """The grid stopped before its report; ``message`` says why."""

    message: str


GridEvent = GridStarted | GridRowDone | GridFinished | GridFailed

_KINDS: dict[str, type[GridEvent]] = {
    "started": GridStarted,
    "row_done": GridRowDone,
    "finished": GridFinished,
    "failed": GridFailed,
}
_TAGS = {kind: tag for tag, kind in _KINDS.items()}


class _Invalid(ValueError):
    """What is wrong with a line's content, before the line is quoted."""


def encode(event: GridEvent) -> str:
    """``event`` as one line of JSON (no newline in it), its ``type`` first; ASCII, so any pipe carries it."""
    return json.dumps({"type": _TAGS[type(event)], **dataclasses.asdict(event)}, allow_nan=False)


def decode(line: str) -> GridEvent:
    """The event a line of :func:`encode` holds; a BadInputError for anything else, quoting the line."""
    try:
        document = json.loads(line, parse_float=_finite, parse_constant=_no_constant)
        if not isinstance(document, dict):
            raise _Invalid("not a JSON object")
        fields = dict(document)
        tag = fields.pop("type", None)
        kind = _KINDS.get(tag) if isinstance(tag, str) else None
        if kind is None:
            raise _Invalid(f"type {tag!r} is none of {', '.join(_KINDS)}")
        event: GridEvent = _build(kind, fields, tag)
    except (ValueError, RecursionError) as error:  # json's own errors included
        shown = line.rstrip("\n")
        shown = shown if len(shown) <= 200 else f"{shown[:200]}…"
        raise BadInputError(f"not an eval grid event ({error}): {shown!r}") from None
    return event


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Invalid(f"{text} is out of range")
    return number


def _no_constant(name: str) -> None:
    raise _Invalid(f"{name} is not a number an event holds")


def _build(kind: type[Any], value: object, where: str) -> Any:
    """An instance of the dataclass ``kind`` from the object ``value``, every field checked."""
    if not isinstance(value, dict):
        raise _Invalid(f"{where} should be an object")
    names = [field.name for field in dataclasses.fields(kind)]
    missing = [name for name in names if name not in value]
    unknown = sorted(set(value) - set(names))
    if missing or unknown:
        wrong = [f"no {name}" for name in missing] + [f"unknown field {name!r}" for name in unknown]
        raise _Invalid(f"{where}: {', '.join(wrong)}")
    hints = typing.get_type_hints(kind)
    return kind(**{name: _convert(hints[name], value[name], f"{where}.{name}") for name in names})


def _convert(hint: Any, value: object, where: str) -> object:
    """``value`` as the type ``hint`` names: a number, text, a flag, an optional, a tuple or a dataclass."""
    if typing.get_origin(hint) in (Union, types.UnionType):
        options = [option for option in typing.get_args(hint) if option is not type(None)]
        if value is None:
            return None
        (hint,) = options
    if typing.get_origin(hint) is tuple:
        if not isinstance(value, list):
            raise _Invalid(f"{where} should be a list, got {_short(value)}")
        item = typing.get_args(hint)[0]
        return tuple(_convert(item, one, f"{where}[{number}]") for number, one in enumerate(value))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, value, where)
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise _Invalid(f"{where} is out of range") from None
    if hint is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if hint in (str, bool) and isinstance(value, hint):
        return value
    raise _Invalid(f"{where} should be {getattr(hint, '__name__', hint)}, got {_short(value)}")


def _short(value: object) -> str:
    """``value`` as Python writes it, cut to a length an error message can quote."""
    shown = repr(value)
    return shown if len(shown) <= 60 else f"{shown[:60]}…"
