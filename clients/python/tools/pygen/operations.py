"""One method per operation, named after its operationId in snake_case, and an `…_all`
iterator per paged list: path parameters first (positional, in path order), then the
request body, then the query parameters as keyword-only arguments."""

import json
import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from .document import GenerateError, Operation, Parameter, ref_name, resolve, schemas
from .models import Models
from .naming import RESERVED_ARGUMENTS, argument, camel, docstring, snake

PATH_PARAM = re.compile(r"\{([^}]+)\}")


@dataclass
class Query:
    name: str  # as the API spells it
    arg: str  # as the method takes it
    type: str
    required: bool


@dataclass
class Method:
    op: Operation
    name: str
    path_args: List[Tuple[str, str]] = field(default_factory=lambda: [])  # (name, arg)
    query: List[Query] = field(default_factory=lambda: [])
    body: Optional[str] = None
    body_required: bool = False
    result: str = "Any"
    list_item: Optional[str] = None  # the item type of a starting_after list
    page_item: Optional[str] = None  # the item type of a page/next_page list


def method(models: Models, op: Operation) -> Method:
    m = Method(op=op, name=snake(op.operation_id))
    for name in PATH_PARAM.findall(op.path):
        m.path_args.append((name, argument(name)))
    for p in op.parameters:
        if p.location == "query":
            m.query.append(_query(models, op, p))
    args = [a for _, a in m.path_args] + [q.arg for q in m.query]
    clash = sorted({a for a in args if a in RESERVED_ARGUMENTS or args.count(a) > 1})
    if clash:
        raise GenerateError(f"{op.operation_id}: argument names {clash} clash with each other or with {RESERVED_ARGUMENTS}")
    if op.body is not None and ref_name(op.body) != "EmptyObject":
        # An action's body is the empty object: the method takes none and sends none.
        m.body = models.py_type(op.body, camel(op.operation_id) + "Body", op.operation_id + " body")
        m.body_required = op.body_required
    m.result = models.py_type(op.result, camel(op.operation_id) + "Result", op.operation_id + " result")
    _paging(models, m)
    return m


def _query(models: Models, op: Operation, p: Parameter) -> Query:
    """A query parameter's Python type: a time takes a datetime too (sent as RFC 3339, UTC)
    and, where the API reads Unix seconds, an int; a deepObject map (filter[k]=v) a Mapping."""
    s = resolve(models.doc, p.schema)
    where = f"{op.operation_id}?{p.name}"
    branches = list(s.get("oneOf", [])) + list(s.get("anyOf", []))
    types = s.get("type")
    if branches and any(b.get("format") == "date-time" for b in branches):
        t = "Union[datetime, int, str]"
    elif types == "string" and s.get("format") == "date-time":
        t = "Union[datetime, str]"
    elif types == "string" and s.get("enum"):
        t = models.enum(s, camel(op.operation_id) + "Params" + camel(p.name), where)
    elif types in ("string", "integer", "number", "boolean"):
        t = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}[types]
    elif types == "object" and isinstance(s.get("additionalProperties"), dict):
        t = "Mapping[str, str]"
    else:
        raise GenerateError(f"{where}: no query encoding for the schema {s}")
    return Query(name=p.name, arg=argument(p.name), type=t, required=p.required)


def _paging(models: Models, m: Method) -> None:
    """Recognises the two list shapes: {data, has_more} paged by starting_after (the id of
    the last item, CONTRACT §9), and {data, next_page} paged by page (meter values, §18)."""
    names = {q.name for q in m.query}
    res = resolve(models.doc, m.op.result or {})
    data = res.get("properties", {}).get("data", {})
    items = data.get("items")
    if not items or ref_name(items) is None:
        return
    item = models.py_type(items, "", m.name + " item")
    item_props = schemas(models.doc)[ref_name(items) or ""].get("properties", {})
    if "starting_after" in names and "has_more" in res.get("properties", {}) and "id" in item_props:
        m.list_item = item
    elif "page" in names and "next_page" in res.get("properties", {}):
        m.page_item = item


def annotations(m: Method) -> str:
    """The types a method's signature names, for the imports."""
    return " ".join([m.body or "", m.result, m.list_item or "", m.page_item or ""] + [q.type for q in m.query])


def render(m: Method) -> str:
    op = m.op
    params = ["self"] + [f"{a}: str" for _, a in m.path_args]
    if m.body is not None:
        params.append(f"body: {m.body}" if m.body_required else f"body: Optional[{m.body}] = None")
    params.append("*")
    params += [f"{q.arg}: {q.type}" for q in m.query if q.required]
    params += [f"{q.arg}: Optional[{q.type}] = None" for q in m.query if not q.required]
    if op.method != "GET":
        params.append("idempotency_key: Optional[str] = None")
    params.append("request_options: Optional[RequestOptions] = None")
    call = [json.dumps(op.method), json.dumps(op.path)]
    if m.path_args:
        call.append("path_params={" + ", ".join(f"{json.dumps(n)}: {a}" for n, a in m.path_args) + "}")
    if m.query:
        call.append("query={\n" + "".join(f"                {json.dumps(q.name)}: {q.arg},\n" for q in m.query) + "            }")
    if m.body is not None:
        call.append("body=body")
    if op.method != "GET":
        call.append("idempotency_key=idempotency_key")
    call.append("options=request_options")
    lines = [op.summary.strip()] if op.summary else []
    if op.description and op.description != op.summary:
        lines += ([""] if lines else []) + op.description.strip().split("\n")
    lines += ([""] if lines else []) + [f"``{op.method} {op.path}``"]
    out = _signature(m.name, params, m.result) + docstring(lines, "        ")
    out += "        return self._request(\n" + "".join(f"            {c},\n" for c in call) + "        )\n"
    return out + _iterator(m)


def _signature(name: str, params: List[str], result: str) -> str:
    return f"    def {name}(\n" + "".join(f"        {p},\n" for p in params) + f"    ) -> {result}:\n"


def _iterator(m: Method) -> str:
    """name_all: every item of a paged list, fetching each next page as the loop reaches it."""
    item = m.list_item or m.page_item
    if item is None:
        return ""
    cursor = "starting_after" if m.list_item else "page"
    params = ["self"] + [f"{a}: str" for _, a in m.path_args] + ["*"]
    params += [f"{q.arg}: {q.type}" for q in m.query if q.required]
    params += [f"{q.arg}: Optional[{q.type}] = None" for q in m.query if not q.required]
    params.append("request_options: Optional[RequestOptions] = None")
    args = [a for _, a in m.path_args] + [f"{q.arg}={'cursor' if q.name == cursor else q.arg}" for q in m.query]
    args.append("request_options=request_options")
    call = "".join(f"                {a},\n" for a in args)
    how = ("the id of the previous page's last item as starting_after" if m.list_item
           else "the previous answer's next_page as page")
    walk = "paginate_by_cursor" if m.list_item else "paginate_by_page"
    first = argument(cursor)
    doc = docstring([f"Every item of :meth:`{m.name}`, page after page ({how}), fetched as the loop reaches it."], "        ")
    return ("\n" + _signature(m.name + "_all", params, f"Iterator[{item}]") + doc +
            f"        return {walk}(\n"
            f"            lambda cursor: self.{m.name}(\n{call}            ),\n"
            f"            {first},\n"
            "        )\n")
