"""A retrieval configuration — window unit, size, overlap, model, token limit, precision — the one
parser of each of its fields, and the ``key=value`` forms that name a second one (``--vs``) or a
grid of them (``--grid``)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from raglens.embedding_events import DEFAULT_MODEL_NAME
from raglens.errors import BadInputError
from raglens.precision import PRECISIONS
from raglens.windows import Unit, WindowParams

KEYS = ("unit", "size", "overlap", "model", "max_seq_length", "precision")


BM25_MODEL = "bm25"
"""The model name that asks for BM25 instead of an embedding model (raglens.bm25_index)."""
BM25_HAS_NO_NOISE_FLOOR = (
    "the failure lab tests an embedding model's failures against its noise floor, which BM25 has not; "
    "compare BM25 with a model: search --vs model=bm25, the v key, or eval --grid model=all-MiniLM-L6-v2,bm25"
)
"""Why ``probe`` and the explorer's failure lab do not run on BM25."""


def is_bm25(model: str | None) -> bool:
    """Whether ``model`` names the lexical baseline rather than an embedding model."""
    return model is not None and model.strip().lower() == BM25_MODEL


BUNDLED_MODEL_NAMES = (DEFAULT_MODEL_NAME, f"sentence-transformers/{DEFAULT_MODEL_NAME}")
"""Names of the model raglens bundles: ``model=all-MiniLM-L6-v2`` means the bundled copy, not a download."""


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

    def __post_init__(self) -> None:
        """The bundled model named by its name is the bundled model (it works offline); BM25 has no
        token limit and no reduced precision: asking for one is an error, not ignored."""
        if self.model in BUNDLED_MODEL_NAMES and not os.path.exists(self.model):
            object.__setattr__(self, "model", None)
        if is_bm25(self.model):
            object.__setattr__(self, "model", BM25_MODEL)
            if self.max_seq_length is not None:
                raise BadInputError("bm25 has no max_seq_length: it reads every token of a window")
            if self.precision not in (None, "fp32"):
                raise BadInputError(f"bm25 has no {self.precision} precision: its scores are exact")

    @property
    def score_scale(self) -> str:
        """``cosine`` for an embedding model's scores; ``bm25`` for BM25's, which have no fixed scale."""
        return BM25_MODEL if self.model == BM25_MODEL else "cosine"

    def describe(self) -> str:
        """``1000/200 chars · all-MiniLM-L6-v2 · 256 tokens · fp32``, naming only what is set."""
        parts = [f"{self.params.size}/{self.params.overlap} {self.params.unit.value}"]
        parts.append(self.model or DEFAULT_MODEL_NAME)
        if self.max_seq_length is not None:
            parts.append(f"reads {self.max_seq_length} tokens")
        if self.precision is not None:
            parts.append(self.precision)
        return " · ".join(parts)


def _whole(name: str, text: str, least: int) -> int:
    """``text`` as a whole number of at least ``least``, or a BadInputError naming the field ``name``."""
    try:
        number = int(text.strip())
    except ValueError:
        raise BadInputError(f"{name} must be a whole number, got {text!r}") from None
    if number < least:
        raise BadInputError(f"{name} must be at least {least}, got {number}")
    return number


def parse_unit(text: str) -> Unit:
    """The window unit ``chars``, ``words`` or ``lines``."""
    try:
        return Unit(text.strip())
    except ValueError:
        known = ", ".join(u.value for u in Unit)
        raise BadInputError(f"unknown window unit {text!r}; choose one of {known}") from None


def parse_size(text: str) -> int:
    """A window size, in its unit: a whole number of at least 1."""
    return _whole("size", text, 1)


def parse_overlap(text: str) -> int:
    """A window overlap, in its unit: a whole number of at least 0 (below the size: WindowParams checks)."""
    return _whole("overlap", text, 0)


def parse_model(text: str) -> str:
    """A sentence-transformers model name or folder, as given but for surrounding spaces."""
    model = text.strip()
    if not model:
        raise BadInputError(f"model needs a model name or folder, got {text!r}")
    return model


def parse_max_seq_length(text: str) -> int:
    """The tokens of each window the model reads: a whole number of at least 1."""
    return _whole("max_seq_length", text, 1)


def parse_precision(text: str) -> str:
    """``fp32`` or ``bf16``."""
    precision = text.strip()
    if precision not in PRECISIONS:
        raise BadInputError(f"precision must be one of {', '.join(PRECISIONS)}, got {text!r}")
    return precision


def parse_k(text: str) -> int:
    """How many hits to show: a whole number of at least 1."""
    return _whole("k", text, 1)


def config_from_fields(base: RetrievalConfig, fields: Mapping[str, str]) -> RetrievalConfig:
    """``base`` with each field of ``fields`` (a key of KEYS to the user's text) parsed and set.

    What is not given is ``base``'s. The window sizes are set together, so size 100 and overlap 10
    over 1000/200 never pass through an impossible 100/200. A new unit without a size or overlap
    takes that unit's defaults (1000 chars are not 1000 lines).
    """
    for key in fields:
        if key not in KEYS:
            raise BadInputError(f"unknown key {key!r} (keys: {', '.join(KEYS)})")
    config = base
    if "model" in fields:
        model = parse_model(fields["model"])
        if is_bm25(model):
            # What BM25 cannot have is not inherited from the base; given in the same fields, it is refused.
            config = replace(config, model=model, max_seq_length=None, precision=None)
        else:
            config = replace(config, model=model)
    if "precision" in fields:
        config = replace(config, precision=parse_precision(fields["precision"]))
    if "max_seq_length" in fields:
        config = replace(config, max_seq_length=parse_max_seq_length(fields["max_seq_length"]))
    size = parse_size(fields["size"]) if "size" in fields else None
    overlap = parse_overlap(fields["overlap"]) if "overlap" in fields else None
    unit = parse_unit(fields["unit"]) if "unit" in fields else base.params.unit
    if unit != base.params.unit:
        params = WindowParams.for_unit(unit, size, overlap)
    else:
        params = WindowParams(
            unit,
            base.params.size if size is None else size,
            base.params.overlap if overlap is None else overlap,
        )
    return replace(config, params=params)


def quote_value(value: str) -> str:
    """``value`` as written in a spec: in double quotes (a quote inside doubled) when it is empty or
    holds a comma, a double quote or whitespace, else as it is."""
    if value and not any(c in ',"' or c.isspace() for c in value):
        return value
    return '"' + value.replace('"', '""') + '"'


def _split(text: str, is_separator: Callable[[str], bool], what: str) -> list[str]:
    """The pieces of ``text`` between separators outside double quotes, stripped, quotes kept.

    The one tokenizer of the specs: commas part a spec's items, whitespace the grid form's axes.
    """
    pieces: list[str] = []
    start = 0
    quoted = False
    for at, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif not quoted and is_separator(char):
            pieces.append(text[start:at].strip())
            start = at + 1
    if quoted:
        raise BadInputError(f"{what}: a double quote is not closed")
    pieces.append(text[start:].strip())
    return pieces


def _unquote(piece: str, what: str) -> str:
    """A value as written (``piece``, stripped) as the value it names: quotes taken off, ``""`` a ``"``."""
    if '"' not in piece:
        return piece
    inner = piece[1:-1]
    if len(piece) < 2 or piece[0] != '"' or piece[-1] != '"' or '"' in inner.replace('""', ""):
        raise BadInputError(
            f'{what}: quote a whole value, as "/models/e5,small", and double a quote inside it'
        )
    return inner.replace('""', '"')


def split_pairs(spec: str, what: str) -> list[tuple[str, str]]:
    """``key=value,key="a,b"`` as its (key, value) pairs, in order; keys are not checked here.

    A BadInputError starts with ``what``, such as ``--vs 'size=800'``.
    """
    pairs = []
    for item in _split(spec, lambda char: char == ",", what):
        key, equals, value = item.partition("=")
        key = key.strip()
        if not equals or not key:
            raise BadInputError(f"{what}: expected key=value pairs such as size=800,overlap=100")
        pairs.append((key, _unquote(value.strip(), what)))
    return pairs


def split_values(text: str, what: str) -> list[str]:
    """``a,"b,c"`` as its values, in order; a BadInputError starts with ``what``."""
    return [_unquote(piece, what) for piece in _split(text, lambda char: char == ",", what)]


def split_axes(text: str) -> list[str]:
    """The grid form's axes, apart by whitespace outside double quotes (``model="my model",b``)."""
    return [piece for piece in _split(text, str.isspace, f"axes {text!r}") if piece]


def parse_vs(spec: str, base: RetrievalConfig) -> RetrievalConfig:
    """Configuration B from ``size=800,overlap=100``: what is not given is inherited from ``base``."""
    pairs = split_pairs(spec, f"--vs {spec!r}")
    for key, _ in pairs:
        if key not in KEYS:
            raise BadInputError(f"--vs {spec!r}: unknown key {key!r} (keys: {', '.join(KEYS)})")
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise BadInputError(f"--vs {spec}: a key is given twice")
    try:
        return config_from_fields(base, fields)
    except BadInputError as error:
        raise BadInputError(f"--vs {spec}: {error}") from None


@dataclass(frozen=True)
class GridAxis:
    """One varied parameter and its values, in the order given."""

    key: str
    values: tuple[str, ...]

    def spec(self) -> str:
        """The axis as ``--grid`` takes it, each value quoted when it needs to be."""
        return f"{self.key}=" + ",".join(quote_value(value) for value in self.values)


def parse_grid_axis(spec: str) -> GridAxis:
    """``size=600,800,1000`` as an axis; the values are checked when the grid is built."""
    key, equals, values = spec.partition("=")
    key = key.strip()
    if not equals or key not in KEYS:
        raise BadInputError(f"--grid {spec!r}: expected KEY=V1,V2,… with KEY one of {', '.join(KEYS)}")
    parsed = tuple(split_values(values, f"--grid {spec!r}"))
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
        fields = dict(zip(keys, combination, strict=True))
        named = ",".join(f"{key}={quote_value(value)}" for key, value in fields.items())
        try:
            config = config_from_fields(base, fields)
        except BadInputError as error:
            raise BadInputError(f"--grid {named}: {error}") from None
        if config in configs:
            raise BadInputError(f"--grid {named}: the same configuration as another combination")
        configs.append(config)
    return configs
