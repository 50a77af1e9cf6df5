"""What a call sends: its URL (path parameters escaped, the query encoded) and its body."""

import json
import urllib.parse
from datetime import datetime, timezone
from typing import List, Mapping, Optional, Sequence, Tuple, cast


def url(base_url: str, template: str, path_params: Optional[Mapping[str, str]], query: Optional[Mapping[str, object]]) -> str:
    """base_url + template with {name} replaced by its escaped value, then the query."""
    path = template
    for name, value in (path_params or {}).items():
        if not isinstance(value, str) or value == "":  # pyright: ignore[reportUnnecessaryIsInstance]
            # Sent, "" would address another route (/v1/deals/ is the list).
            raise ValueError(f"{template}: {name} must be a non-empty string, got {value!r}")
        path = path.replace("{" + name + "}", urllib.parse.quote(value, safe=""))
    pairs: List[Tuple[str, str]] = []
    for key, value in (query or {}).items():
        _append(pairs, key, value)
    qs = urllib.parse.urlencode(pairs)
    if not qs:
        return base_url + path
    return base_url + path + ("&" if "?" in path else "?") + qs


def _append(pairs: List[Tuple[str, str]], key: str, value: object) -> None:
    """Query values: None left out, booleans as true/false, times as RFC 3339 in UTC, a
    mapping as a deepObject (filter[k]=v), a list or tuple repeated."""
    if value is None:
        return
    if isinstance(value, bool):
        pairs.append((key, "true" if value else "false"))
    elif isinstance(value, (int, float, str)):
        pairs.append((key, str(value)))
    elif isinstance(value, datetime):
        pairs.append((key, rfc3339(value)))
    elif isinstance(value, Mapping):
        for k, v in cast(Mapping[object, object], value).items():
            _append(pairs, f"{key}[{k}]", v)
    elif isinstance(value, (list, tuple)):
        for v in cast(Sequence[object], value):
            _append(pairs, key, v)
    else:
        raise TypeError(f"query parameter {key}: cannot send a {type(value).__name__}")


def rfc3339(value: datetime) -> str:
    """An aware datetime as RFC 3339 in UTC (2026-11-30T12:00:00Z). A naive one is refused:
    which zone it means is a guess the client will not make."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{value!r} has no time zone: pass an aware datetime (tzinfo=timezone.utc)")
    utc = value.astimezone(timezone.utc)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        text += f".{utc.microsecond:06d}".rstrip("0")
    return text + "Z"


def body(value: object) -> bytes:
    """A request body as compact UTF-8 JSON; datetimes as RFC 3339. NaN and infinities are
    not JSON: refused here, before anything is sent."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_default).encode("utf-8")


def _default(value: object) -> object:
    if isinstance(value, datetime):
        return rfc3339(value)
    raise TypeError(f"a request body cannot hold a {type(value).__name__}")
