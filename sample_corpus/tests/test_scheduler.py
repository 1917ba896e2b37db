from datetime import datetime, timezone

from tidepool.scheduler import _parse_cron, cron, every


def test_every_fifteen_minutes_lands_on_the_quarter_hour():
    schedule = every(minutes=15)
    after = datetime(2026, 3, 1, 10, 7, tzinfo=timezone.utc)
    assert schedule.next_slot(after) == datetime(2026, 3, 1, 10, 15, tzinfo=timezone.utc)


def test_cron_fields_expand():
    minute, hour, day, month, weekday = _parse_cron("*/20 3 1-2 * 1-5")
    assert minute == {0, 20, 40}
    assert hour == {3}
    assert day == {1, 2}
    assert weekday == {1, 2, 3, 4, 5}


def test_cron_in_a_time_zone():
    schedule = cron("0 9 * * *", tz="Europe/Berlin")
    after = datetime(2026, 1, 5, 0, 0, tzinfo=timezone.utc)
    assert schedule.next_slot(after) == datetime(2026, 1, 5, 8, 0, tzinfo=timezone.utc)
