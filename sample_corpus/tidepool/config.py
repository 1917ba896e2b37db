"""Settings from tidepool.toml and TIDEPOOL_* environment variables."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    database_url: str = "sqlite:///tidepool.db"
    lease_seconds: float = 30.0
    poll_interval: float = 1.0
    concurrency: int = 1
    retention_days: int = 7
    retry_base: float = 2.0
    retry_cap: float = 600.0
    log_format: str = "text"


def _flatten(table: dict, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}_"))
        else:
            flat[name] = value
    return flat


@lru_cache(maxsize=1)
def settings(path: str = "tidepool.toml") -> Settings:
    """The effective settings: defaults, then the file, then the environment."""
    values: dict[str, object] = {}
    file = Path(path)
    if file.exists():
        values.update(_flatten(tomllib.loads(file.read_text())))
    for field in fields(Settings):
        env_name = "TIDEPOOL_" + field.name.upper().replace("RETRY_", "RETRY__")
        if env_name in os.environ:
            default = getattr(Settings, field.name)
            values[field.name] = type(default)(os.environ[env_name])
    known = {f.name for f in fields(Settings)}
    return Settings(**{k: v for k, v in values.items() if k in known})
