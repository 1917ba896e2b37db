"""A recurring job: build a report for each region at 03:00 UTC every night."""

from tidepool import job
from tidepool.errors import PermanentFailure
from tidepool.scheduler import cron

REGIONS = {"eu", "us", "apac"}


@job(queue="reports", max_attempts=3, backoff_base=60)
def build_nightly_report(region: str) -> None:
    if region not in REGIONS:
        # Retrying cannot fix an unknown region, so fail for good at once.
        raise PermanentFailure(f"unknown region {region!r}")
    rows = fetch_sales(region)
    write_report(region, summarise(rows))


def fetch_sales(region: str) -> list[dict]:
    return [{"region": region, "amount": 100}]


def summarise(rows: list[dict]) -> dict:
    return {"total": sum(row["amount"] for row in rows), "count": len(rows)}


def write_report(region: str, summary: dict) -> None:
    print(region, summary)


for region in sorted(REGIONS):
    cron("0 3 * * *").enqueue(build_nightly_report, region=region)
