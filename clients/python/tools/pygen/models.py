"""Python types of the document's schemas: a TypedDict per object, a Literal alias per
enum, and the webhook payloads. Answers stay the plain dicts json.loads gives (nothing to
convert, and a field a newer server adds passes through); the types tell a checker and an
editor what each holds.
"""

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, cast

from .document import GenerateError, Schema, ref_name, resolve, schemas
from .naming import argument, camel, class_name, comment, docstring, enum_name


@dataclass
class Enum:
    name: str
    values: List[str]  # in the document's order
    uses: List[str] = field(default_factory=lambda: [])


class Models:
    """Collects the declarations a document needs, by name; two different declarations
    of one name are an error (add a name to naming.CLASS_NAMES or ENUM_NAMES)."""

    def __init__(self, doc: Dict[str, Any]) -> None:
        self.doc = doc
        self.classes: Dict[str, str] = {}  # TypedDicts, by name
        self.aliases: Dict[str, str] = {}  # other named types (dict aliases, unions)
        self.enums: Dict[str, Enum] = {}  # by their sorted values

    def declare(self, table: Dict[str, str], name: str, source: str) -> None:
        others = self.classes if table is self.aliases else self.aliases
        if name in others or (name in table and table[name] != source):
            raise GenerateError(f"two different types are named {name}: add a name to CLASS_NAMES or ENUM_NAMES in tools/pygen/naming.py")
        table[name] = source

    def component(self, name: str) -> None:
        """Declares a component schema: its TypedDict, or an alias when it is not an object
        with properties (EndpointFilter = dict[str, Any])."""
        py = class_name(name)
        s = schemas(self.doc)[name]
        t = self.py_type(s, py, name)
        if t != py and not _nullable_object(s):
            self.declare(self.aliases, py, _comment(s.get("description", ""), "") + f"{py} = {t}\n")

    def py_type(self, s: Optional[Schema], derived: str, use: str) -> str:
        """The annotation of s, declaring the named types it needs. derived is the name an
        inline object or enum gets; use says where s is, for messages."""
        if not s:
            return "Any"
        name = ref_name(s)
        if name is not None:
            target = resolve(self.doc, s)  # fails on an unknown component
            if _nullable_object(target):
                # An object or null (an endpoint's rate_limit): its TypedDict, optional
                # wherever it is used.
                return union([class_name(name), "None"])
            return class_name(name)
        branches = list(s.get("oneOf", [])) + list(s.get("anyOf", []))
        if branches and not s.get("properties"):
            # Every union of the document is "RFC 3339 or Unix seconds (or null)": str,
            # int, None. Another union is written out the same way, branch by branch.
            return union([self.py_type(b, f"{derived}Option{i + 1}", f"{use}|{i}") for i, b in enumerate(branches)])
        types = s.get("type", [])
        types = [types] if isinstance(types, str) else list(types)
        nullable = "null" in types or None in s.get("enum", [])
        if "const" in s:
            return union([f"Literal[{_literal(s['const'])}]"] + (["None"] if nullable else []))
        non_null = [t for t in types if t != "null"]
        if not non_null and "enum" in s:
            non_null = ["string"]
        if not non_null:
            return "None" if nullable else "Any"
        parts = [self._single(s, t, derived, use, len(non_null) == 1) for t in non_null]
        return union(parts + (["None"] if nullable else []))

    def _single(self, s: Schema, t: str, derived: str, use: str, only: bool) -> str:
        if t == "string":
            if only and [v for v in s.get("enum", []) if v is not None]:
                return self.enum(s, derived, use)
            return "str"
        if t == "integer":
            return "int"
        if t == "number":
            return "float"
        if t == "boolean":
            return "bool"
        if t == "array":
            if not only:
                return "list[Any]"
            return f"list[{self.py_type(s.get('items'), derived + 'Item', use + '[]')}]"
        if t == "object":
            if only and s.get("properties"):
                self.typed_dict(class_name(derived), s, use)
                return class_name(derived)
            extra = s.get("additionalProperties")
            if only and isinstance(extra, dict) and extra:
                return f"dict[str, {self.py_type(cast(Schema, extra), derived + 'Value', use + '{}')}]"
            return "dict[str, Any]"
        raise GenerateError(f"{use}: unsupported type {t!r}")

    def enum(self, s: Schema, derived: str, use: str) -> str:
        values: List[Any] = [v for v in s["enum"] if v is not None]
        if not all(isinstance(v, str) for v in values):
            raise GenerateError(f"{use}: an enum of strings and other values")
        key = "\x00".join(sorted(values))
        e = self.enums.get(key)
        if e is None:
            e = self.enums[key] = Enum(enum_name(derived), values)
        e.uses.append(use)
        return e.name

    def typed_dict(self, name: str, s: Schema, use: str, final: bool = False) -> None:
        """Declares a TypedDict for an object schema: its required properties required,
        the others optional. A name a class body cannot hold (a keyword such as from)
        uses the functional form."""
        required = set(s.get("required", []))
        fields: List[tuple[str, str, str, bool]] = []  # key, type, comment, required
        for key in sorted(s["properties"]):
            ps = s["properties"][key]
            t = self.py_type(ps, name + camel(key), f"{use}.{key}")
            note = ps.get("description", "")
            if "const" in ps:
                note = f"Always {json.dumps(ps['const'])}. {note}".strip()
            fields.append((key, t, note, key in required))
        self.declare(self.classes, name, _render_typed_dict(name, s.get("description", ""), fields, final))

    def webhooks(self) -> None:
        """A final TypedDict per webhook of the document's webhooks section (its event
        header's type a Literal of its name), the WebhookEventType names and the
        WebhookEvent union. Final, so that `"deal" in event` narrows the union. A member
        whose properties are a component's (the webhook's deal is a Deal) takes that type;
        the allOf/anyOf tying prices to their precision only validate."""
        names = sorted(self.doc.get("webhooks", {}))
        if not names:
            return
        payloads: List[str] = []
        for hook in names:
            op = self.doc["webhooks"][hook].get("post", {})
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if not body or not body.get("properties"):
                raise GenerateError(f"webhook {hook} has no JSON object body")
            name = camel(hook) + "Webhook"
            members = dict(body)
            members["properties"] = {k: self._member(v) for k, v in body["properties"].items()}
            self.typed_dict(name, members, f"webhook {hook}", final=True)
            payloads.append(name)
        literals = ", ".join(_literal(n) for n in names)
        self.declare(self.aliases, "WebhookEventType", "# The event types Revops delivers (the document's webhooks section).\n"
                     f"WebhookEventType = Literal[{literals}]\n")
        self.declare(self.aliases, "WebhookEvent", "# A delivered webhook body. Narrow it by a member: `if \"deal\" in event: event[\"deal\"]`.\n"
                     "WebhookEvent = Union[\n" + "".join(f"    {p},\n" for p in payloads) + "]\n")

    def _member(self, s: Schema) -> Schema:
        want = sorted(s.get("properties", {}))
        if not want:
            return s
        for component in sorted(schemas(self.doc)):
            c = schemas(self.doc)[component]
            if sorted(c.get("properties", {})) == want and c.get("type") == "object":
                return {"$ref": "#/components/schemas/" + component}
        return s

    def names(self) -> Set[str]:
        """Every name the models module declares."""
        return set(self.classes) | set(self.aliases) | {e.name for e in self.enums.values()}

    def render(self) -> str:
        out: List[str] = []
        for key in sorted(self.enums, key=lambda k: self.enums[k].name):
            e = self.enums[key]
            values = ", ".join(_literal(v) for v in e.values)
            out.append(comment(f"Used by {', '.join(e.uses)}.", "") + f"{e.name} = Literal[{values}]\n")
        out.extend(self.classes[name] for name in sorted(self.classes))
        out.extend(self.aliases[name] for name in sorted(self.aliases))
        return "\n\n".join(out)


def union(parts: List[str]) -> str:
    flat: List[str] = []
    for p in parts:
        inner = p
        if p.startswith("Union["):
            inner = p[len("Union["):-1]
        elif p.startswith("Optional["):
            inner = p[len("Optional["):-1] + ", None"
        for q in _split_top(inner):
            if q not in flat:
                flat.append(q)
    if "None" in flat:
        flat.remove("None")
        flat.append("None")
    if "Any" in flat:
        return "Any"
    if len(flat) == 1:
        return flat[0]
    if len(flat) == 2 and flat[1] == "None":
        return f"Optional[{flat[0]}]"
    return "Union[" + ", ".join(flat) + "]"


def _split_top(text: str) -> List[str]:
    """Splits "a, list[b, c], d" at its top-level commas."""
    parts: List[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (str, int)):
        return json.dumps(value)
    raise GenerateError(f"a const or enum value {value!r} that a Literal cannot hold")


def _comment(text: str, indent: str) -> str:
    return comment(text, indent)


def _render_typed_dict(name: str, description: str, fields: List[tuple[str, str, str, bool]], final: bool) -> str:
    doc = docstring([description or f"{name}, as the API sends or takes it (the document describes it no further)."], "    ")
    decorator = "@final\n" if final else ""
    required = [f for f in fields if f[3]]
    optional = [f for f in fields if not f[3]]
    if any(not k.isidentifier() or argument(k) != k for k, _, _, _ in fields):
        # Functional form: the keys are strings, the types forward references.
        def functional(n: str, fs: List[tuple[str, str, str, bool]], total: bool) -> str:
            items = "".join(f"{_comment(note, '    ')}    {json.dumps(k)}: {json.dumps(t)},\n" for k, t, note, _ in fs)
            return f"{n} = TypedDict(\n    {json.dumps(n)},\n    {{\n{items}    }},\n    total={total},\n)\n"
        base_req, base_opt = f"_{name}Required", f"_{name}Optional"
        return (functional(base_req, required, True) + "\n\n" + functional(base_opt, optional, False) +
                f"\n\n{decorator}class {name}({base_req}, {base_opt}):\n{doc}")

    def body(fs: List[tuple[str, str, str, bool]]) -> str:
        return "".join(f"{_comment(note, '    ')}    {k}: {t}\n" for k, t, note, _ in fs)

    if not optional or not required:
        total = "" if optional == [] else ", total=False"
        fs = fields
        return f"{decorator}class {name}(TypedDict{total}):\n{doc}" + ("\n" + body(fs) if fs else "")
    base = f"_{name}Required"
    return (f"class {base}(TypedDict):\n{docstring([f'The required keys of {name}.'], '    ')}\n{body(required)}\n\n"
            f"{decorator}class {name}({base}, total=False):\n{doc}\n{body(optional)}")


def _nullable_object(s: Schema) -> bool:
    """Whether s is an object with properties that may also be null."""
    types = s.get("type", [])
    return isinstance(types, list) and "null" in types and "object" in types and bool(s.get("properties"))
