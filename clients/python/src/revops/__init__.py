"""The Python client of the Revops API: one typed method per operation, generated from
the OpenAPI document, with retries that honour Retry-After, an Idempotency-Key reused
across retries, iterators over paged lists, typed errors and webhook verification.

    from revops import Revops
    revops = Revops()  # REVOPS_API_KEY, REVOPS_BASE_URL
    print(revops.whoami()["environment"])

Types of every object are in revops.models (Deal, Account, Meter, …).
"""

from ._client import DEFAULT_BASE_URL, Revops
from ._errors import RevopsConnectionError, RevopsError
from ._operations import OPERATIONS
from ._options import RequestOptions
from ._version import VERSION
from .models import WebhookEvent, WebhookEventType
from .webhooks import DEFAULT_TOLERANCE, WebhookFailure, Webhooks, WebhookVerificationError, verify_webhook

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_TOLERANCE",
    "OPERATIONS",
    "RequestOptions",
    "Revops",
    "RevopsConnectionError",
    "RevopsError",
    "VERSION",
    "WebhookEvent",
    "WebhookEventType",
    "WebhookFailure",
    "WebhookVerificationError",
    "Webhooks",
    "verify_webhook",
]
