package catalog

// The operational events of endpoint health (CONTRACT §23): never matched by "*",
// object_id the endpoint's id, the endpoint's host only, never its URL.
const (
	EndpointFailing   = "endpoint-failing"
	EndpointRecovered = "endpoint-recovered"
	DeliveryExhausted = "delivery-exhausted"
)

// HealthEndpoint is the "webhook_endpoint" member of the health events: the URL's host
// only (paths and queries may hold tokens).
type HealthEndpoint struct {
	ID          string  `json:"id"`
	Description *string `json:"description"`
	Host        string  `json:"host"` // url.URL.Host: host and port, if any
}

// FailingEndpoint is endpoint-failing's "webhook_endpoint".
type FailingEndpoint struct {
	HealthEndpoint
	FailingSince string `json:"failing_since"` // RFC 3339, UTC
}

// RecoveredEndpoint is endpoint-recovered's "webhook_endpoint": FailingSince is the
// spell's start (null after a re-enabling that cleared none).
type RecoveredEndpoint struct {
	HealthEndpoint
	FailingSince *string `json:"failing_since"`
	RecoveredAt  string  `json:"recovered_at"`
}

// ExhaustedDelivery is delivery-exhausted's "delivery".
type ExhaustedDelivery struct {
	ID        string `json:"id"`
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	Attempts  int    `json:"attempts"`
	LastError string `json:"last_error"`
}

// healthTypes are the catalog entries of the health events.
func healthTypes() []EventType {
	endpoint := func(extra schema) schema {
		props := schema{
			"id":          uuid("The endpoint."),
			"description": nullable(schema{"type": "string", "maxLength": maxTextLen}),
			"host": schema{
				"type": "string", "minLength": 1, "pattern": `^[^/?#@\s]+$`,
				"description": "The host (and port, if any) of the endpoint's URL: never its path, query or credentials.",
			},
		}
		for k, v := range extra {
			props[k] = v
		}
		return closed(props)
	}
	failing := "Operational: a webhook endpoint's attempts have all failed for REVOPS_WEBHOOK_FAILING_AFTER " +
		"(once per failing spell). Sent only to endpoints that list it: \"*\" does not match it."
	recovered := "Operational: the first successful attempt of an endpoint after endpoint-failing, or after it was " +
		"re-enabled. Sent only to endpoints that list it: \"*\" does not match it."
	exhausted := "Operational: a delivery ended failed because its attempts were used up; at most one per endpoint " +
		"per minute, the others summed (\"suppressed\"). Sent only to endpoints that list it: \"*\" does not match it."
	exhaustedBody := body(DeliveryExhausted, exhausted, "webhook_endpoint", endpoint(nil))
	props := exhaustedBody["properties"].(schema)
	props["delivery"] = closed(schema{
		"id": uuid("The delivery (the latest, in a summary)."), "event_id": uuid("The event it delivered."),
		"event_type": schema{"type": "string", "minLength": 1},
		"attempts":   schema{"type": "integer", "minimum": 0},
		"last_error": schema{"type": "string"},
	})
	props["suppressed"] = schema{"type": "integer", "minimum": 0,
		"description": "How many other deliveries of the endpoint ended so within the minute, summed into this event."}
	exhaustedBody["required"] = append(exhaustedBody["required"].([]string), "delivery", "suppressed")
	return []EventType{
		{Name: EndpointFailing, Description: failing, Operational: true, Schema: mustJSON(body(EndpointFailing, failing, "webhook_endpoint",
			endpoint(schema{"failing_since": timestamp("The endpoint's first failed attempt since its last success.")})))},
		{Name: EndpointRecovered, Description: recovered, Operational: true, Schema: mustJSON(body(EndpointRecovered, recovered, "webhook_endpoint",
			endpoint(schema{
				"failing_since": nullable(timestamp("The start of the failing spell it recovered from (null: none recorded).")),
				"recovered_at":  timestamp("The successful attempt's start."),
			})))},
		{Name: DeliveryExhausted, Description: exhausted, Operational: true, Schema: mustJSON(exhaustedBody)},
	}
}
