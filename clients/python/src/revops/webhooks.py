"""Webhook verification (CONTRACT §8, §25), as the Standard Webhooks specification asks:
the signature over "id.timestamp.body" under the endpoint's key, any of the entries of
webhook-signature (several while a rotated key still signs), and webhook-timestamp within
five minutes of now. An hmac-sha256 endpoint signs "v1" entries with its secret
(whsec_…); an ed25519 endpoint signs "v1a" entries, checked with its public key (whpk_…).
"""

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from typing import Any, Callable, Dict, Iterable, List, Literal, Optional, Protocol, Sequence, Tuple, Union, cast

from . import _ed25519
from .models import WebhookEvent

DEFAULT_TOLERANCE = 300.0
"""Seconds webhook-timestamp may be from now, either way, as the Standard Webhooks
libraries allow: it bounds replays of a captured request."""

WebhookFailure = Literal["missing_headers", "bad_signature", "timestamp_too_old", "timestamp_too_new", "invalid_payload"]

_SECRET_PREFIX = "whsec_"
_PUBLIC_KEY_PREFIX = "whpk_"
_NAMES = ("webhook-id", "webhook-timestamp", "webhook-signature")


class WebhookVerificationError(Exception):
    """The webhook is not authentic or not fresh: answer 400 and do not act on it.
    ``reason`` says why (the same words as the TypeScript client's)."""

    def __init__(self, reason: WebhookFailure, message: str) -> None:
        super().__init__(message)
        self.reason: WebhookFailure = reason


class HeaderSource(Protocol):
    """Request headers as http.server, WSGI frameworks or a plain dict give them: anything
    whose items() yields (name, value) pairs. Names match in any case; a header given on
    several lines (a proxy may split the rotation's signatures) counts as one list."""

    def items(self) -> Iterable[Tuple[str, object]]: ...


class Webhooks:
    """Verifies the deliveries of one endpoint, given its signing key as the API shows it:
    its secret (whsec_…) for an hmac-sha256 endpoint, its public_key (whpk_…) for an
    ed25519 one. While you rotate (or switch schemes), give both the new and the old key:
    a signature under either is accepted.
    """

    def __init__(
        self,
        key: Union[str, Sequence[str]],
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        keys = [key] if isinstance(key, str) else list(key)
        if not keys or not all(isinstance(k, str) and k for k in keys):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError("Webhooks: a signing secret (whsec_…) or public key (whpk_…) is required")
        self._verifiers = [_verifier(k) for k in keys]
        self._tolerance = tolerance
        self._clock = clock

    def __repr__(self) -> str:
        return "Webhooks(key=<redacted>)"

    def verify(self, payload: Union[bytes, str], headers: HeaderSource) -> WebhookEvent:
        """Checks the signature and timestamp of a delivery and returns its parsed body.
        payload is the raw request body exactly as received (for a GET endpoint, the
        decoded value of the payload query parameter): parsing and re-serializing the JSON
        first changes the bytes and breaks the signature."""
        body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
        msg_id, timestamp, signatures = (_header(headers, name) for name in _NAMES)
        if not msg_id or not timestamp or not signatures:
            raise WebhookVerificationError("missing_headers", "Webhook refused: missing webhook-id, webhook-timestamp or webhook-signature")
        if not re.fullmatch(r"[0-9]{1,12}", timestamp):
            raise WebhookVerificationError("bad_signature", "Webhook refused: webhook-timestamp is not Unix seconds")
        sent, now = int(timestamp), int(self._clock())
        if now - sent > self._tolerance:
            raise WebhookVerificationError("timestamp_too_old", "Webhook refused: message timestamp too old")
        if sent > now + self._tolerance:
            raise WebhookVerificationError("timestamp_too_new", "Webhook refused: message timestamp too new")
        signed = msg_id.encode("utf-8") + b"." + timestamp.encode("ascii") + b"." + body
        entries = [tuple(e.split(",", 1)) for e in signatures.split() if "," in e]
        if not any(v(signed, entries) for v in self._verifiers):
            raise WebhookVerificationError("bad_signature", "Webhook refused: no matching signature found")
        return _event(body)


def verify_webhook(
    payload: Union[bytes, str],
    headers: HeaderSource,
    key: Union[str, Sequence[str]],
    *,
    tolerance: float = DEFAULT_TOLERANCE,
) -> WebhookEvent:
    """Verifies one delivery with the endpoint's key(s); see Webhooks.verify."""
    return Webhooks(key, tolerance=tolerance).verify(payload, headers)


# A verifier says whether any (version, signature) entry signs the message under its key.
_Verifier = Callable[[bytes, Sequence[Tuple[str, ...]]], bool]


def _verifier(key: str) -> _Verifier:
    if key.startswith(_PUBLIC_KEY_PREFIX):
        public = _b64(key[len(_PUBLIC_KEY_PREFIX):])
        if public is None or len(public) != 32:
            raise ValueError("Webhooks: the public key is not whpk_ followed by the base64 of a 32-byte ed25519 key")
        return lambda signed, entries: _ed25519_signed(public, signed, entries)
    secret = _b64(key[len(_SECRET_PREFIX):] if key.startswith(_SECRET_PREFIX) else key)
    if not secret:
        # The message never repeats the secret.
        raise ValueError("Webhooks: the secret is not whsec_ followed by base64")
    return lambda signed, entries: _hmac_signed(secret, signed, entries)


def _hmac_signed(secret: bytes, signed: bytes, entries: Sequence[Tuple[str, ...]]) -> bool:
    """Any "v1,<base64>" entry equal to the HMAC-SHA256, compared in constant time; every
    entry is compared, so the time taken does not tell which one matched. Entries of the
    other scheme are skipped, as the specification asks of versions a verifier holds no
    key for."""
    want = hmac.new(secret, signed, hashlib.sha256).digest()
    ok = False
    for version, sig in entries:
        got = _b64(sig) if version == "v1" else None
        if got is not None and hmac.compare_digest(got, want):
            ok = True
    return ok


def _ed25519_signed(public: bytes, signed: bytes, entries: Sequence[Tuple[str, ...]]) -> bool:
    """Any "v1a,<base64>" entry that is the public key's ed25519 signature (a public key
    proves nothing secret: no need to hide which entry matched)."""
    for version, sig in entries:
        got = _b64(sig) if version == "v1a" else None
        if got is not None and _ed25519.verify(public, signed, got):
            return True
    return False


def _b64(text: str) -> Optional[bytes]:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _header(headers: HeaderSource, name: str) -> str:
    """A header's value whatever the case of its name, its lines joined by spaces."""
    values: List[str] = []
    for key, value in headers.items():
        if key.lower() != name:
            continue
        if isinstance(value, bytes):
            values.append(value.decode("latin-1"))
        elif isinstance(value, str):
            values.append(value)
        elif isinstance(value, (list, tuple)):
            values.extend(str(v) for v in cast(Sequence[object], value))
    return " ".join(v.strip() for v in values if v.strip())


def _event(body: bytes) -> WebhookEvent:
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise WebhookVerificationError("invalid_payload", "Webhook body is signed but is not JSON") from None
    event: Any = cast(Dict[str, Any], value).get("event") if isinstance(value, dict) else None
    if not isinstance(event, dict) or not isinstance(cast(Dict[str, Any], event).get("type"), str):
        raise WebhookVerificationError("invalid_payload", "Webhook body has no event.type")
    return cast(WebhookEvent, value)
