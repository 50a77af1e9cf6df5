#!/usr/bin/env python3
"""Generates the Python client's typed modules from the Revops OpenAPI document.

Usage: python tools/generate.py [path-or-URL] [--check]

The source defaults to the repository's api/openapi/openapi.json. A URL is fetched with
REVOPS_API_KEY as bearer token (GET /v1/openapi.json needs a key). --check writes nothing
and exits 1, naming the stale files, when regenerating would change a committed file.
"""

import os
import sys
from pathlib import Path
from typing import List

from pygen import GenerateError, generate, load

PACKAGE = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = PACKAGE.parent.parent / "api" / "openapi" / "openapi.json"


def main(argv: List[str]) -> int:
    check = "--check" in argv
    sources = [a for a in argv if not a.startswith("--")]
    source = sources[0] if sources else str(DEFAULT_SOURCE)
    try:
        files = generate(load(source, os.environ.get("REVOPS_API_KEY")))
    except (GenerateError, OSError, ValueError) as err:
        print(f"generate: {err}", file=sys.stderr)
        return 1
    if check:
        stale = [name for name, text in files.items() if _read(PACKAGE / name) != text]
        if stale:
            print(f"The generated client is out of date with {source}:\n  " + "\n  ".join(stale) +
                  "\nRun `python tools/generate.py` in clients/python and commit the result.", file=sys.stderr)
            return 1
        print(f"{', '.join(files)} match {source}")
        return 0
    for name, text in files.items():
        with open(PACKAGE / name, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    print(f"wrote {', '.join(files)} from {source}")
    return 0


def _read(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except FileNotFoundError:
        return ""


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
