"""tidepool: a small, dependable job queue backed by SQLite or PostgreSQL."""

from tidepool.queue import JobHandle, Queue, drain_pending_jobs, job

__all__ = ["JobHandle", "Queue", "drain_pending_jobs", "job"]
__version__ = "0.6.0"
