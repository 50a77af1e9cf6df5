"""Walks paged lists. Generators: each page is fetched when the loop reaches it, and an
error of any page is raised there."""

from typing import Any, Callable, Iterator, Mapping, Optional

Fetch = Callable[[Optional[str]], Mapping[str, Any]]


def paginate_by_cursor(fetch: Fetch, first: Optional[str]) -> Iterator[Any]:
    """A CONTRACT §9 list: {"data": [...], "has_more": bool}; the next page starts after
    the last id seen. first is the caller's own starting_after, if any."""
    cursor = first
    while True:
        page = fetch(cursor)
        data = page["data"]
        yield from data
        if not page.get("has_more") or not data:
            return
        cursor = data[-1]["id"]


def paginate_by_page(fetch: Fetch, first: Optional[str]) -> Iterator[Any]:
    """Meter values (§18): next_page is sent back as page until it is null or empty. A
    next_page equal to the page just read ends the walk too, as in the Go and TypeScript
    clients: asking for it again would return the same page, forever."""
    page: Optional[str] = first
    while True:
        answer = fetch(page)
        yield from answer["data"]
        following = answer.get("next_page")
        if not following or following == page:
            return
        page = following
