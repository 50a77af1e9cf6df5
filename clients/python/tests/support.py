"""Helpers of the tests: a local server standing in for Revops, and the repository's paths."""

import json
import os
import ssl
import threading
import time
import unittest
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Type

PACKAGE = Path(__file__).resolve().parent.parent  # clients/python
REPO = PACKAGE.parent.parent
TESTDATA = PACKAGE.parent / "testdata"  # shared by the three clients' suites
DOCUMENT = REPO / "api" / "openapi" / "openapi.json"


@dataclass
class Seen:
    """One request the fake server received."""

    method: str
    path: str
    headers: Dict[str, str]
    body: bytes
    at: float  # time.monotonic() when it arrived
    answered: float = 0.0  # when its answer was sent

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Answer:
    status: int = 200
    json: Any = None
    text: str = ""
    headers: Dict[str, str] = field(default_factory=lambda: {})
    drop: bool = False  # close the connection without answering


Respond = Callable[[Seen, int], Answer]


def api_error(status: int, type: str, code: str, **extra: Any) -> Answer:
    """A §4 error envelope."""
    error = {"type": type, "code": code, "message": f"{code} happened", "request_id": "req_body", **extra}
    return Answer(status=status, json={"error": error}, headers={"X-Request-Id": "req_header"})


class LocalServer:
    """A ThreadingHTTPServer on 127.0.0.1, served from a thread, HTTPS when given a TLS
    context; a context manager. The test servers (the fake Revops, the webhook receiver,
    the proxy that loses an answer) are this with their own handler."""

    def __init__(self, handler: Type[BaseHTTPRequestHandler], tls: Optional[ssl.SSLContext] = None) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._scheme = "http" if tls is None else "https"
        # A short poll: shutdown() waits for the loop to notice it.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"{self._scheme}://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "LocalServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class FakeRevops(LocalServer):
    """A local HTTP server whose answers come from respond(request, n), n counting
    requests from 0. Use it as a context manager."""

    def __init__(self, respond: Respond) -> None:
        self.requests: List[Seen] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def handle_one_request(self) -> None:
                self.raw_requestline = self.rfile.readline(65537)
                if not self.raw_requestline or not self.parse_request():
                    self.close_connection = True
                    return
                length = int(self.headers.get("Content-Length") or 0)
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                            self.rfile.read(length), time.monotonic())
                with lock:
                    n = len(fake.requests)
                    fake.requests.append(seen)
                answer = respond(seen, n)
                seen.answered = time.monotonic()
                if answer.drop:
                    self.close_connection = True
                    return
                payload = json.dumps(answer.json).encode() if answer.json is not None else answer.text.encode()
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json" if answer.json is not None else "text/plain")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in answer.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        lock = threading.Lock()
        super().__init__(Handler)

    def __enter__(self) -> "FakeRevops":
        super().__enter__()
        return self


def ok(body: Any) -> Respond:
    return lambda seen, n: Answer(json=body)


def live_env() -> Optional[Mapping[str, str]]:
    """REVOPS_BASE_URL and REVOPS_API_KEY when both are set: a server to test against."""
    if os.environ.get("REVOPS_BASE_URL") and os.environ.get("REVOPS_API_KEY"):
        return os.environ
    return None


skip_unless_live = unittest.skipUnless(live_env(), "set REVOPS_BASE_URL and REVOPS_API_KEY (a secret sandbox key) to run")
