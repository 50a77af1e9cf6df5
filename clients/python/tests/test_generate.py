"""The generated modules must be what tools/generate.py makes of the OpenAPI document —
the repository's and, against a server, the one it serves — and the generator must take
in what the document adds."""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any, Dict

from .support import DOCUMENT, PACKAGE, live_env, skip_unless_live

sys.path.insert(0, str(PACKAGE / "tools"))
import pygen  # noqa: E402


def generate(*args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, str(PACKAGE / "tools" / "generate.py"), *args],
                          cwd=PACKAGE, capture_output=True, text=True, env=os.environ.copy())


def document() -> Dict[str, Any]:
    with open(DOCUMENT, encoding="utf-8") as f:
        return json.load(f)


class Drift(unittest.TestCase):
    def test_the_package_matches_the_repository_s_document(self) -> None:
        run = generate("--check")
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_a_route_added_to_the_document_fails_the_check(self) -> None:
        doc = document()
        doc["paths"]["/v1/ping"] = {"get": {"operationId": "ping", "summary": "Ping.",
                                            "responses": {"200": {"description": "pong", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmptyObject"}}}}}}}
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "openapi.json"
            path.write_text(json.dumps(doc), encoding="utf-8")
            run = generate(str(path), "--check")
        self.assertEqual(run.returncode, 1, run.stdout)
        self.assertIn("out of date", run.stderr)
        self.assertIn("src/revops/_operations.py", run.stderr)
        self.assertIn("python tools/generate.py", run.stderr)

    @skip_unless_live
    def test_the_package_matches_the_document_the_server_serves(self) -> None:
        env = live_env() or {}
        run = generate(env["REVOPS_BASE_URL"].rstrip("/") + "/v1/openapi.json", "--check")
        self.assertEqual(run.returncode, 0, run.stderr)


class Generator(unittest.TestCase):
    def test_the_output_is_deterministic_and_ignores_key_order(self) -> None:
        doc = document()
        shuffled = json.loads(json.dumps(doc, sort_keys=True))
        shuffled["paths"] = dict(reversed(list(shuffled["paths"].items())))
        self.assertEqual(pygen.generate(doc), pygen.generate(shuffled))

    def test_event_sequence_is_typed(self) -> None:
        # CONTRACT §26: the event object and its deliveries carry "sequence" (null for an
        # event written before the release that added it), a delivery "waiting_for", and
        # every payload's event header "sequence", a key absent from older events'.
        source = pygen.generate(document())[pygen.MODELS]
        event = source.split("class Event(", 1)[1].split("\nclass ", 1)[0]
        self.assertIn("    sequence: Optional[int]\n", event)
        delivery = source.split("class Delivery(", 1)[1].split("\nclass ", 1)[0]
        self.assertIn("    sequence: Optional[int]\n", delivery)
        self.assertIn("    waiting_for: Optional[str]\n", delivery)
        namespace: Dict[str, Any] = {}
        exec(compile(source, "models.py", "exec"), namespace)
        header = namespace["DealSignedWebhookEvent"]
        self.assertIn("sequence", header.__optional_keys__)
        self.assertIn("    sequence: int\n", source.split("class DealSignedWebhookEvent(", 1)[1].split("\nclass ", 1)[0])
        self.assertEqual(header.__required_keys__, frozenset({"id", "time", "type"}))

    def test_names_a_class_body_cannot_hold_use_the_functional_form(self) -> None:
        doc = copy.deepcopy(document())
        doc["components"]["schemas"]["Window"] = {
            "type": "object", "required": ["from"],
            "properties": {"from": {"type": "string"}, "to": {"type": ["string", "null"]}, "x-y": {"type": "integer"}}}
        source = pygen.generate(doc)[pygen.MODELS]
        namespace: Dict[str, Any] = {}
        exec(compile(source, "models.py", "exec"), namespace)
        window = namespace["Window"]
        self.assertEqual(window.__required_keys__, frozenset({"from"}))
        self.assertEqual(window.__optional_keys__, frozenset({"to", "x-y"}))

    def test_a_shape_it_cannot_map_is_refused_with_where(self) -> None:
        doc = copy.deepcopy(document())
        doc["paths"]["/v1/deals"]["get"]["parameters"].append({"name": "ids", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}})
        with self.assertRaisesRegex(pygen.GenerateError, r"listDeals\?ids"):
            pygen.generate(doc)
        doc = copy.deepcopy(document())
        doc["paths"]["/v1/deals"]["get"]["parameters"].append({"name": "body", "in": "query", "schema": {"type": "string"}})
        with self.assertRaisesRegex(pygen.GenerateError, "clash"):
            pygen.generate(doc)


if __name__ == "__main__":
    unittest.main()
