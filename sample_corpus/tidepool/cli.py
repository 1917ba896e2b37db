"""The tidepool command: work, scheduler, migrate, jobs and dead."""

from __future__ import annotations

import argparse
import sys

from tidepool.config import settings
from tidepool.storage import default_store
from tidepool.worker import Worker


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tidepool")
    commands = parser.add_subparsers(dest="command", required=True)

    work = commands.add_parser("work", help="run a worker on one or more queues")
    work.add_argument("queues", nargs="+")
    work.add_argument("--concurrency", type=int, default=settings().concurrency)
    work.add_argument("--metrics-port", type=int, default=None)

    commands.add_parser("scheduler", help="enqueue recurring jobs when they are due")
    commands.add_parser("migrate", help="create or upgrade the database schema")

    jobs = commands.add_parser("jobs", help="list jobs")
    jobs.add_argument("--state", default="ready")
    jobs.add_argument("--queue", default=None)

    dead = commands.add_parser("dead", help="inspect and replay dead jobs")
    dead.add_argument("action", choices=["list", "replay"])
    dead.add_argument("job_id", nargs="?", type=int)

    args = parser.parse_args(argv)
    if args.command == "work":
        worker = Worker(args.queues, concurrency=args.concurrency)
        worker.install_signal_handlers()
        worker.run()
        return 0
    if args.command == "jobs":
        rows = default_store().connection.execute(
            "SELECT id, queue, path, attempt FROM jobs WHERE state = ? AND (? IS NULL OR queue = ?)",
            (args.state, args.queue, args.queue),
        )
        for row in rows:
            print(*row, sep="\t")
        return 0
    print(f"tidepool {args.command}: not implemented in this example", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
