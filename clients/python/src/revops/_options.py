"""Options of one call, given to any method as request_options."""

from typing import Mapping, TypedDict


class RequestOptions(TypedDict, total=False):
    """Overrides of the client's settings for one call; every key is optional.

    The Idempotency-Key of a POST, PATCH, PUT or DELETE is an argument of its own
    (idempotency_key=…), not an option.
    """

    # Retries after the first attempt, instead of the client's max_retries.
    max_retries: int
    # Seconds one attempt may take, instead of the client's timeout.
    timeout: float
    # Extra request headers (Authorization and Idempotency-Key are the client's).
    headers: Mapping[str, str]
