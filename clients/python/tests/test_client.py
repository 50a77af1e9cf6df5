"""The client against a local fake server: what it sends, how it reads answers."""

import json
import os
import unittest
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Tuple, Type
from unittest import mock

import revops
from revops import Revops, RevopsConnectionError, RevopsError

from .support import DOCUMENT, PACKAGE, Answer, FakeRevops, api_error, ok

ACCOUNT: Dict[str, Any] = {"id": "a1", "object": "account", "name": "Acme", "status": "draft"}


def client(url: str, **kw: Any) -> Revops:
    return Revops("sk_sandbox_test", base_url=url, initial_backoff=0.01, max_backoff=0.05, **kw)


class Construction(unittest.TestCase):
    def test_reads_the_key_and_url_from_the_environment(self) -> None:
        with mock.patch.dict(os.environ, {"REVOPS_API_KEY": "sk_sandbox_env", "REVOPS_BASE_URL": "https://api.example/"}):
            r = Revops()
        self.assertEqual(r.base_url, "https://api.example")
        with mock.patch.dict(os.environ, {"REVOPS_API_KEY": "sk_sandbox_env"}, clear=True):
            self.assertEqual(Revops().base_url, revops.DEFAULT_BASE_URL)

    def test_refuses_a_missing_key_and_bad_settings(self) -> None:
        with mock.patch.dict(os.environ, {}, clear=True):
            with self.assertRaisesRegex(ValueError, "REVOPS_API_KEY"):
                Revops()
        with self.assertRaisesRegex(ValueError, "http"):
            Revops("k", base_url="ftp://x")
        bad: List[Tuple[Dict[str, Any], Type[Exception]]] = [({"max_retries": -1}, ValueError), ({"max_retries": True}, TypeError), ({"max_retries": 2.5}, TypeError),
                        ({"timeout": 0}, ValueError), ({"timeout": float("nan")}, ValueError), ({"max_retry_after": "60"}, TypeError),
                        ({"initial_backoff": 2.0, "max_backoff": 1.0}, ValueError)]
        for kw, err in bad:
            with self.subTest(kw=kw), self.assertRaises(err):
                Revops("k", **kw)

    def test_the_key_shows_in_no_repr(self) -> None:
        r = Revops("sk_live_supersecretvalue")
        self.assertNotIn("supersecretvalue", repr(r))
        self.assertNotIn("supersecretvalue", repr(vars(r)))
        self.assertIn("sk_live_", repr(r))

    def test_version_is_pyproject_s(self) -> None:
        with open(PACKAGE / "pyproject.toml", encoding="utf-8") as f:
            self.assertIn(f'version = "{revops.VERSION}"', f.read())


class Requests(unittest.TestCase):
    def test_a_create_sends_json_a_key_and_an_idempotency_key(self) -> None:
        with FakeRevops(ok(ACCOUNT)) as fake:
            got = client(fake.url).create_account({"name": "Acme", "properties": {"tier": "gold"}})
        self.assertEqual(got["name"], "Acme")
        seen = fake.requests[0]
        self.assertEqual((seen.method, seen.path), ("POST", "/v1/accounts"))
        self.assertEqual(seen.json(), {"name": "Acme", "properties": {"tier": "gold"}})
        self.assertEqual(seen.headers["authorization"], "Bearer sk_sandbox_test")
        self.assertEqual(seen.headers["content-type"], "application/json")
        self.assertRegex(seen.headers["idempotency-key"], r"^[0-9a-f-]{36}$")
        self.assertRegex(seen.headers["user-agent"], r"^revops-python/\d+\.\d+\.\d+ python/3\.")

    def test_an_action_sends_no_body_and_the_caller_s_key(self) -> None:
        with FakeRevops(ok({**ACCOUNT, "status": "active"})) as fake:
            client(fake.url).activate_account("a/1 ?", idempotency_key="job-42")
        seen = fake.requests[0]
        self.assertEqual(seen.path, "/v1/accounts/a%2F1%20%3F/activate")
        self.assertEqual(seen.body, b"")
        self.assertEqual(seen.headers["idempotency-key"], "job-42")

    def test_a_get_sends_no_idempotency_key(self) -> None:
        with FakeRevops(ok(ACCOUNT)) as fake:
            client(fake.url).get_account("a1")
        self.assertNotIn("idempotency-key", fake.requests[0].headers)

    def test_query_parameters(self) -> None:
        with FakeRevops(ok({"object": "meter_values", "data": [], "next_page": None})) as fake:
            client(fake.url).meter_values(
                "api_calls",
                from_=datetime(2026, 11, 1, 1, 0, tzinfo=timezone(timedelta(hours=1))),
                to="2026-11-02T00:00:00Z",
                window="day",
                filter={"region": "eu west"},
                limit=2,
            )
            client(fake.url).list_events(created_after=1795000000, type="deal-signed")
        self.assertEqual(fake.requests[0].path, "/v1/meters/api_calls/values?from=2026-11-01T00%3A00%3A00Z&to=2026-11-02T00%3A00%3A00Z"
                                                 "&window=day&filter%5Bregion%5D=eu+west&limit=2")
        self.assertEqual(fake.requests[1].path, "/v1/events?type=deal-signed&created_after=1795000000")

    def test_arguments_refused_before_anything_is_sent(self) -> None:
        with FakeRevops(ok(ACCOUNT)) as fake:
            r = client(fake.url)
            with self.assertRaisesRegex(ValueError, "id must be a non-empty string"):
                r.get_account("")
            with self.assertRaisesRegex(ValueError, "time zone"):
                r.list_events(created_after=datetime(2026, 1, 1))
            with self.assertRaises(ValueError):
                r.ingest_usage({"transaction_id": "t", "mode": "set", "event_metrics": [
                    {"account_id": "a", "product": "p", "metric_name": "m", "metric_value": float("nan"), "metric_resolution": "day"}]})
        self.assertEqual(fake.requests, [])

    def test_request_options_and_client_headers(self) -> None:
        with FakeRevops(ok(ACCOUNT)) as fake:
            r = Revops("sk_sandbox_test", base_url=fake.url, headers={"X-Team": "billing", "Authorization": "ignored"})
            r.get_account("a1", request_options={"headers": {"X-Trace": "t1"}, "timeout": 5})
        h = fake.requests[0].headers
        self.assertEqual((h["x-team"], h["x-trace"], h["authorization"]), ("billing", "t1", "Bearer sk_sandbox_test"))

    def test_request_reaches_any_path(self) -> None:
        with FakeRevops(ok({"ok": True})) as fake:
            got = client(fake.url).request("POST", "/v1/future_route", query={"dry_run": True}, body={"a": 1})
        self.assertEqual(got, {"ok": True})
        self.assertEqual(fake.requests[0].path, "/v1/future_route?dry_run=true")
        self.assertIn("idempotency-key", fake.requests[0].headers)
        with FakeRevops(ok({"ok": True})) as fake:
            client(fake.url).request("GET", "/v1/accounts?limit=5", query={"status": "active"})
        self.assertEqual(fake.requests[0].path, "/v1/accounts?limit=5&status=active")

    def test_every_operation_of_the_document_has_a_method(self) -> None:
        with open(DOCUMENT, encoding="utf-8") as f:
            doc = json.load(f)
        ids = {op["operationId"] for item in doc["paths"].values() for m, op in item.items() if m != "parameters"}
        self.assertEqual(set(revops.OPERATIONS), ids)
        for name in revops.OPERATIONS.values():
            self.assertTrue(callable(getattr(Revops, name)), name)


class Errors(unittest.TestCase):
    def test_the_envelope_becomes_a_typed_error(self) -> None:
        faults = [{"param": "name", "code": "parameter_missing", "message": "name is required"}]
        answer = api_error(400, "invalid_request_error", "parameter_missing", param="name", errors=faults)
        with FakeRevops(lambda s, n: answer) as fake:
            with self.assertRaises(RevopsError) as caught:
                client(fake.url).create_account({"name": ""})
        err = caught.exception
        self.assertEqual((err.status, err.type, err.code, err.param, err.request_id), (400, "invalid_request_error", "parameter_missing", "name", "req_body"))
        self.assertEqual(err.errors, faults)
        self.assertEqual(len(fake.requests), 1, "a 400 is not retried")
        self.assertIn("parameter_missing", str(err))
        self.assertIn("req_body", str(err))

    def test_another_body_keeps_only_the_status(self) -> None:
        echo = Answer(status=404, text="<html>Authorization: Bearer sk_sandbox_test</html>", headers={"X-Request-Id": "req_h"})
        with FakeRevops(lambda s, n: echo) as fake:
            with self.assertRaises(RevopsError) as caught:
                client(fake.url).get_deal("d1")
        err = caught.exception
        self.assertEqual((err.status, err.code, err.request_id), (404, "unexpected_response", "req_h"))
        self.assertEqual(str(err.args[0]), "HTTP 404 Not Found without a Revops error body")
        self.assertNotIn("sk_sandbox_test", str(err))

    def test_a_redirect_is_not_followed(self) -> None:
        with FakeRevops(lambda s, n: Answer(status=302, headers={"Location": "http://127.0.0.1:9/steal"})) as fake:
            with self.assertRaises(RevopsError) as caught:
                client(fake.url).whoami()
        self.assertEqual(caught.exception.status, 302)
        self.assertEqual(len(fake.requests), 1)

    def test_no_answer_at_all_is_a_connection_error(self) -> None:
        with FakeRevops(lambda s, n: Answer(drop=True)) as fake:
            with self.assertRaises(RevopsConnectionError) as caught:
                client(fake.url, max_retries=2).whoami()
        self.assertEqual(len(fake.requests), 3)
        self.assertIn("after 3 attempts", str(caught.exception))
        self.assertIsNotNone(caught.exception.__cause__)

    def test_a_2xx_that_is_not_json(self) -> None:
        with FakeRevops(lambda s, n: Answer(status=200, text="<html>portal</html>")) as fake:
            with self.assertRaises(RevopsError) as caught:
                client(fake.url).whoami()
        self.assertEqual(caught.exception.code, "unexpected_response")


if __name__ == "__main__":
    unittest.main()
