"""The error answers of the API (CONTRACT §4) as exceptions."""

import json
from email.message import Message
from http import HTTPStatus
from typing import Any, Dict, List, Optional, cast

from ._retry import parse_retry_after
from .models import ErrorType, Fault


class RevopsError(Exception):
    """An error answer of the API (any non-2xx status), after the client's retries.

    It carries the fields of the §4 envelope, never the API key or the request's headers:
    it is safe to log. Catch it and read ``code``::

        try:
            revops.sign_deal(deal_id)
        except RevopsError as err:
            if err.code != "invalid_state_transition":
                raise
    """

    def __init__(
        self,
        *,
        status: int,
        type: ErrorType,
        code: str,
        message: str,
        param: Optional[str] = None,
        request_id: Optional[str] = None,
        errors: Optional[List[Fault]] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status."""
        self.type: ErrorType = type
        """authentication_error, permission_error, invalid_request_error, rate_limit_error or api_error."""
        self.code = code
        """Machine-readable, e.g. parameter_invalid, resource_missing, invalid_state_transition."""
        self.message = message
        """For people."""
        self.param = param
        """The one field at fault, when there is one (e.g. event_metrics[2].metric_value)."""
        self.request_id = request_id
        """The request id (the body's, else the X-Request-Id header): quote it to support."""
        self.errors: List[Fault] = list(errors or [])
        """Every validation fault of a 400 answer ({param, code, message}); empty otherwise."""
        self.retry_after = retry_after
        """Seconds the server asked to wait (Retry-After), when it did."""

    def __str__(self) -> str:
        text = f"revops: {self.status} {self.code}: {self.message}"
        if self.param:
            text += f" (param {self.param})"
        if self.request_id:
            text += f" [request {self.request_id}]"
        return text

    @classmethod
    def from_response(cls, status: int, headers: Message, body: bytes) -> "RevopsError":
        """Reads an error answer: the §4 envelope, or (from a proxy, say) anything else."""
        header_id = headers.get("X-Request-Id") or None
        retry_after = parse_retry_after(headers.get("Retry-After"))
        envelope = _envelope(body)
        if envelope is not None:
            faults = envelope.get("errors")
            return cls(
                status=status,
                type=envelope.get("type") or _type_of(status),
                code=envelope["code"],
                message=str(envelope.get("message") or ""),
                param=envelope.get("param") or None,
                request_id=envelope.get("request_id") or header_id,
                errors=cast(List[Fault], faults) if isinstance(faults, list) else None,
                retry_after=retry_after,
            )
        # Not the envelope (a proxy's or load balancer's page): the status and its standard
        # text only, never the body or the reason phrase, which could hold anything — a
        # proxy's echo of the request headers, the API key among them.
        try:
            phrase = " " + HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        return cls(
            status=status,
            type=_type_of(status),
            code="unexpected_response",
            message=f"HTTP {status}{phrase} without a Revops error body",
            request_id=header_id,
            retry_after=retry_after,
        )


class RevopsConnectionError(Exception):
    """The request got no HTTP answer at all (DNS, connection refused or reset, TLS,
    timeout), after the client's retries. The last cause is attached (``__cause__``)."""


def _envelope(body: bytes) -> Optional[Dict[str, Any]]:
    try:
        parsed = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    error: Any = cast(Dict[str, Any], parsed).get("error") if isinstance(parsed, dict) else None
    if isinstance(error, dict) and isinstance(cast(Dict[str, Any], error).get("code"), str):
        return cast(Dict[str, Any], error)
    return None


def _type_of(status: int) -> ErrorType:
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "api_error"
    return "invalid_request_error"


def error_code(body: bytes) -> Optional[str]:
    """The §4 code of an error body, if it has one."""
    envelope = _envelope(body)
    return envelope["code"] if envelope is not None else None
