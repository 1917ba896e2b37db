"""Device names as the user gives them (``--device``): one device, or several for a pool of processes.

Decided without importing torch (seconds): the names alone, and the driver's /proc entry.
"""

from __future__ import annotations

import os
from pathlib import Path

from raglens.errors import BadInputError

POOL_JOIN = "+"
"""Joins a pool's devices in its label (``cuda:0+cuda:1``)."""


def embeds_queries_on_cpu(device_label: str) -> bool:
    """Whether a model labelled ``device_label`` embeds its queries on the CPU: on it, or a pool's
    (whose queries are embedded in the process that started it, on the CPU)."""
    return device_label == "cpu" or POOL_JOIN in device_label


def asks_for_cpu_queries(device: str | None) -> bool:
    """Whether ``--device`` as asked has queries embedded on the CPU: the CPU itself, or a pool's
    (the label of what it gives is what :func:`embeds_queries_on_cpu` reads)."""
    return runs_on_cpu(device) or pool_devices(device) is not None


def pool_devices(device: str | None) -> list[str] | None:
    """The devices of ``device`` when it names several (``cuda:0,cuda:1``): windows are then embedded
    by sentence-transformers' multi-process pool, a process per device; None for one device."""
    if device is None or "," not in device:
        return None
    devices = [part.strip() for part in device.split(",")]
    if any(not part for part in devices):
        raise BadInputError(f"--device {device}: a list of devices names each one, e.g. cuda:0,cuda:1")
    return devices


def threads_per_cpu_worker(devices: list[str], cores: int | None) -> int:
    """Torch threads for each CPU worker: the cores shared among them, at least one each.

    Every worker would otherwise start one thread per core, and N workers on N cores thrash.
    """
    cpu_workers = sum(1 for device in devices if device.split(":")[0] == "cpu")
    return max(1, (cores or 1) // max(1, cpu_workers))


def usable_cores() -> int | None:
    """The cores this process may run on (its affinity, which a container's limit narrows), or None."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


def runs_on_cpu(device: str | None) -> bool:
    """Whether the model will run on the CPU: asked for, or the default on a machine without NVIDIA GPU.

    Decided without importing torch (seconds), from the driver's /proc entry.
    """
    return device == "cpu" or (device in (None, "", "auto") and not Path("/proc/driver/nvidia").exists())
