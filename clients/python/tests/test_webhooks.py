"""Webhook verification (CONTRACT §8, §25): the cases shared with the Go and TypeScript
suites (clients/testdata/webhook-signatures.json), RFC 8032's ed25519 vectors, and what
is the Python client's own (several keys, header sources, key checks)."""

import base64
import hashlib
import hmac
import json
import time
import unittest
from email.message import Message
from typing import Any, Dict, List

from revops import DEFAULT_TOLERANCE, Webhooks, WebhookVerificationError, verify_webhook
from revops import _ed25519  # pyright: ignore[reportPrivateUsage]

from .support import TESTDATA


def load(name: str) -> Any:
    with open(TESTDATA / name, encoding="utf-8") as f:
        return json.load(f)


class SharedCases(unittest.TestCase):
    """Every case of the table, verified with the case's key and clock."""

    def test_every_shared_case(self) -> None:
        cases: List[Dict[str, Any]] = load("webhook-signatures.json")["cases"]
        self.assertGreaterEqual(len(cases), 30)
        for c in cases:
            with self.subTest(c["name"]):
                hooks = Webhooks(c["key"], clock=lambda c=c: float(c["now"]))
                try:
                    event = hooks.verify(c["body"], c["headers"])
                except WebhookVerificationError as err:
                    self.assertEqual(err.reason, c["want"], str(err))
                else:
                    self.assertEqual("ok", c["want"], "verified")
                    self.assertEqual(event["event"]["id"], "msg_p5jXN8AQM9LWM0D4loKWxJek")
                    # bytes verify as the same text does
                    hooks.verify(c["body"].encode("utf-8"), c["headers"])


class RFC8032(unittest.TestCase):
    def test_every_vector_verifies_and_an_altered_one_does_not(self) -> None:
        vectors = load("ed25519-rfc8032.json")["vectors"]
        self.assertEqual(len(vectors), 5)
        for v in vectors:
            with self.subTest(v["name"]):
                public, message, signature = (bytes.fromhex(v[k]) for k in ("public_key", "message", "signature"))
                self.assertTrue(_ed25519.verify(public, message, signature))
                self.assertFalse(_ed25519.verify(public, message + b"x", signature))
                flipped = bytearray(signature)
                flipped[5] ^= 1
                self.assertFalse(_ed25519.verify(public, message, bytes(flipped)))
                other = bytes.fromhex(vectors[(vectors.index(v) + 1) % 5]["public_key"])
                self.assertFalse(_ed25519.verify(other, message, signature))

    def test_malformed_inputs_are_refused(self) -> None:
        v = load("ed25519-rfc8032.json")["vectors"][0]
        public, signature = bytes.fromhex(v["public_key"]), bytes.fromhex(v["signature"])
        self.assertFalse(_ed25519.verify(public[:31], b"", signature))
        self.assertFalse(_ed25519.verify(public, b"", signature[:63]))
        # y = p (not reduced) and a y with no x on the curve are not points.
        self.assertFalse(_ed25519.verify((2**255 - 19).to_bytes(32, "little"), b"", signature))
        self.assertFalse(_ed25519.verify((2).to_bytes(32, "little"), b"", signature))
        # S = L: not below the group order.
        big_s = signature[:32] + (2**252 + 27742317777372353535851937790883648493).to_bytes(32, "little")
        self.assertFalse(_ed25519.verify(public, b"", big_s))


SECRET = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()
OLD = "whsec_" + base64.b64encode(b"fedcba9876543210fedcba9876543210").decode()


def sign(secret: str, msg_id: str, ts: int, body: str) -> str:
    key = base64.b64decode(secret[len("whsec_"):])
    return "v1," + base64.b64encode(hmac.new(key, f"{msg_id}.{ts}.{body}".encode(), hashlib.sha256).digest()).decode()


def delivery(*secrets: str, ts: int = 0) -> Dict[str, Any]:
    ts = ts or int(time.time())
    body = json.dumps({"event": {"id": "e1", "time": str(ts), "type": "deal-signed"}, "deal": {"id": "d1", "object": "deal"}})
    return {"body": body, "headers": {"webhook-id": "e1", "webhook-timestamp": str(ts),
                                      "webhook-signature": " ".join(sign(s, "e1", ts, body) for s in secrets)}}


class Verify(unittest.TestCase):
    def test_returns_the_typed_payload(self) -> None:
        d = delivery(SECRET)
        event = verify_webhook(d["body"], d["headers"], SECRET)
        self.assertEqual(event["event"]["type"], "deal-signed")
        if "deal" in event:  # narrows the union to the deal-* payloads
            self.assertEqual(event["deal"]["id"], "d1")
        else:
            self.fail("no deal")

    def test_several_keys_during_a_rotation(self) -> None:
        d = delivery(OLD)
        self.assertEqual(Webhooks([SECRET, OLD]).verify(d["body"], d["headers"])["event"]["id"], "e1")
        with self.assertRaises(WebhookVerificationError):
            Webhooks([SECRET]).verify(d["body"], d["headers"])

    def test_a_timestamp_fault_is_reported_as_such_under_several_keys(self) -> None:
        d = delivery(SECRET, ts=int(time.time()) - int(DEFAULT_TOLERANCE) - 60)
        with self.assertRaises(WebhookVerificationError) as caught:
            Webhooks([OLD, SECRET]).verify(d["body"], d["headers"])
        self.assertEqual(caught.exception.reason, "timestamp_too_old")
        lenient = Webhooks(SECRET, tolerance=DEFAULT_TOLERANCE + 120)
        self.assertEqual(lenient.verify(d["body"], d["headers"])["event"]["id"], "e1")

    def test_headers_as_http_server_gives_them(self) -> None:
        d = delivery(SECRET, OLD)
        first, second = d["headers"]["webhook-signature"].split(" ")
        msg = Message()
        msg["Webhook-Id"] = "e1"
        msg["Webhook-Timestamp"] = d["headers"]["webhook-timestamp"]
        msg["Webhook-Signature"] = second  # a proxy split the two signatures over two lines
        msg["Webhook-Signature"] = first
        self.assertEqual(Webhooks(SECRET).verify(d["body"], msg)["event"]["id"], "e1")
        listed = {"webhook-id": ["e1"], "webhook-timestamp": [d["headers"]["webhook-timestamp"]], "webhook-signature": [second, first]}
        self.assertEqual(Webhooks(SECRET).verify(d["body"], listed)["event"]["id"], "e1")

    def test_a_signed_body_that_is_not_an_event(self) -> None:
        ts = int(time.time())
        for body in ['{"hello": 1}', "not json", '{"event": {"type": 7}}']:
            headers = {"webhook-id": "x", "webhook-timestamp": str(ts), "webhook-signature": sign(SECRET, "x", ts, body)}
            with self.subTest(body), self.assertRaises(WebhookVerificationError) as caught:
                verify_webhook(body, headers, SECRET)
            self.assertEqual(caught.exception.reason, "invalid_payload")

    def test_a_timestamp_that_is_not_unix_seconds(self) -> None:
        d = delivery(SECRET)
        d["headers"]["webhook-timestamp"] = "soon"
        with self.assertRaises(WebhookVerificationError) as caught:
            verify_webhook(d["body"], d["headers"], SECRET)
        self.assertEqual(caught.exception.reason, "bad_signature")

    def test_bad_keys_are_refused_without_being_repeated(self) -> None:
        for key in ["whsec_not base64!", "whsec_", "whpk_", "whpk_AAAA", "whpk_not base64!"]:
            with self.subTest(key), self.assertRaises(ValueError) as caught:
                Webhooks(key)
            self.assertNotIn("not base64!", str(caught.exception))
        with self.assertRaises(ValueError):
            Webhooks([])
        self.assertNotIn("MDEy", repr(Webhooks(SECRET)))


if __name__ == "__main__":
    unittest.main()
