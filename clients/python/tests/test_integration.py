"""Integration tests against a running Revops (`revops dev`). They run only when
REVOPS_BASE_URL and REVOPS_API_KEY (a secret *sandbox* key) are set, make their own data
(random names and ids) and delete the endpoints and meters they create: an environment
holds at most 16 endpoints and 32 meters, and other suites may use the same server. The
webhook tests also need REVOPS_TEST_RECEIVER_CERT and REVOPS_TEST_RECEIVER_KEY (receiver.py);
the 429 test a server started with a low REVOPS_RATE_LIMIT (20)."""

import threading
import time
import unittest
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from email.message import Message
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar
from urllib import error as urlerror
from urllib import request as urlrequest

from revops import Revops, RevopsError, Webhooks, WebhookVerificationError
from revops.models import Endpoint, EndpointSigning

from .receiver import Delivery, Receiver, receiver_files
from .support import LocalServer, live_env, skip_unless_live

ENDPOINT_DESCRIPTION = "clients/python integration test"
T = TypeVar("T")


def tag(prefix: str = "py") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def eventually(fn: Callable[[], Optional[T]], timeout: float = 90.0, every: float = 0.3) -> T:
    """Polls fn until it returns something: work that goes through Temporal, on a machine
    that may be loaded."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout} s")
        time.sleep(every)


def live_client(**kw: Any) -> Revops:
    # Generous retries: the server is rate limited on purpose (REVOPS_RATE_LIMIT=20).
    return Revops(max_retries=10, initial_backoff=0.2, max_backoff=2.0, **kw)


@skip_unless_live
class AgainstRevops(unittest.TestCase):
    revops: Revops

    @classmethod
    def setUpClass(cls) -> None:
        cls.revops = live_client()
        me = cls.revops.whoami()
        if (me["type"], me["environment"]) != ("secret", "sandbox"):
            raise AssertionError("run the integration tests with a secret sandbox key")

    def test_deal_walked_to_signed(self) -> None:
        r = self.revops
        account = r.create_account({"name": "Python deal", "external_id": tag(), "properties": {"tier": "gold", "seats": 5}})
        self.assertEqual(account["status"], "draft")
        self.assertEqual(r.get_account(account["id"])["properties"], {"tier": "gold", "seats": 5})
        deal = r.create_deal({"customer": {"id": account["id"]}, "opportunity_id": tag()})
        self.assertEqual((deal["status"], deal["customer"]["id"]), ("draft", account["id"]))
        edited = r.update_deal(deal["id"], {"net_price": "19999.00", "net_price_currency": "USD", "net_price_precision": "2"})
        self.assertEqual(edited["net_price"], "19999.00")
        with self.assertRaises(RevopsError) as caught:
            r.sign_deal(deal["id"])
        self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.type), (409, "invalid_state_transition", "invalid_request_error"))
        self.assertTrue(caught.exception.request_id)
        self.assertEqual(r.submit_deal(deal["id"])["status"], "pending_approval")
        self.assertEqual(r.approve_deal(deal["id"])["status"], "approved")
        self.assertEqual(r.sign_deal(deal["id"])["status"], "signed")
        self.assertEqual(r.get_deal(deal["id"])["status"], "signed")
        with self.assertRaises(RevopsError) as missing:
            r.get_deal(str(uuid.uuid4()))
        self.assertEqual((missing.exception.status, missing.exception.code), (404, "resource_missing"))

    def test_usage_ingested_twice_with_one_transaction_id(self) -> None:
        r = self.revops
        account_id, transaction_id = tag(), str(uuid.uuid4())
        batch: Any = {"transaction_id": transaction_id, "mode": "increment", "event_metrics": [
            {"account_id": account_id, "product": "api", "metric_name": "calls", "metric_value": 3, "metric_resolution": "day"}]}
        first = r.ingest_usage(batch)
        self.assertEqual((first["duplicate"], first["metrics_accepted"]), (False, 1))
        # Another request (another Idempotency-Key) with the same transaction_id: counted once.
        self.assertTrue(r.ingest_usage(batch)["duplicate"])
        rows = r.list_usage_events(transaction_id=transaction_id)["data"]
        self.assertEqual([row["account_id"] for row in rows], [account_id])
        summary = r.usage_summary(resolution="day", account_id=account_id)
        self.assertEqual([float(row["value"]) for row in summary["data"]], [3.0])

    def test_events_paged_through(self) -> None:
        r = self.revops
        account = r.create_account({"name": "Python events"})
        for i in range(3):
            r.update_account(account["id"], {"name": f"Python events {i}"})
        events = list(r.list_events_all(object_id=account["id"], limit=2))
        self.assertEqual(sorted(e["type"] for e in events), ["account-created"] + ["account-updated"] * 3)
        self.assertEqual(len({e["id"] for e in events}), 4, "no event twice")
        self.assertEqual(events, sorted(events, key=lambda e: e["created_at"], reverse=True), "newest first")
        self.assertEqual(r.get_event(events[-1]["id"])["object_id"], account["id"])

    def test_meter_values(self) -> None:
        r = self.revops
        key, account_id = tag("m").replace("-", "_"), tag()
        metric = "metric_" + key
        # Yesterday's window, with rows stamped at its noon: no race with midnight.
        day = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1)
        r.ingest_usage({"transaction_id": str(uuid.uuid4()), "mode": "increment", "event_metrics": [
            {"account_id": f"{account_id}-{i}", "product": "api", "metric_name": metric, "metric_value": v,
             "metric_resolution": "minute", "timestamp": (day + timedelta(hours=12)).isoformat()} for i, v in enumerate([1, 2, 3])]})
        meter = r.create_meter({"key": key, "filter": {"metric_name": metric}, "aggregation": "sum"})
        self.addCleanup(self._quietly, lambda: r.delete_meter(key))
        self.assertEqual((meter["key"], r.get_meter(key)["aggregation"]), (key, "sum"))
        self.assertIn(key, [m["key"] for m in r.list_meters_all(limit=5)])

        def three_rows() -> Optional[List[float]]:
            rows = list(r.meter_values_all(key, from_=day, to=day + timedelta(days=1), window="day", limit=1))
            return sorted(float(row["value"]) for row in rows) if len(rows) == 3 else None

        self.assertEqual(eventually(three_rows, 60), [1.0, 2.0, 3.0], "three accounts, one row a page")
        self.assertTrue(r.delete_meter(key)["deleted"])

    def test_lost_answer_retried_with_the_same_idempotency_key(self) -> None:
        proxy = LosingProxy((live_env() or {})["REVOPS_BASE_URL"])
        with proxy:
            external_id = tag()
            account = live_client(base_url=proxy.url).create_account({"name": "Python retried", "external_id": external_id})
        self.assertEqual(len(proxy.posts), 2, "the first attempt, then one retry")
        (key1, status1, _), (key2, _, replayed2) = proxy.posts
        self.assertEqual(key1, key2, "both attempts carried one Idempotency-Key")
        self.assertEqual(status1, 201)
        self.assertEqual(replayed2, "true", "Revops replayed its first answer")
        listed = self.revops.list_accounts(external_id=external_id)["data"]
        self.assertEqual([a["id"] for a in listed], [account["id"]], "exactly one account exists")

    def test_a_real_429_is_retried_after_retry_after(self) -> None:
        attempts: Dict[int, List[Tuple[float, float, int, Optional[str]]]] = {}
        lock = threading.Lock()

        class Counting(Revops):
            def _send(self, method: str, target: str, headers: Any, payload: Optional[bytes], timeout: float) -> Tuple[int, Message, bytes]:
                started = time.monotonic()
                status, answer_headers, body = super()._send(method, target, headers, payload, timeout)
                with lock:
                    attempts.setdefault(threading.get_ident(), []).append((started, time.monotonic(), status, answer_headers.get("Retry-After")))
                return status, answer_headers, body

        client = Counting(max_retries=8, initial_backoff=0.05, max_backoff=0.5)

        def calls(n: int) -> None:
            # More at once than the key's burst (2 × REVOPS_RATE_LIMIT), started together.
            attempts.clear()
            start = threading.Barrier(n)

            def call(_: int) -> None:
                start.wait()
                client.whoami()

            with ThreadPoolExecutor(max_workers=n) as pool:
                for _ in pool.map(call, range(n)):
                    pass

        for _ in range(5):
            calls(100)
            if any(a[2] == 429 for tries in attempts.values() for a in tries):
                break
        limited = [tries for tries in attempts.values() if any(a[2] == 429 for a in tries)]
        self.assertTrue(limited, "no 429 seen: run the server with a low REVOPS_RATE_LIMIT (e.g. 20)")
        for tries in limited:
            for (_, answered, status, retry_after), (started, _, _, _) in zip(tries, tries[1:]):
                if status == 429:
                    self.assertIsNotNone(retry_after, "a 429 carries Retry-After")
                    self.assertGreaterEqual(started - answered, float(retry_after or 0), "retried before Retry-After")
            self.assertEqual(tries[-1][2], 200)

    @staticmethod
    def _quietly(fn: Callable[[], object]) -> None:
        try:
            fn()
        except RevopsError:
            pass


@skip_unless_live
@unittest.skipUnless(receiver_files(), "set REVOPS_TEST_RECEIVER_CERT and REVOPS_TEST_RECEIVER_KEY (a certificate for 127.0.0.1 the server trusts)")
class Webhooks_(unittest.TestCase):
    """Deliveries received over HTTPS and verified: v1 (HMAC) and v1a (ed25519)."""

    revops: Revops

    @classmethod
    def setUpClass(cls) -> None:
        cls.revops = live_client()
        for ep in cls.revops.list_webhook_endpoints_all():
            # Left by a run that crashed before its cleanup (an environment holds 16).
            if (ep["description"] or "").startswith(ENDPOINT_DESCRIPTION) and ep["created_at"] < (datetime.now(timezone.utc) - timedelta(minutes=10)).isoformat():
                cls.revops.delete_webhook_endpoint(ep["id"])

    def setUp(self) -> None:
        cert, key = receiver_files() or ("", "")
        self.receiver = Receiver(cert, key)
        self.receiver.__enter__()
        self.addCleanup(self.receiver.__exit__)

    def endpoint(self, signing: EndpointSigning = "hmac-sha256") -> Endpoint:
        ep = self.revops.create_webhook_endpoint({
            "url": self.receiver.url + "/hooks", "event_types": ["account-created"], "description": f"{ENDPOINT_DESCRIPTION} {tag()}",
            "retry_policy": {"initial_interval": "1s", "maximum_interval": "2s", "maximum_attempts": 3}, "signing": signing})
        self.addCleanup(lambda: self.revops.delete_webhook_endpoint(ep["id"]))
        return ep

    def delivery_of(self, account_id: str, after: int = 0) -> Delivery:
        return self.receiver.wait_for(lambda d: account_id.encode() in d.body, after=after)

    def test_a_delivered_webhook_verifies_and_a_replay_comes_again(self) -> None:
        ep = self.endpoint()
        secret = ep.get("secret") or ""
        self.assertTrue(secret.startswith("whsec_"))
        account = self.revops.create_account({"name": "Python webhook"})
        d = self.delivery_of(account["id"])
        hooks = Webhooks(secret)
        event = hooks.verify(d.body, d.headers)
        self.assertEqual(event["event"]["type"], "account-created")
        self.assertEqual(event["event"]["id"], d.headers["webhook-id"])
        self.assertIn("account", event)
        if "account" in event:
            self.assertEqual(event["account"]["id"], account["id"])
        with self.assertRaises(WebhookVerificationError) as caught:
            Webhooks("whsec_" + "B" * 43 + "=").verify(d.body, d.headers)
        self.assertEqual(caught.exception.reason, "bad_signature")
        with self.assertRaises(WebhookVerificationError):
            hooks.verify(d.body.replace(b"Python webhook", b"Python w3bhook"), d.headers)

        # A replay of the delivered event comes again, with the same webhook-id.
        event_id = event["event"]["id"]
        eventually(lambda: True if any(x["endpoint_id"] == ep["id"] and x["status"] == "delivered"
                                       for x in self.revops.get_event(event_id)["deliveries"]) else None, 60)
        seen = len(self.receiver.deliveries)
        replayed = self.revops.replay_event(event_id, {"endpoint_id": ep["id"]})
        self.assertEqual(replayed["id"], event_id)
        again = self.delivery_of(account["id"], after=seen)
        self.assertEqual(hooks.verify(again.body, again.headers)["event"]["id"], event_id)

    def test_an_ed25519_endpoint_verifies_with_its_public_key_across_a_rotation(self) -> None:
        ep = self.endpoint(signing="ed25519")
        public_key = ep.get("public_key") or ""
        self.assertEqual(ep["signing"], "ed25519")
        self.assertTrue(public_key.startswith("whpk_"))
        self.assertNotIn("secret", ep, "an ed25519 endpoint shows no secret")
        first = self.revops.create_account({"name": "Python ed25519"})
        d = self.delivery_of(first["id"])
        self.assertRegex(d.headers["webhook-signature"], r"^v1a,")
        event = Webhooks(public_key).verify(d.body, d.headers)  # Revops's own v1a signature, checked in pure Python
        self.assertEqual(event["event"]["type"], "account-created")

        rotated = self.revops.rotate_webhook_endpoint_secret(ep["id"])
        new_key = rotated.get("public_key") or ""
        self.assertTrue(new_key.startswith("whpk_"))
        self.assertNotEqual(new_key, public_key)
        second = self.revops.create_account({"name": "Python ed25519 rotated"})
        after = self.delivery_of(second["id"])
        for key in (new_key, public_key):  # both sign for 24 h
            self.assertIn("account", Webhooks(key).verify(after.body, after.headers))


class LosingProxy(LocalServer):
    """Forwards every request to Revops, but answers the first POST that Revops answered
    with a 2xx by 502: the change was made and its answer lost on the way back. Only an
    answer that did the work is lost; a refusal (a 429: the key's budget is shared with the
    suite's other tests) reaches the client, which sends again."""

    def __init__(self, upstream: str) -> None:
        self.posts: List[Tuple[str, int, Optional[str]]] = []  # key, upstream status, Idempotent-Replayed
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._forward()

            def do_POST(self) -> None:
                self._forward()

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if self.command == "POST" else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
                req = urlrequest.Request(upstream.rstrip("/") + self.path, data=body, method=self.command, headers=headers)
                try:
                    with urlrequest.urlopen(req, timeout=60) as res:
                        status, answer, data = res.status, res.headers, res.read()
                except urlerror.HTTPError as err:
                    with err:
                        status, answer, data = err.code, err.headers, err.read()
                if self.command == "POST" and 200 <= status < 300:
                    proxy.posts.append((self.headers.get("Idempotency-Key") or "", status, answer.get("Idempotent-Replayed")))
                    if len(proxy.posts) == 1:
                        status, data, answer = 502, b"bad gateway", Message()
                self.send_response(status)
                for name in ("Content-Type", "Retry-After", "Idempotent-Replayed", "X-Request-Id"):
                    if answer.get(name):
                        self.send_header(name, answer[name])
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        super().__init__(Handler)


if __name__ == "__main__":
    unittest.main()
