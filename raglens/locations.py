"""Where raglens keeps what outlives a run: the vector cache, the logs and the golden sets.

Kept apart, and cheap to import, so the CLI can name any of them without importing numpy.
"""

from __future__ import annotations

import os
from pathlib import Path

from raglens.errors import BadInputError

CACHE_DIR_ENV = "RAGLENS_CACHE_DIR"
ONNX_FOLDER = "onnx"
"""The folder of the cache folder that holds the models' ONNX exports."""
APP_NAME = "raglens"


def default_cache_dir() -> Path:
    """``$RAGLENS_CACHE_DIR``, else the user cache directory (``~/.cache/raglens`` on Linux).

    Set but empty is refused (BadInputError): ``RAGLENS_CACHE_DIR=$UNSET_VARIABLE`` must not mean the
    user's own cache, which ``raglens cache clear`` would then empty.
    """
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured is not None:
        if not configured.strip():
            raise BadInputError(
                f"${CACHE_DIR_ENV} is set but empty; name a folder, or unset it for the default cache"
            )
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME))


def cache_dir_named(named: str | None) -> Path:
    """The folder ``--cache-dir`` names, else (None) the default one; an empty name is refused
    (BadInputError), as ``--cache-dir "$UNSET_VARIABLE"`` would otherwise be the user's own cache."""
    if named is None:
        return default_cache_dir()
    if not named.strip():
        raise BadInputError(
            "--cache-dir is empty; name a folder, or leave the flag out for the default cache"
        )
    return Path(named).expanduser()


def log_folder() -> Path:
    """The folder of the explorer's log files (made if missing)."""
    import platformdirs

    return platformdirs.user_log_path(APP_NAME, ensure_exists=True)


def golden_path_for(corpus: str, named: str | None) -> Path:
    """Where the explorer's ``g`` appends golden cases: ``--golden``, else a file per corpus."""
    if named:
        return Path(named).expanduser()
    import platformdirs

    name = Path(corpus).resolve().name or "corpus"
    return platformdirs.user_data_path(APP_NAME) / "golden" / f"{name}.jsonl"
