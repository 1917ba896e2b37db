"""Exceptions raised by tidepool and by jobs that want to steer their own retries."""


class TidepoolError(Exception):
    """Base class of every tidepool exception."""


class PermanentFailure(TidepoolError):
    """Raised by a job to fail at once, without using its remaining attempts."""


class LeaseLost(TidepoolError):
    """The worker no longer owns the job it tried to acknowledge or fail."""


class DrainTimeout(TidepoolError):
    """drain_pending_jobs gave up before the queue's leased jobs finished."""

    def __init__(self, queue: str, remaining: int) -> None:
        super().__init__(f"queue {queue!r} still has {remaining} leased job(s)")
        self.queue = queue
        self.remaining = remaining
