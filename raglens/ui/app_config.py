"""What the explorer is started with; no Textual here.

The CLI imports this before Textual, so the embedding process starts (and opens its engine) while
Textual is still being imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from raglens.configuration import RetrievalConfig
from raglens.run import EngineSettings
from raglens.windows import WindowParams


@dataclass(frozen=True)
class AppConfig:
    """Everything the app is started with; mirrors the headless CLI's flags.

    Configuration A is a RetrievalConfig, the same shape ``--vs``, ``--grid`` and the ``v`` and ``w``
    forms produce; how its process starts is the session's EngineSettings, shared with B and the grid.
    """

    path: str
    retrieval: RetrievalConfig = field(default_factory=lambda: RetrievalConfig(WindowParams()))
    engine: EngineSettings = field(default_factory=EngineSettings)
    k: int = 5
    query: str = ""
    max_file_bytes: int = 1_000_000
    show_rates: bool = True
    """Show windows per second, the ETA and the progress bar; snapshot tests turn them off."""
    error_log_path: str | None = None
    """Where a worker's traceback is appended when it fails; None keeps it to the notification."""
    golden_path: str | None = None
    """The golden JSONL file ``g`` appends cases to; None: one per corpus in the user data folder."""
