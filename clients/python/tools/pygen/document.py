"""The parts of an OpenAPI 3.1 document the generator reads: paths, components and the
webhooks section. Anything else (servers, tags, security, examples) does not change the
client and is ignored, so the served document (whose servers differ) gives the same output.
"""

import json
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, cast

Schema = Dict[str, Any]

METHODS = ("get", "put", "post", "patch", "delete")
SCHEMA_REF = "#/components/schemas/"
PARAMETER_REF = "#/components/parameters/"


class GenerateError(Exception):
    """The document has a shape the generator cannot map: it says where, rather than
    emitting something wrong."""


def load(source: str, api_key: Optional[str]) -> Dict[str, Any]:
    """Reads the document from a file, or from an http(s) URL with the API key
    (GET /v1/openapi.json needs one; a public key is enough)."""
    if source.startswith(("http://", "https://")):
        request = urllib.request.Request(source, headers={"Accept": "application/json"})
        if api_key:
            request.add_header("Authorization", "Bearer " + api_key)
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read().decode("utf-8")
    else:
        with open(source, encoding="utf-8") as f:
            text = f.read()
    doc: Any = json.loads(text)
    if not isinstance(doc, dict):
        raise GenerateError(f"{source}: not a JSON object")
    parsed = cast(Dict[str, Any], doc)
    if not parsed.get("paths") or not parsed.get("components", {}).get("schemas"):
        raise GenerateError(f"{source}: not an OpenAPI document with paths and component schemas")
    return parsed


@dataclass
class Parameter:
    name: str
    location: str  # "path", "query" or "header"
    required: bool
    schema: Schema
    description: str


@dataclass
class Operation:
    path: str
    method: str  # upper case
    operation_id: str
    summary: str
    description: str
    parameters: List[Parameter] = field(default_factory=lambda: [])
    body: Optional[Schema] = None
    body_required: bool = False
    result: Optional[Schema] = None


def schemas(doc: Dict[str, Any]) -> Dict[str, Schema]:
    return doc["components"]["schemas"]


def ref_name(schema: Schema) -> Optional[str]:
    """The component a {"$ref": "#/components/schemas/X"} names, or None."""
    ref = schema.get("$ref")
    if ref is None:
        return None
    if not isinstance(ref, str) or not ref.startswith(SCHEMA_REF):
        raise GenerateError(f"unsupported $ref {ref!r}: only {SCHEMA_REF}… is read")
    return ref[len(SCHEMA_REF):]


def resolve(doc: Dict[str, Any], schema: Schema) -> Schema:
    """The schema a $ref names, followed to the end; schema itself otherwise."""
    seen: List[str] = []
    while True:
        name = ref_name(schema)
        if name is None:
            return schema
        if name in seen or name not in schemas(doc):
            raise GenerateError(f"unknown or circular $ref {SCHEMA_REF}{name}")
        seen.append(name)
        schema = schemas(doc)[name]


def operations(doc: Dict[str, Any]) -> List[Operation]:
    """Every operation, sorted by path and method so that the output never depends on the
    order of the document's keys."""
    out: List[Operation] = []
    for path in sorted(doc["paths"]):
        item = doc["paths"][path]
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            where = f"{method.upper()} {path}"
            if not op.get("operationId"):
                raise GenerateError(f"{where} has no operationId")
            o = Operation(
                path=path,
                method=method.upper(),
                operation_id=op["operationId"],
                summary=op.get("summary", ""),
                description=op.get("description", ""),
                parameters=_parameters(doc, item.get("parameters", []), op.get("parameters", []), where),
            )
            _body(o, op, where)
            _result(o, op, where)
            out.append(o)
    return out


def _parameters(doc: Dict[str, Any], item_params: List[Any], op_params: List[Any], where: str) -> List[Parameter]:
    """The path item's parameters merged with the operation's (the operation's win by name
    and location), $refs into components.parameters followed."""
    merged: Dict[str, Parameter] = {}
    for raw in list(item_params) + list(op_params):
        if "$ref" in raw:
            ref = raw["$ref"]
            name = ref[len(PARAMETER_REF):] if ref.startswith(PARAMETER_REF) else None
            raw = doc["components"].get("parameters", {}).get(name)
            if raw is None:
                raise GenerateError(f"{where}: unknown parameter {ref}")
        p = Parameter(
            name=raw["name"],
            location=raw["in"],
            required=bool(raw.get("required", False)),
            schema=raw.get("schema", {}),
            description=raw.get("description", "") or raw.get("schema", {}).get("description", ""),
        )
        merged[p.location + ":" + p.name] = p
    return list(merged.values())


def _body(o: Operation, op: Dict[str, Any], where: str) -> None:
    body = op.get("requestBody")
    if body is None:
        return
    content = body.get("content", {})
    if "application/json" not in content:
        raise GenerateError(f"{where}: a request body that is not application/json")
    o.body = content["application/json"].get("schema", {})
    o.body_required = bool(body.get("required", False))


def _result(o: Operation, op: Dict[str, Any], where: str) -> None:
    for code in sorted(op.get("responses", {})):
        if code.startswith("2"):
            content = op["responses"][code].get("content", {})
            if "application/json" in content:
                o.result = content["application/json"].get("schema", {})
                return
    raise GenerateError(f"{where}: no 2xx JSON response")
