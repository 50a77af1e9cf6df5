"""When and how long to wait before retrying (CONTRACT §3, §14, §17, §20)."""

import email.utils
import math
import random
from datetime import datetime, timezone
from typing import Optional


def backoff(attempt: int, initial: float, maximum: float) -> float:
    """The wait before retry number attempt+1: initial × 2^attempt, capped at maximum, with
    "equal jitter" (half fixed, half random) so that clients that failed together do not
    retry together: 0.25–0.5 s, then 0.5–1 s, … up to 4–8 s by default."""
    ceiling = min(maximum, initial * 2 ** min(attempt, 62))
    return ceiling / 2 + random.random() * ceiling / 2


def retry_wait(
    status: int,
    code: Optional[str],
    retry_after: Optional[float],
    attempt: int,
    initial: float,
    maximum: float,
    max_retry_after: float,
) -> Optional[float]:
    """The wait before retrying an error answer, or None when it must not be retried.
    Retried: 429 (after Retry-After), 409 idempotency_key_in_use (the first request is still
    running: its answer will be replayed) and 5xx (a 5xx never leaves half-written data,
    and the idempotency key makes the retry safe). Anything else is the caller's fault and
    fails the same way again."""
    retryable = status == 429 or status >= 500 or (status == 409 and code == "idempotency_key_in_use")
    if not retryable:
        return None
    wait = backoff(attempt, initial, maximum)
    if retry_after is None:
        return wait
    # Waiting less than asked would only earn another 429; waiting very long silently
    # would hang the caller: past max_retry_after the error is raised instead.
    if retry_after > max_retry_after:
        return None
    return max(retry_after, wait)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from a Retry-After header: delay-seconds or an HTTP date."""
    if value is None or not value.strip():
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())

