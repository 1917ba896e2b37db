"""Where the vector cache lives; kept apart so the CLI can name it without importing numpy."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "RAGLENS_CACHE_DIR"
ONNX_FOLDER = "onnx"
"""The folder of the cache folder that holds the models' ONNX exports."""


def default_cache_dir() -> Path:
    """``$RAGLENS_CACHE_DIR``, else the user cache directory (``~/.cache/raglens`` on Linux)."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("raglens"))


def cache_dir_named(named: str | None) -> Path:
    """The folder ``--cache-dir`` names, else the default one."""
    return Path(named).expanduser() if named else default_cache_dir()
