"""Enqueue a few jobs and process them in the same process, for a quick demo."""

import logging

from tidepool import Queue, job
from tidepool.worker import Worker

logging.basicConfig(level=logging.INFO)


@job(queue="greetings", max_attempts=2)
def greet(name: str) -> None:
    print(f"hello, {name}")


if __name__ == "__main__":
    queue = Queue("greetings")
    for name in ("Ada", "Grace", "Edsger"):
        queue.enqueue(greet, name=name)
    worker = Worker(["greetings"])
    worker.install_signal_handlers()
    worker.run()
