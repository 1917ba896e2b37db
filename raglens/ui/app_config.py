"""What the explorer is started with, and its embedding process; no Textual here.

The CLI imports this before Textual, so the embedding process starts (and opens its engine) while
Textual is still being imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from raglens.embedding_events import ModelChoice
from raglens.embedding_process import EmbeddingProcess
from raglens.precision import choose_precision
from raglens.windows import WindowParams


@dataclass(frozen=True)
class AppConfig:
    """Everything the app is started with; mirrors the headless CLI's flags."""

    path: str
    params: WindowParams = field(default_factory=WindowParams)
    k: int = 5
    query: str = ""
    model: str | None = None
    device: str | None = None
    offline: bool = True
    max_file_bytes: int = 1_000_000
    embedder_factory: str | None = None
    """``module:callable`` of another embedder (tests use a fake); None means sentence-transformers."""
    log_path: str | None = None
    """Where the embedding process writes its own output; None discards it."""
    cache_dir: str | None = None
    """The vector cache's folder; None runs without a cache."""
    precision: str | None = None
    """``fp32`` (also for None: the model's exact ranking) or ``bf16`` (approximate, labelled so)."""
    show_rates: bool = True
    """Show windows per second, the ETA and the progress bar; snapshot tests turn them off."""
    error_log_path: str | None = None
    """Where a worker's traceback is appended when it fails; None keeps it to the notification."""
    golden_path: str | None = None
    """The golden JSONL file ``g`` appends cases to; None: one per corpus in the user data folder."""
    max_seq_length: int | None = None
    """Tokens of each window the model reads; None: the model's own limit."""

    @property
    def choice(self) -> ModelChoice:
        """The model to run and how, as the embedding process takes it."""
        return ModelChoice(
            self.model,
            self.device,
            choose_precision(self.precision),
            self.offline,
            self.embedder_factory,
            self.max_seq_length,
        )


def start_embedding_process(config: AppConfig) -> EmbeddingProcess:
    """The embedding process ``config`` asks for, started now; it opens its engine in the background."""
    return EmbeddingProcess(config.choice, cache_dir=config.cache_dir, log_path=config.log_path)
