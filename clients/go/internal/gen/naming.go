package gen

import (
	"strings"
	"unicode"
)

// initialisms are written upper-case in Go names, as the Go style asks (ID, not Id).
var initialisms = map[string]bool{
	"API": true, "HTTP": true, "HTTPS": true, "ID": true, "IP": true, "JSON": true,
	"MS": true, "OK": true, "UI": true, "URI": true, "URL": true, "UUID": true,
}

// typeNames gives Go names where the name derived from the document would be unclear
// or would collide. Keys are the derived names: a component schema's name,
// Parent+Property for an inline object, or an operationId made exported.
var typeNames = map[string]string{
	// The hand-written *Error decodes the error envelope, so the generated one stays
	// unexported.
	"Error":              "errorEnvelope",
	"errorEnvelopeError": "errorBody",
	// EventType is the enum every user needs (webhooks, filters); the catalog object of
	// GET /v1/event_types takes another name.
	"EventType":                   "EventTypeInfo",
	"DealCreateCustomer":          "DealCustomerRef",
	"DealUpdateCustomer":          "DealCustomerRef",
	"WebhookEventEvent":           "WebhookEventHeader",
	"WebhookEventWebhookEndpoint": "DisabledEndpoint",
	"Whoami":                      "WhoAmI",
}

// enumNames names the enums shared by several fields, or whose derived name reads badly.
// An enum's derived name is Parent+Property at the first place it appears (component
// schemas before operations, both sorted; array items add "Item").
var enumNames = map[string]string{
	"errorBodyType":          "ErrorType",
	"EventEnvironment":       "Environment",
	"DeliveryStatus":         "EventStatus",
	"DealNetPricePrecision":  "Precision",
	"DeliveryAttemptMethod":  "WebhookMethod",
	"EndpointEventTypesItem": "EndpointEventType",
	"MeterValuesWindow":      "Resolution",
	"TermBillingFrequency":   "BillingFrequency",
	"UsageEventMode":         "UsageMode",
	"WhoAmIType":             "KeyType",
	"WebhookTestRequestType": "TestEventType",
}

func typeName(derived string) string {
	if r, ok := typeNames[derived]; ok {
		return r
	}
	return derived
}

func enumName(derived string) string {
	if r, ok := enumNames[derived]; ok {
		return r
	}
	return derived
}

// exported turns snake_case, kebab-case or camelCase text into an exported Go name.
func exported(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		if up := strings.ToUpper(w); initialisms[up] {
			b.WriteString(up)
			continue
		}
		r := []rune(w)
		b.WriteString(strings.ToUpper(string(r[0])) + string(r[1:]))
	}
	return b.String()
}

// words splits on anything but letters and digits, and before an upper-case letter that
// follows a lower-case one ("getWebhookEndpointById" → get Webhook Endpoint By Id).
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = nil
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// constName is the Go name of one enum value: the type's name and the value's words;
// an all-capitals value keeps its case (WebhookMethodPOST), "*" reads All.
func constName(typeName, value string) string {
	switch {
	case value == "*":
		return typeName + "All"
	case value == strings.ToUpper(value) && strings.ToUpper(value) != strings.ToLower(value):
		return typeName + value
	}
	return typeName + exported(value)
}

// comment turns a description into Go comment lines, prefixed by indent.
func comment(indent, text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		b.WriteString(indent + "// " + strings.TrimSpace(line) + "\n")
	}
	return b.String()
}
