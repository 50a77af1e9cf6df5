"""An HTTPS webhook receiver on 127.0.0.1 for the integration tests (http.server + ssl).
Revops delivers to https:// only, and the server under test must trust the receiver's
certificate: the repository's runner issues one for 127.0.0.1 from `revops dev`'s local CA
and names its files in REVOPS_TEST_RECEIVER_CERT and REVOPS_TEST_RECEIVER_KEY."""

import os
import ssl
import threading
import time
from dataclasses import dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, List, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

from .support import LocalServer

# Success per CONTRACT §8: status 200 and a body containing the sentence.
SENTENCE = b"Revops API Event Received."


def receiver_files() -> Optional[Tuple[str, str]]:
    crt, key = os.environ.get("REVOPS_TEST_RECEIVER_CERT"), os.environ.get("REVOPS_TEST_RECEIVER_KEY")
    return (crt, key) if crt and key else None


@dataclass
class Delivery:
    method: str
    headers: Message
    body: bytes  # the raw body (for a GET endpoint, the payload query parameter)


class Receiver(LocalServer):
    """Keeps every delivery with its raw body and headers; a context manager."""

    def __init__(self, cert: str, key: str) -> None:
        self.deliveries: List[Delivery] = []
        self._changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._keep(body)

            def do_GET(self) -> None:
                payload = parse_qs(urlsplit(self.path).query).get("payload", [""])[0]
                self._keep(payload.encode("utf-8"))

            def _keep(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(SENTENCE)))
                self.end_headers()
                self.wfile.write(SENTENCE)
                with receiver._changed:
                    receiver.deliveries.append(Delivery(self.command, self.headers, body))
                    receiver._changed.notify_all()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        super().__init__(Handler, context)

    def wait_for(self, match: Callable[[Delivery], bool], timeout: float = 90.0, after: int = 0) -> Delivery:
        """The first delivery from index `after` on that match accepts."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for d in self.deliveries[after:]:
                    if match(d):
                        return d
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no matching webhook within {timeout} s ({len(self.deliveries)} received): "
                                         "does the server trust the receiver's certificate?")
                self._changed.wait(left)
