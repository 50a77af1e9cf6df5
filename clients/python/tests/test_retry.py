"""Retries (CONTRACT §14, §20): which answers are retried, with one Idempotency-Key, and
the Retry-After the server asks for."""

import unittest
from typing import Any, List

from revops import Revops, RevopsError

from .support import Answer, FakeRevops, Respond, Seen, api_error

ACCOUNT = {"id": "a1", "object": "account", "name": "Acme", "status": "draft"}


def client(url: str, **kw: Any) -> Revops:
    return Revops("sk_sandbox_test", base_url=url, initial_backoff=0.01, max_backoff=0.05, **kw)


def script(*answers: Answer) -> Respond:
    """Answers in order; the last one repeats."""
    return lambda seen, n: answers[min(n, len(answers) - 1)]


class Retries(unittest.TestCase):
    def test_5xx_429_and_a_key_in_use_are_retried_with_one_key_and_one_body(self) -> None:
        answers = script(
            Answer(status=502, text="bad gateway"),
            api_error(429, "rate_limit_error", "rate_limited"),
            api_error(409, "invalid_request_error", "idempotency_key_in_use"),
            api_error(500, "api_error", "internal"),
            Answer(status=201, json=ACCOUNT),
        )
        with FakeRevops(answers) as fake:
            got = client(fake.url, max_retries=4).create_account({"name": "Acme"})
        self.assertEqual(got["id"], "a1")
        keys = {s.headers["idempotency-key"] for s in fake.requests}
        self.assertEqual(len(fake.requests), 5)
        self.assertEqual(len(keys), 1, "every attempt carries the same Idempotency-Key")
        self.assertEqual({s.body for s in fake.requests}, {b'{"name":"Acme"}'})

    def test_gets_are_retried_too(self) -> None:
        with FakeRevops(script(Answer(drop=True), Answer(status=503, text=""), Answer(json=ACCOUNT))) as fake:
            self.assertEqual(client(fake.url).get_account("a1")["id"], "a1")
        self.assertEqual(len(fake.requests), 3)

    def test_other_errors_are_raised_at_once(self) -> None:
        for answer in [api_error(400, "invalid_request_error", "parameter_invalid"),
                       api_error(401, "authentication_error", "invalid_api_key"),
                       api_error(404, "invalid_request_error", "resource_missing"),
                       api_error(409, "invalid_request_error", "idempotency_key_reused"),
                       api_error(409, "invalid_request_error", "invalid_state_transition")]:
            with self.subTest(code=answer.json["error"]["code"]), FakeRevops(script(answer)) as fake:
                with self.assertRaises(RevopsError):
                    client(fake.url).sign_deal("d1")
                self.assertEqual(len(fake.requests), 1)

    def test_retries_are_bounded(self) -> None:
        with FakeRevops(script(Answer(status=503, text=""))) as fake:
            with self.assertRaises(RevopsError) as caught:
                client(fake.url, max_retries=2).whoami()
        self.assertEqual(caught.exception.status, 503)
        self.assertEqual(len(fake.requests), 3)
        with FakeRevops(script(Answer(status=503, text=""))) as fake:
            with self.assertRaises(RevopsError):
                client(fake.url).whoami(request_options={"max_retries": 0})
        self.assertEqual(len(fake.requests), 1)

    def test_retry_after_is_waited_out(self) -> None:
        limited = api_error(429, "rate_limit_error", "rate_limited")
        limited.headers["Retry-After"] = "1"
        with FakeRevops(script(limited, Answer(json={"object": "api_key"}))) as fake:
            client(fake.url).whoami()
        first, second = fake.requests
        # Not a speed assertion: the retry must not come before the server said.
        self.assertGreaterEqual(second.at - first.answered, 1.0)

    def test_a_retry_after_past_the_limit_is_raised_at_once(self) -> None:
        limited = api_error(429, "rate_limit_error", "rate_limited")
        limited.headers["Retry-After"] = "3600"
        with FakeRevops(script(limited)) as fake:
            with self.assertRaises(RevopsError) as caught:
                client(fake.url).whoami()
        self.assertEqual(caught.exception.retry_after, 3600.0)
        self.assertEqual(len(fake.requests), 1)

    def test_calls_do_not_share_keys(self) -> None:
        seen: List[Seen] = []

        def record(s: Seen, n: int) -> Answer:
            seen.append(s)
            return Answer(status=201, json=ACCOUNT)

        with FakeRevops(record) as fake:
            r = client(fake.url)
            r.create_account({"name": "a"})
            r.create_account({"name": "a"})
        self.assertNotEqual(seen[0].headers["idempotency-key"], seen[1].headers["idempotency-key"])


if __name__ == "__main__":
    unittest.main()
