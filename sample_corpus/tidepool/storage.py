"""The store: every job is one row, and every state change is one guarded UPDATE."""

from __future__ import annotations

import json
import sqlite3
import time
from functools import lru_cache
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY,
    queue TEXT NOT NULL,
    path TEXT NOT NULL,
    arguments TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'ready',
    attempt INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    visible_at REAL NOT NULL,
    lease_owner TEXT,
    last_error TEXT,
    finished_at REAL
);
CREATE INDEX IF NOT EXISTS jobs_leasable ON jobs (queue, state, visible_at);
CREATE TABLE IF NOT EXISTS paused_queues (queue TEXT PRIMARY KEY);
"""


class Store:
    """A SQLite-backed job store."""

    def __init__(self, path: str = "tidepool.db") -> None:
        self.connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.executescript(SCHEMA)

    def enqueue(self, queue: str, path: str, arguments: dict[str, Any], max_attempts: int) -> int:
        cursor = self.connection.execute(
            "INSERT INTO jobs (queue, path, arguments, max_attempts, visible_at) VALUES (?, ?, ?, ?, ?)",
            (queue, path, json.dumps(arguments), max_attempts, time.time()),
        )
        return int(cursor.lastrowid)

    def lease(self, queues: list[str], owner: str, lease_seconds: float) -> sqlite3.Row | None:
        now = time.time()
        for queue in queues:
            if self.is_paused(queue):
                continue
            row = self.connection.execute(
                "UPDATE jobs SET state = 'leased', lease_owner = ?, visible_at = ?, attempt = attempt + 1 "
                "WHERE id = (SELECT id FROM jobs WHERE queue = ? AND state IN ('ready', 'leased') "
                "AND visible_at <= ? ORDER BY id LIMIT 1) RETURNING *",
                (owner, now + lease_seconds, queue, now),
            ).fetchone()
            if row is not None:
                return row
        return None

    def heartbeat(self, job_id: int, owner: str, lease_seconds: float) -> bool:
        cursor = self.connection.execute(
            "UPDATE jobs SET visible_at = ? WHERE id = ? AND lease_owner = ? AND state = 'leased'",
            (time.time() + lease_seconds, job_id, owner),
        )
        return cursor.rowcount == 1

    def ack(self, job_id: int, owner: str) -> bool:
        cursor = self.connection.execute(
            "UPDATE jobs SET state = 'done', finished_at = ? WHERE id = ? AND lease_owner = ? AND state = 'leased'",
            (time.time(), job_id, owner),
        )
        return cursor.rowcount == 1

    def fail(self, job_id: int, owner: str, error: str, retry_at: float | None) -> bool:
        state = "ready" if retry_at is not None else "dead"
        cursor = self.connection.execute(
            "UPDATE jobs SET state = ?, last_error = ?, visible_at = COALESCE(?, visible_at), "
            "lease_owner = NULL WHERE id = ? AND lease_owner = ? AND state = 'leased'",
            (state, error, retry_at, job_id, owner),
        )
        return cursor.rowcount == 1

    def count(self, queue: str, state: str) -> int:
        (value,) = self.connection.execute(
            "SELECT COUNT(*) FROM jobs WHERE queue = ? AND state = ?", (queue, state)
        ).fetchone()
        return int(value)

    def job_state(self, job_id: int) -> str:
        row = self.connection.execute("SELECT state FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return row[0] if row else "unknown"

    def set_paused(self, queue: str, paused: bool) -> None:
        if paused:
            self.connection.execute("INSERT OR IGNORE INTO paused_queues VALUES (?)", (queue,))
        else:
            self.connection.execute("DELETE FROM paused_queues WHERE queue = ?", (queue,))

    def is_paused(self, queue: str) -> bool:
        return self.connection.execute(
            "SELECT 1 FROM paused_queues WHERE queue = ?", (queue,)
        ).fetchone() is not None

    def sweep(self, retention_days: int) -> int:
        cutoff = time.time() - retention_days * 86400
        cursor = self.connection.execute(
            "DELETE FROM jobs WHERE state IN ('done', 'dead') AND finished_at < ?", (cutoff,)
        )
        return cursor.rowcount


@lru_cache(maxsize=1)
def default_store() -> Store:
    from tidepool.config import settings

    return Store(settings().database_url.removeprefix("sqlite:///"))
