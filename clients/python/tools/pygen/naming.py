"""Python names for the document's schemas, enums, operations and parameters.

Two small tables fix the names that would collide or read badly, as the Go generator's
naming.go does; everything else is derived, so a new schema or route needs no entry.
"""

import keyword
import re
import textwrap
from typing import Dict, List

# Component schemas whose class takes another name. Keys are the document's names.
CLASS_NAMES: Dict[str, str] = {
    # The hand-written RevopsError reads the error envelope; the schema keeps a plain name.
    "Error": "ErrorEnvelope",
    "ErrorEnvelopeError": "ErrorBody",
    # EventType is the enum every user needs (webhooks, filters); the catalog object of
    # GET /v1/event_types takes another name, as in the Go client.
    "EventType": "EventTypeInfo",
    "DealCreateCustomer": "DealCustomerRef",
    "DealUpdateCustomer": "DealCustomerRef",
}

# Enums shared by several fields, or whose derived name reads badly. An enum's derived
# name is Parent+Property where it first appears (component schemas before operations,
# both sorted; array items add "Item"), as in the Go client, so both name them alike.
ENUM_NAMES: Dict[str, str] = {
    "ErrorBodyType": "ErrorType",
    "EventEnvironment": "Environment",
    "DeliveryStatus": "EventStatus",
    "DealNetPricePrecision": "Precision",
    "DeliveryAttemptMethod": "WebhookMethod",
    "EndpointEventTypesItem": "EndpointEventType",
    "MeterValuesWindow": "Resolution",
    "TermBillingFrequency": "BillingFrequency",
    "UsageEventMode": "UsageMode",
    "WhoAmIType": "KeyType",
    "WebhookTestRequestType": "TestEventType",
    # Why an endpoint-disabled webhook's endpoint was disabled (no manual: that sends none).
    "EndpointDisabledWebhookWebhookEndpointDisabledReason": "AutoDisabledReason",
}

# Methods whose snake_case name would split an acronym.
METHOD_NAMES: Dict[str, str] = {
    "getOpenAPI": "get_openapi",
}

# Keyword arguments every generated method may take: a query parameter of the same name
# would be ambiguous, so the generator refuses it.
RESERVED_ARGUMENTS = ("self", "body", "idempotency_key", "request_options")


# Lines of generated comments and docstrings are wrapped to this width.
WIDTH = 92


def comment(text: str, indent: str) -> str:
    """A description as # comment lines, wrapped."""
    out: List[str] = []
    for line in text.strip().split("\n"):
        for part in textwrap.wrap(line.strip(), WIDTH - len(indent) - 2, break_long_words=False, break_on_hyphens=False):
            out.append(f"{indent}# {part}\n")
    return "".join(out)


def class_name(derived: str) -> str:
    return CLASS_NAMES.get(derived, derived)


def enum_name(derived: str) -> str:
    return ENUM_NAMES.get(derived, derived)


def words(text: str) -> List[str]:
    """Splits on anything but letters and digits, and before an upper-case letter that
    follows a lower-case one or a digit ("getWebhookEndpointById" → get Webhook Endpoint By Id)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def camel(text: str) -> str:
    """snake_case, kebab-case or camelCase text as a class name: deal-signed → DealSigned."""
    return "".join(w[:1].upper() + w[1:] for w in words(text))


def snake(text: str) -> str:
    """An operationId as a method name: listDealsAll → list_deals_all."""
    if text in METHOD_NAMES:
        return METHOD_NAMES[text]
    return "_".join(w.lower() for w in words(text))


def argument(name: str) -> str:
    """A parameter's name as a Python argument: a keyword gets a trailing underscore
    (from → from_, PEP 8's spelling), anything else not allowed in a name becomes _."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if name[:1].isdigit():
        name = "_" + name
    # Not soft keywords (type, match): they are valid names, and a set that grows with
    # Python's version would make the output depend on the generator's interpreter.
    if keyword.iskeyword(name):
        name += "_"
    return name


def docstring(lines: List[str], indent: str) -> str:
    """Lines as a docstring, wrapped: backslashes and triple quotes escaped, the first line
    a sentence (PEP 257)."""
    if lines and lines[0] and lines[0][-1] not in ".!?`":
        lines = [lines[0] + "."] + lines[1:]
    wrapped: List[str] = []
    for line in lines:
        wrapped += textwrap.wrap(line, WIDTH - len(indent), break_long_words=False, break_on_hyphens=False) or [""]
    text = "\n".join(line.rstrip() for line in wrapped).strip("\n")
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text += " "
    body = "\n".join((indent + line) if line else "" for line in text.split("\n"))
    if "\n" not in text:
        return f'{indent}"""{text}"""\n'
    return f'{indent}"""{body.lstrip()}\n{indent}"""\n'
