"""Auto-paging iterators: §9 lists by starting_after, §18 meter values by page."""

import unittest
from typing import Any, Dict, List
from urllib.parse import parse_qs, urlsplit

from revops import Revops, RevopsError

from .support import Answer, FakeRevops, Seen, api_error


def client(url: str) -> Revops:
    return Revops("sk_sandbox_test", base_url=url, initial_backoff=0.01, max_backoff=0.05, max_retries=0)


def query(seen: Seen) -> Dict[str, List[str]]:
    return parse_qs(urlsplit(seen.path).query)


DEALS = [{"id": f"d{i}", "object": "deal", "status": "draft"} for i in range(5)]


def deal_pages(seen: Seen, n: int) -> Answer:
    """Five deals, two a page."""
    after = query(seen).get("starting_after", [None])[0]
    start = 0 if after is None else [d["id"] for d in DEALS].index(after) + 1
    page = DEALS[start:start + 2]
    return Answer(json={"object": "list", "data": page, "has_more": start + 2 < len(DEALS)})


class Paging(unittest.TestCase):
    def test_a_list_is_walked_by_starting_after(self) -> None:
        with FakeRevops(deal_pages) as fake:
            ids = [d["id"] for d in client(fake.url).list_deals_all(customer="c1", limit=2)]
        self.assertEqual(ids, ["d0", "d1", "d2", "d3", "d4"])
        self.assertEqual([query(s).get("starting_after") for s in fake.requests], [None, ["d1"], ["d3"]])
        self.assertTrue(all(query(s)["customer"] == ["c1"] and query(s)["limit"] == ["2"] for s in fake.requests))

    def test_the_caller_s_starting_after_is_the_first_cursor(self) -> None:
        with FakeRevops(deal_pages) as fake:
            ids = [d["id"] for d in client(fake.url).list_deals_all(starting_after="d2")]
        self.assertEqual(ids, ["d3", "d4"])

    def test_pages_are_fetched_as_the_loop_reaches_them(self) -> None:
        with FakeRevops(deal_pages) as fake:
            walk = client(fake.url).list_deals_all()
            self.assertEqual(fake.requests, [], "nothing is sent before the loop starts")
            self.assertEqual(next(walk)["id"], "d0")
            self.assertEqual(len(fake.requests), 1)

    def test_an_error_on_a_later_page_is_raised_in_the_loop(self) -> None:
        def answer(seen: Seen, n: int) -> Answer:
            return deal_pages(seen, n) if n == 0 else api_error(404, "invalid_request_error", "resource_missing")

        seen_ids: List[str] = []
        with FakeRevops(answer) as fake:
            with self.assertRaises(RevopsError):
                for d in client(fake.url).list_deals_all():
                    seen_ids.append(d["id"])
        self.assertEqual(seen_ids, ["d0", "d1"])

    def test_meter_values_are_walked_by_page(self) -> None:
        pages: Dict[Any, Any] = {None: (["r1", "r2"], "p2"), "p2": (["r3"], "p3"), "p3": ([], None)}

        def answer(seen: Seen, n: int) -> Answer:
            rows, following = pages[query(seen).get("page", [None])[0]]
            return Answer(json={"object": "meter_values", "data": [{"account_id": r} for r in rows], "has_more": following is not None, "next_page": following})

        with FakeRevops(answer) as fake:
            rows = [r["account_id"] for r in client(fake.url).meter_values_all("m", from_="2026-11-01T00:00:00Z", to="2026-11-02T00:00:00Z", window="hour")]
        self.assertEqual(rows, ["r1", "r2", "r3"])
        self.assertEqual(len(fake.requests), 3)

    def test_a_next_page_equal_to_the_page_ends_the_walk(self) -> None:
        same = Answer(json={"object": "meter_values", "data": [{"account_id": "x"}], "has_more": True, "next_page": "p1"})
        with FakeRevops(lambda s, n: same) as fake:
            rows = list(client(fake.url).meter_values_all("m", from_="a", to="b", window="day", page="p1"))
        self.assertEqual(len(rows), 1)
        self.assertEqual(len(fake.requests), 1)


if __name__ == "__main__":
    unittest.main()
