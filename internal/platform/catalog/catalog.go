// Package catalog is the one list of webhook event types (CONTRACT §13): the seven types
// of the seed and the operational ones, each with a description and the JSON Schema
// (draft 2020-12) of the body Revops delivers for it. GET /v1/event_types serves it, the
// OpenAPI document's webhooks section repeats its schemas, and endpoint subscriptions
// are matched against it.
package catalog

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Wildcard is the subscription to every type of the seed and every non-operational type
// added later; it never matches an operational type.
const Wildcard = "*"

// EndpointDisabled is the operational event sent when an endpoint is disabled
// automatically (CONTRACT §13).
const EndpointDisabled = "endpoint-disabled"

// MeterThresholdCrossed is the operational event sent when series of a meter reach one
// of its usage alerts' threshold (CONTRACT §24).
const MeterThresholdCrossed = "meter-threshold-crossed"

// MaxCrossings bounds the crossings one meter-threshold-crossed event lists.
const MaxCrossings = 100

// ThresholdCrossed is the "meter_alert" member of a meter-threshold-crossed body: the
// crossings one transaction of the alert's meter found, at most MaxCrossings listed and
// the rest counted in More; HeldBack counts the environment's firings recorded but not
// sent (past REVOPS_ALERT_EVENTS_PER_HOUR) since its last event.
type ThresholdCrossed struct {
	AlertID   string      `json:"alert_id"`
	Meter     string      `json:"meter"`
	MeterID   string      `json:"meter_id"`
	Threshold json.Number `json:"threshold"`
	Window    string      `json:"window"`
	Crossings []Crossing  `json:"crossings"`
	More      int         `json:"more"`
	HeldBack  int         `json:"held_back"`
}

// Crossing is one series' crossing of a threshold in one window.
type Crossing struct {
	AccountID   string             `json:"account_id"`
	Group       map[string]*string `json:"group"`
	WindowStart string             `json:"window_start"` // RFC 3339, UTC
	WindowEnd   string             `json:"window_end"`
	Value       json.Number        `json:"value"`
	AsOf        string             `json:"as_of"`
}

// EventType is one entry of the catalog.
type EventType struct {
	Name        string
	Description string
	// Operational types describe Revops itself rather than the seed's objects: receivers
	// built for the seed never see their shape, so "*" does not match them.
	Operational bool
	// Schema is the JSON Schema (draft 2020-12) of the delivered body.
	Schema json.RawMessage
}

// DisabledEndpoint is the "webhook_endpoint" member of an endpoint-disabled body: the
// URL's host only, never the URL (paths and queries may hold tokens).
type DisabledEndpoint struct {
	ID             string  `json:"id"`
	Description    *string `json:"description"`
	Host           string  `json:"host"`            // url.URL.Host: host and port, if any
	DisabledReason string  `json:"disabled_reason"` // "failing" or "gone"
	FailingSince   string  `json:"failing_since"`   // RFC 3339, UTC
}

// types is the catalog in the order it is shown: the seed's types, then the operational ones.
var types = append([]EventType{
	seedType("deal-created", "A deal was created (sent once per deal, ever).", "deal", []string{"draft", "pending_approval"}),
	seedType("deal-updated", "A deal changed: an edit, or any move of its status (submit, approve, sign, activate, void).", "deal", dealStatuses),
	seedType("deal-signed", "All parties signed the deal (sent once per deal, ever).", "deal", []string{"signed"}),
	seedType("deal-active", "A signed deal was activated for billing.", "deal", []string{"active"}),
	seedType("account-created", "An account was created.", "account", []string{"draft"}),
	seedType("account-updated", "An account's fields, properties or status changed (activation included: deprovisioning sends account-deleted).", "account", []string{"draft", "active"}),
	seedType("account-deleted", "An account was deprovisioned (a soft delete: the object stays readable).", "account", []string{"deprovisioned"}),
	endpointDisabledType("Operational: a webhook endpoint was disabled because its attempts kept failing " +
		"(REVOPS_WEBHOOK_DISABLE_AFTER), or at once when its receiver answered 410 Gone. Sent only to endpoints that list it: \"*\" does not match it."),
	thresholdCrossedType("Operational: series of a meter reached one of its usage alerts' threshold within the alert's window " +
		"(day or calendar month, UTC); each series and window is listed once, ever. At most REVOPS_ALERT_EVENTS_PER_HOUR per " +
		"environment and clock hour; firings past it are counted in the next event's held_back. Sent only to endpoints that " +
		"list it: \"*\" does not match it."),
}, healthTypes()...)

// All returns the catalog, seed types first; the caller may modify what it gets.
func All() []EventType {
	out := make([]EventType, len(types))
	for i, t := range types {
		t.Schema = bytes.Clone(t.Schema)
		out[i] = t
	}
	return out
}

// Lookup returns the catalog entry of a type.
func Lookup(name string) (EventType, bool) {
	i := find(name)
	if i < 0 {
		return EventType{}, false
	}
	t := types[i]
	t.Schema = bytes.Clone(t.Schema)
	return t, true
}

// find returns the index of a type in the catalog, or -1.
func find(name string) int {
	return slices.IndexFunc(types, func(t EventType) bool { return t.Name == name })
}

// Names lists every type, seed types first.
func Names() []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = t.Name
	}
	return out
}

// SeedTypes lists the types of the seed (those "*" matches today).
func SeedTypes() []string {
	var out []string
	for _, t := range types {
		if !t.Operational {
			out = append(out, t.Name)
		}
	}
	return out
}

// Known tells whether t is an event type of the catalog.
func Known(t string) bool { return find(t) >= 0 }

// Operational tells whether t is an operational type (never matched by "*").
func Operational(t string) bool {
	i := find(t)
	return i >= 0 && types[i].Operational
}

// Matches tells whether an endpoint subscribed to subscriptions receives events of
// eventType: it lists the type, or it lists "*" and the type is a known, non-operational one.
func Matches(subscriptions []string, eventType string) bool {
	if slices.Contains(subscriptions, eventType) {
		return Known(eventType)
	}
	return slices.Contains(subscriptions, Wildcard) && Known(eventType) && !Operational(eventType)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("catalog: encode schema: " + err.Error()) // static values: a bug, caught by any test
	}
	return b
}
