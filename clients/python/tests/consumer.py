# pyright: reportUnnecessaryTypeIgnoreComment=true
"""Not a test module: a program as a user writes it, for pyright (strict, Python 3.9) to
check. Each `pyright: ignore[...]` marks a mistake the types must catch; pyright reports an
ignore that catches nothing, so a type too loose to catch it fails the check."""

from datetime import datetime, timezone
from typing import List, Optional

from revops import Revops, RevopsError, WebhookEvent, Webhooks
from revops.models import Deal, DealCreate, DealStatus, MeterValue


def signed_deals(revops: Revops, customer: str) -> List[Deal]:
    return [d for d in revops.list_deals_all(customer=customer, status="signed")]


def create(revops: Revops, account_id: str) -> DealStatus:
    body: DealCreate = {"customer": {"id": account_id}, "net_price": "10.00", "net_price_currency": "USD", "net_price_precision": "2"}
    deal = revops.create_deal(body, idempotency_key="job-1")
    try:
        return revops.sign_deal(deal["id"])["status"]
    except RevopsError as err:
        if err.code == "invalid_state_transition":
            return deal["status"]
        raise


def values(revops: Revops) -> List[float]:
    rows: List[MeterValue] = list(revops.meter_values_all(
        "api_calls", from_=datetime(2026, 11, 1, tzinfo=timezone.utc), to="2026-11-02T00:00:00Z", window="hour"))
    return [row["value"] for row in rows]


def on_webhook(hooks: Webhooks, body: bytes, headers: "dict[str, str]") -> Optional[str]:
    event: WebhookEvent = hooks.verify(body, headers)
    if "deal" in event:
        return event["deal"]["status"]
    if "account" in event:
        return event["account"]["name"]
    return None


def mistakes(revops: Revops, event: WebhookEvent) -> None:
    revops.list_deals(status="signd")  # pyright: ignore[reportArgumentType]
    revops.create_deal({"net_price": "1.00"})  # pyright: ignore[reportArgumentType]
    revops.create_account({"name": "x", "nmae": "typo"})  # pyright: ignore[reportArgumentType]
    revops.get_deal("d1")["no_such_field"]  # pyright: ignore[reportGeneralTypeIssues]
    revops.get_deal("d1", idempotency_key="k")  # pyright: ignore[reportCallIssue]
    revops.usage_summary()  # pyright: ignore[reportCallIssue]
    event["deal"]  # pyright: ignore[reportGeneralTypeIssues]
