"""Telling a model's folder from a Hugging Face hub name, without importing the model libraries.

Cheap to import, so every surface can refuse a model path that is not there before anything loads,
rather than after the model libraries have logged their own warnings about it.
"""

from __future__ import annotations

import re
from pathlib import Path

from raglens.errors import ModelLoadError

_HUB_NAME_PART = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?")
"""One part of a Hugging Face hub id, as the hub allows it: no leading or trailing ``-`` or ``.``."""


def could_be_hub_name(name: str) -> bool:
    """Whether ``name`` could name a model on the Hugging Face hub: ``name`` or ``owner/name``."""
    parts = name.split("/")
    return (
        len(parts) <= 2
        and all(_HUB_NAME_PART.fullmatch(part) for part in parts)
        and ".." not in name
        and "--" not in name
    )


def model_source(model: str) -> str:
    """What ``model`` loads from: its folder (``~`` expanded) when it is one, else the hub name as given.

    A name that is neither a folder nor a possible hub id (``/nonexistent``, ``./models/e5``) is
    refused (ModelLoadError): sentence-transformers would log a warning about it before failing.
    """
    folder = Path(model).expanduser()
    if folder.is_dir():
        return str(folder)
    if folder.exists():
        raise ModelLoadError(f"could not load model {model!r}: it is a file; name a model's folder")
    if not could_be_hub_name(model):
        raise ModelLoadError(
            f"could not load model {model!r}: there is no such folder, and it is not a Hugging Face "
            "model name (such as sentence-transformers/all-MiniLM-L6-v2)"
        )
    return model
