"""A retrieval configuration — window unit, size, overlap, model, token limit, precision — and the
``key=value`` forms that name a second one (``--vs``) or a grid of them (``--grid``)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from raglens.errors import BadInputError
from raglens.precision import PRECISIONS
from raglens.windows import WindowParams

KEYS = ("unit", "size", "overlap", "model", "max_seq_length", "precision")


@dataclass(frozen=True)
class RetrievalConfig:
    """Everything that decides a naive-RAG ranking besides the corpus and the query."""

    params: WindowParams
    model: str | None = None
    """A sentence-transformers name or folder; None is the bundled all-MiniLM-L6-v2."""
    max_seq_length: int | None = None
    """Tokens of a window the model reads; None: the model's own limit."""
    precision: str | None = None
    """``fp32`` or ``bf16``; None: the default, fp32."""

    def describe(self) -> str:
        """``1000/200 chars · all-MiniLM-L6-v2 · 256 tokens · fp32``, naming only what is set."""
        parts = [f"{self.params.size}/{self.params.overlap} {self.params.unit.value}"]
        parts.append(self.model or "all-MiniLM-L6-v2")
        if self.max_seq_length is not None:
            parts.append(f"reads {self.max_seq_length} tokens")
        if self.precision is not None:
            parts.append(self.precision)
        return " · ".join(parts)


def _pairs(spec: str, what: str) -> list[tuple[str, str]]:
    pairs = []
    for item in spec.split(","):
        key, equals, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not equals or not key:
            raise BadInputError(f"{what} {spec!r}: expected key=value pairs such as size=800,overlap=100")
        if key not in KEYS:
            raise BadInputError(f"{what} {spec!r}: unknown key {key!r} (keys: {', '.join(KEYS)})")
        pairs.append((key, value))
    return pairs


def _whole(key: str, value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise BadInputError(f"{what}: {key} must be a whole number, got {value!r}") from None


def _apply(base: RetrievalConfig, pairs: Sequence[tuple[str, str]], what: str) -> RetrievalConfig:
    """``base`` with each ``key=value`` of ``pairs`` set; a BadInputError names ``what`` was wrong.

    The window sizes are set together, so ``size=100,overlap=10`` over 1000/200 never passes through
    an impossible 100/200. A new unit without a size or overlap takes that unit's defaults (1000
    chars are not 1000 lines).
    """
    given = dict(pairs)
    if len(given) != len(pairs):
        raise BadInputError(f"{what}: a key is given twice")
    config = base
    if "model" in given:
        if not given["model"]:
            raise BadInputError(f"{what}: model= needs a model name or folder")
        config = replace(config, model=given["model"])
    if "precision" in given:
        if given["precision"] not in PRECISIONS:
            choices = ", ".join(PRECISIONS)
            raise BadInputError(f"{what}: precision must be one of {choices}, got {given['precision']!r}")
        config = replace(config, precision=given["precision"])
    if "max_seq_length" in given:
        limit = _whole("max_seq_length", given["max_seq_length"], what)
        if limit < 1:
            raise BadInputError(f"{what}: max_seq_length must be at least 1, got {limit}")
        config = replace(config, max_seq_length=limit)
    size = _whole("size", given["size"], what) if "size" in given else None
    overlap = _whole("overlap", given["overlap"], what) if "overlap" in given else None
    try:
        if "unit" in given and given["unit"] != base.params.unit.value:
            params = WindowParams.for_unit(given["unit"], size, overlap)
        else:
            unit = base.params.unit
            params = WindowParams(
                unit,
                base.params.size if size is None else size,
                base.params.overlap if overlap is None else overlap,
            )
    except BadInputError as error:
        raise BadInputError(f"{what}: {error}") from None
    return replace(config, params=params)


def parse_vs(spec: str, base: RetrievalConfig) -> RetrievalConfig:
    """Configuration B from ``size=800,overlap=100``: what is not given is inherited from ``base``."""
    return _apply(base, _pairs(spec, "--vs"), f"--vs {spec}")


@dataclass(frozen=True)
class GridAxis:
    """One varied parameter and its values, in the order given."""

    key: str
    values: tuple[str, ...]


def parse_grid_axis(spec: str) -> GridAxis:
    """``size=600,800,1000`` as an axis; the values are checked when the grid is built."""
    key, equals, values = spec.partition("=")
    key = key.strip()
    if not equals or key not in KEYS:
        raise BadInputError(f"--grid {spec!r}: expected KEY=V1,V2,… with KEY one of {', '.join(KEYS)}")
    parsed = tuple(value.strip() for value in values.split(","))
    if not all(parsed):
        raise BadInputError(f"--grid {spec!r}: an empty value")
    if len(set(parsed)) != len(parsed):
        raise BadInputError(f"--grid {spec!r}: a value is given twice")
    return GridAxis(key, parsed)


def grid_configs(base: RetrievalConfig, axes: Sequence[GridAxis]) -> list[RetrievalConfig]:
    """Every combination of the axes' values over ``base``, the first axis varying slowest.

    Every combination is checked before anything loads; one that cannot be cut (overlap not below
    size) is an error naming it.
    """
    keys = [axis.key for axis in axes]
    if len(set(keys)) != len(keys):
        raise BadInputError("--grid: a key is given twice")
    configs = []
    for combination in itertools.product(*(axis.values for axis in axes)):
        pairs = list(zip(keys, combination, strict=True))
        configs.append(_apply(base, pairs, "--grid " + ",".join(f"{key}={value}" for key, value in pairs)))
    return configs
