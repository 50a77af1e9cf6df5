"""The client: the transport under the generated methods."""

import http.client
import json
import math
import os
import platform
import ssl
import time
import urllib.error
import urllib.request
import uuid
from email.message import Message
from typing import Any, Dict, Mapping, Optional, Tuple

from . import _encode, _retry
from ._errors import RevopsConnectionError, RevopsError, error_code
from ._operations import RevopsOperations
from ._options import RequestOptions
from ._version import VERSION

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
"""Where ``revops dev`` listens unless told otherwise."""

# One answer may bring at most this much into memory.
_MAX_RESPONSE = 32 << 20

_KEY_KINDS = ("sk_live_", "sk_sandbox_", "pk_live_", "pk_sandbox_")


class Revops(RevopsOperations):
    """The Revops API client: one method per operation (see the generated
    RevopsOperations), and ``…_all`` iterators over paged lists.

    ::

        revops = Revops()  # REVOPS_API_KEY, REVOPS_BASE_URL
        deal = revops.get_deal(deal_id)

    Safe to share between threads: a call keeps its state on its own stack.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        base_url: Optional[str] = None,
        max_retries: int = 3,
        timeout: float = 60.0,
        max_retry_after: float = 60.0,
        initial_backoff: float = 0.5,
        max_backoff: float = 8.0,
        headers: Optional[Mapping[str, str]] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
    ) -> None:
        """api_key: a secret key (default: $REVOPS_API_KEY; required). base_url: without
        /v1 (default: $REVOPS_BASE_URL, else http://127.0.0.1:8080, revops dev's).
        max_retries: retries after the first attempt. timeout: seconds per attempt.
        max_retry_after: the longest Retry-After (seconds) waited for; a longer one is
        raised at once. initial_backoff, max_backoff: the first wait and the cap of the
        doubling waits between retries. ssl_context: for an API behind a private CA (by
        default the system's roots, or $SSL_CERT_FILE)."""
        key = api_key if api_key is not None else os.environ.get("REVOPS_API_KEY", "")
        if not key:
            raise ValueError("No Revops API key: pass Revops(api_key=…) or set REVOPS_API_KEY.")
        self.__api_key = _Secret(key)
        url = base_url if base_url is not None else os.environ.get("REVOPS_BASE_URL") or DEFAULT_BASE_URL
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"the base URL must start with http:// or https://, got {url!r}")
        self.base_url = url.rstrip("/")
        self.max_retries = _check_retries(max_retries, "max_retries")
        self.timeout = _check_positive(timeout, "timeout")
        self.max_retry_after = _check_positive(max_retry_after, "max_retry_after")
        self.initial_backoff = _check_positive(initial_backoff, "initial_backoff")
        self.max_backoff = _check_positive(max_backoff, "max_backoff")
        if self.max_backoff < self.initial_backoff:
            raise ValueError("max_backoff must be at least initial_backoff")
        self._headers: Dict[str, str] = dict(headers or {})
        self._user_agent = f"revops-python/{VERSION} python/{platform.python_version()}"
        handlers: list[urllib.request.BaseHandler] = [_NoRedirect()]
        if ssl_context is not None:
            handlers.append(urllib.request.HTTPSHandler(context=ssl_context))
        self._opener = urllib.request.build_opener(*handlers)

    def __repr__(self) -> str:
        kind = next((k for k in _KEY_KINDS if self.__api_key.value.startswith(k)), "")
        return f"Revops(base_url={self.base_url!r}, api_key='{kind}…')"

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, object]] = None,
        body: object = None,
        idempotency_key: Optional[str] = None,
        request_options: Optional[RequestOptions] = None,
    ) -> Any:
        """Calls any path of the API (e.g. "/v1/accounts") through the same retries,
        idempotency key and errors as the generated methods, and returns the decoded
        answer: the way to reach a route this version of the client does not know yet."""
        return self._request(method, path, query=query, body=body, idempotency_key=idempotency_key, options=request_options)

    def _request(
        self,
        method: str,
        path: str,
        *,
        path_params: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, object]] = None,
        body: object = None,
        idempotency_key: Optional[str] = None,
        options: Optional[RequestOptions] = None,
    ) -> Any:
        """Sends one call: the first attempt and its retries. A POST, PATCH, PUT or DELETE
        carries one Idempotency-Key that every retry reuses, so a retry after a lost answer
        never does the change twice (CONTRACT §14)."""
        opts: RequestOptions = options or {}
        max_retries = _check_retries(opts.get("max_retries", self.max_retries), "max_retries")
        timeout = _check_positive(opts.get("timeout", self.timeout), "timeout")
        target = _encode.url(self.base_url, path, path_params, query)
        payload = None if body is None else _encode.body(body)
        headers = {"Accept": "application/json", "User-Agent": self._user_agent, **self._headers, **opts.get("headers", {})}
        headers["Authorization"] = "Bearer " + self.__api_key.value
        if method != "GET":
            headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        if payload is not None:
            headers["Content-Type"] = "application/json"
        what = f"{method} {path}"
        attempt = 0
        while True:
            try:
                status, answer_headers, answer = self._send(method, target, headers, payload, timeout)
            except (OSError, http.client.HTTPException) as err:
                # Refused, reset, TLS, timed out: retried, as the request may never have
                # arrived; and if it did, the idempotency key makes the retry safe.
                if attempt >= max_retries:
                    raise RevopsConnectionError(f"{what}: {_describe(err)} (after {attempt + 1} attempts)") from err
                time.sleep(_retry.backoff(attempt, self.initial_backoff, self.max_backoff))
                attempt += 1
                continue
            if 200 <= status < 300:
                return _decode(status, answer_headers, answer)
            error = RevopsError.from_response(status, answer_headers, answer)
            wait = _retry.retry_wait(status, error_code(answer), error.retry_after, attempt,
                                     self.initial_backoff, self.max_backoff, self.max_retry_after)
            if wait is None or attempt >= max_retries:
                raise error
            time.sleep(wait)
            attempt += 1

    def _send(self, method: str, target: str, headers: Mapping[str, str], payload: Optional[bytes], timeout: float) -> Tuple[int, Message, bytes]:
        """One attempt: the status, headers and whole body of the answer, error answers included."""
        req = urllib.request.Request(target, data=payload, method=method, headers=dict(headers))
        try:
            with self._opener.open(req, timeout=timeout) as res:
                return res.status, res.headers, _read(res)
        except urllib.error.HTTPError as err:
            try:
                # An HTTPError may come without a body to read.
                return err.code, err.headers, _read(err) if getattr(err, "fp", None) is not None else b""
            finally:
                err.close()


class _Secret:
    """Holds the API key so that it shows in no repr: of the client, of vars(client), of a
    traceback's locals or a debugger's view."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<redacted>"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The API never redirects; urllib would follow one with the Authorization header, to
    wherever it points. A 3xx is returned as the error answer it is."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Message, newurl: str) -> None:
        return None


def _read(res: Any) -> bytes:
    data: bytes = res.read(_MAX_RESPONSE + 1)
    if len(data) > _MAX_RESPONSE:
        raise http.client.HTTPException(f"an answer over {_MAX_RESPONSE} bytes")
    return data


def _decode(status: int, headers: Message, body: bytes) -> Any:
    if not body:
        return None
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        # A 2xx that is not JSON did not come from Revops (a captive portal, a proxy).
        raise RevopsError.from_response(status, headers, b"") from None


def _describe(err: BaseException) -> str:
    if isinstance(err, urllib.error.URLError) and not isinstance(err, urllib.error.HTTPError):
        return f"{type(err.reason).__name__}: {err.reason}"
    return f"{type(err).__name__}: {err}"


def _check_retries(value: object, name: str) -> int:
    """A whole number, 0 or more (a bool or "3" is refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be 0 or more, got {value}")
    return value


def _check_positive(value: object, name: str) -> float:
    """A finite number above 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number above 0, got {value}")
    return float(value)
