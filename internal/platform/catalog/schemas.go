package catalog

import (
	"fmt"
	"slices"
)

// The schemas are built from Go values rather than kept as JSON files: the deal and
// account objects appear in several types, and one builder keeps them identical. Every
// object the API closes is closed here (additionalProperties false, every member
// required: Revops always writes every member, null when empty; event.sequence alone may
// be absent, from events written before it existed, CONTRACT §26), so a receiver's
// validator catches a member added without a catalog change.

type schema = map[string]any

const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// Limits of the objects' fields (internal/domain/accounts and internal/domain/deals enforce them on
// input; catalog_test checks these copies against theirs).
const (
	maxTextLen        = 255  // names, codes, external and opportunity ids
	maxURLLen         = 2048 // signed_contract_url
	maxItems          = 100  // skus, terms
	maxDescriptionLen = 5000 // a term's description
	maxProperties     = 50
	maxPropertyKeyLen = 40
	maxPropertyValLen = 500
)

var dealStatuses = []string{"draft", "pending_approval", "approved", "signed", "active", "void"}

// ID returns the "$id" of a type's schema: a URN, so that the schema is a resource of
// its own wherever it is embedded (the OpenAPI webhooks section) without claiming a URL.
func ID(name string) string { return "urn:revops:event-type:" + name }

// seedType is a type of the seed: its body carries the deal or the account (key) after
// the change, whose status is one of statuses.
func seedType(name, description, key string, statuses []string) EventType {
	object := accountObject(statuses)
	if key == "deal" {
		object = dealObject(statuses)
	}
	return EventType{Name: name, Description: description, Schema: mustJSON(body(name, description, key, object))}
}

// endpointDisabledType is the operational notice of CONTRACT §13: the endpoint's host
// only, never its URL (paths and queries may hold tokens).
func endpointDisabledType(description string) EventType {
	endpoint := closed(schema{
		"id":          uuid("The disabled endpoint."),
		"description": nullable(schema{"type": "string", "maxLength": maxTextLen}),
		"host": schema{
			"type": "string", "minLength": 1, "pattern": `^[^/?#@\s]+$`,
			"description": "The host (and port, if any) of the endpoint's URL: never its path, query or credentials.",
		},
		"disabled_reason": schema{
			"type": "string", "enum": []string{"failing", "gone"},
			"description": "failing: its attempts failed for REVOPS_WEBHOOK_DISABLE_AFTER; gone: its receiver answered 410 Gone.",
		},
		"failing_since": timestamp("The endpoint's first failed attempt since its last success."),
	})
	return EventType{
		Name: EndpointDisabled, Description: description, Operational: true,
		Schema: mustJSON(body(EndpointDisabled, description, "webhook_endpoint", endpoint)),
	}
}

// thresholdCrossedType is the operational notice of CONTRACT §24.
func thresholdCrossedType(description string) EventType {
	number := func(d string) schema {
		return schema{"type": "number", "description": d + " Exact decimal (the meter's figures are kept as exact decimals)."}
	}
	count := func(d string) schema { return schema{"type": "integer", "minimum": 0, "description": d} }
	crossing := closed(schema{
		"account_id": text(maxTextLen),
		"group": schema{
			"type": "object", "maxProperties": 3, "additionalProperties": schema{"type": []any{"string", "null"}},
			"description": "The series' value of each of the meter's group_by keys (null: absent); {} when it does not group.",
		},
		"window_start": timestamp("The window's start (a day, or a calendar month, UTC)."),
		"window_end":   timestamp("The window's end."),
		"value":        number("The series' value in the window when the crossing was found."),
		"as_of":        timestamp("The figures' as_of (CONTRACT §18): every usage accepted before it is counted in value."),
	})
	alert := closed(schema{
		"alert_id":  uuid("The alert (the event's object_id)."),
		"meter":     text(maxTextLen),
		"meter_id":  uuid("The alert's meter."),
		"threshold": number("The alert's threshold."),
		"window":    schema{"type": "string", "enum": []string{"day", "month"}},
		"crossings": schema{"type": "array", "minItems": 0, "maxItems": MaxCrossings, "items": crossing},
		"more":      count("Crossings of the same transaction not listed (past the first 100)."),
		"held_back": count("Firings of the environment recorded but not sent since its last meter-threshold-crossed event (past REVOPS_ALERT_EVENTS_PER_HOUR)."),
	})
	return EventType{
		Name: MeterThresholdCrossed, Description: description, Operational: true,
		Schema: mustJSON(body(MeterThresholdCrossed, description, "meter_alert", alert)),
	}
}

// body is the delivered JSON: {"event":{id,time,type,sequence},"<key>":{…}} (CONTRACT
// §8, §26).
func body(name, description, key string, object schema) schema {
	s := closed(schema{
		"event": optional(closed(schema{
			"id": uuid("The event id, also sent as the webhook-id header: the same on every attempt and replay."),
			"time": schema{
				"type": "string", "pattern": "^[0-9]+$",
				"description": "When the change happened, in Unix seconds, written as a string.",
			},
			"type":     schema{"type": "string", "const": name},
			"sequence": sequence(),
		}), "sequence"),
		key: object,
	})
	s["$schema"], s["$id"], s["title"], s["description"] = draft2020, ID(name), name, description
	return s
}

func dealObject(statuses []string) schema {
	d := closed(schema{
		"id":     uuid(""),
		"object": schema{"type": "string", "const": "deal"},
		"status": schema{"type": "string", "enum": statuses},
		"customer": closed(schema{
			"id":            uuid("The deal's account."),
			"name":          text(maxTextLen),
			"external_id":   nullable(text(maxTextLen)),
			"billing_email": nullable(email()),
		}),
		"contract_activates_date":      nullable(date()),
		"net_price":                    nullable(decimal()),
		"net_price_currency":           nullable(currency()),
		"net_price_precision":          nullable(precision()),
		"original_net_price":           nullable(decimal()),
		"original_net_price_currency":  nullable(currency()),
		"original_net_price_precision": nullable(precision()),
		"opportunity_id":               nullable(text(maxTextLen)),
		"signed_contract_url": nullable(schema{
			"type": "string", "format": "uri", "pattern": "^https://", "maxLength": maxURLLen,
		}),
		"skus": list(closed(schema{
			"id": uuid(""), "code": text(maxTextLen), "name": text(maxTextLen),
			"quantity": decimal(), "unit_price": decimal(),
		})),
		"terms": list(closed(schema{
			"id": uuid(""), "name": text(maxTextLen),
			"description":       nullable(schema{"type": "string", "maxLength": maxDescriptionLen}),
			"start_date":        nullable(date()),
			"end_date":          nullable(date()),
			"billing_frequency": schema{"type": "string", "enum": []string{"monthly", "quarterly", "annual", "one_time"}},
		})),
		"created_at": timestamp(""),
		"updated_at": timestamp(""),
	})
	d["allOf"] = []schema{priceRule("net_price"), priceRule("original_net_price")}
	return d
}

// priceRule: a price that is set has a currency, a precision, and exactly that many
// fractional digits (CONTRACT §7: "19999.00" with precision "2").
func priceRule(p string) schema {
	cases := []schema{{"properties": schema{p: schema{"type": "null"}}}}
	for digits := 0; digits <= 6; digits++ {
		pattern := "^[0-9]+$"
		if digits > 0 {
			pattern = fmt.Sprintf(`\.[0-9]{%d}$`, digits)
		}
		cases = append(cases, schema{"properties": schema{
			p:                schema{"pattern": pattern},
			p + "_currency":  schema{"type": "string"},
			p + "_precision": schema{"const": fmt.Sprint(digits)},
		}})
	}
	return schema{
		"description": p + " is null, or has its currency and exactly " + p + "_precision fractional digits.",
		"anyOf":       cases,
	}
}

func accountObject(statuses []string) schema {
	return closed(schema{
		"id":            uuid(""),
		"object":        schema{"type": "string", "const": "account"},
		"name":          text(maxTextLen),
		"external_id":   nullable(text(maxTextLen)),
		"domain":        nullable(schema{"type": "string", "format": "hostname", "pattern": `^[a-z0-9-]+(\.[a-z0-9-]+)+$`, "maxLength": 253}),
		"billing_email": nullable(email()),
		"status":        schema{"type": "string", "enum": statuses},
		"properties": schema{
			"type": "object", "maxProperties": maxProperties,
			"propertyNames":        schema{"minLength": 1, "maxLength": maxPropertyKeyLen},
			"additionalProperties": schema{"type": []string{"string", "number", "boolean"}, "maxLength": maxPropertyValLen},
		},
		"created_at": timestamp(""),
		"updated_at": timestamp(""),
	})
}

// closed is an object with exactly these members.
func closed(props schema) schema {
	required := make([]string, 0, len(props))
	for k := range props {
		required = append(required, k)
	}
	slices.Sort(required)
	return schema{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// sequence is event.sequence (CONTRACT §26).
func sequence() schema {
	return schema{
		"type": "integer", "minimum": 1,
		"description": "The event's number among its object's events (object_id) in its environment, strictly increasing in the order " +
			"their changes committed; the same on every attempt and replay. Apply a snapshot only if its sequence is higher than the " +
			"last one applied for that object. Numbers may skip for an endpoint (it does not receive every type). Absent from events " +
			"written before the release that added it.",
	}
}

// optional is a closed object whose members named may be absent.
func optional(s schema, members ...string) schema {
	s["required"] = slices.DeleteFunc(slices.Clone(s["required"].([]string)), func(m string) bool { return slices.Contains(members, m) })
	return s
}

// nullable also admits null.
func nullable(s schema) schema {
	out := schema{}
	for k, v := range s {
		out[k] = v
	}
	out["type"] = []any{s["type"], "null"}
	if enum, ok := s["enum"].([]string); ok {
		values := make([]any, 0, len(enum)+1)
		for _, v := range enum {
			values = append(values, v)
		}
		out["enum"] = append(values, nil)
	}
	return out
}

func list(item schema) schema {
	return schema{"type": "array", "maxItems": maxItems, "items": item}
}

func text(max int) schema { return schema{"type": "string", "minLength": 1, "maxLength": max} }

func email() schema { return schema{"type": "string", "format": "email", "maxLength": 254} }

// Formats are only annotations to many validators: the patterns say the same for them.
func uuid(description string) schema {
	s := schema{"type": "string", "format": "uuid", "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"}
	if description != "" {
		s["description"] = description
	}
	return s
}

func date() schema {
	return schema{"type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}
}

func timestamp(description string) schema {
	s := schema{
		"type": "string", "format": "date-time",
		"pattern":     `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$`,
		"description": "RFC 3339, UTC.",
	}
	if description != "" {
		s["description"] = description + " RFC 3339, UTC."
	}
	return s
}

// decimal: no sign, no exponent, no leading zeros, at most 18 integer and 6 fractional digits.
func decimal() schema {
	return schema{"type": "string", "pattern": `^(0|[1-9][0-9]{0,17})(\.[0-9]{1,6})?$`}
}

func currency() schema {
	return schema{"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code, upper case."}
}

func precision() schema {
	return schema{"type": "string", "enum": []string{"0", "1", "2", "3", "4", "5", "6"}}
}
