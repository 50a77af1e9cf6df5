package webhook

import (
	"encoding/json"
	"time"

	"github.com/revops/revops/internal/platform/apiobject"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/models"
)

// The answers of the endpoint routes (CONTRACT §13), made here so that the writes keep
// them in their own transactions (CONTRACT §14) as the API sends them.

// EndpointObject is the §13 webhook_endpoint object.
type EndpointObject struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	URL            string            `json:"url"`
	Method         string            `json:"method"`
	Description    *string           `json:"description"`
	EventTypes     []string          `json:"event_types"`
	Enabled        bool              `json:"enabled"`
	Status         string            `json:"status"`
	DisabledReason *string           `json:"disabled_reason"`
	RetryPolicy    RetryPolicyObject `json:"retry_policy"`
	Ordering       string            `json:"ordering"` // none or object (CONTRACT §26)
	Filter         json.RawMessage   `json:"filter"`   // null: none (CONTRACT §25)
	// RateLimit is the endpoint's pace (CONTRACT §27); null when it is unpaced.
	RateLimit *RateLimitObject `json:"rate_limit"`
	Health    HealthObject     `json:"health"`
	// Headers are the custom headers (CONTRACT §25), each value Redacted but in the
	// answer of the write that set it (WithHeadersShown).
	Headers   map[string]string `json:"headers"`
	Signing   string            `json:"signing"`          // hmac-sha256 or ed25519 (CONTRACT §25)
	PublicKey *string           `json:"public_key"`       // ed25519 only: whpk_…, derived from the private key
	Secret    string            `json:"secret,omitempty"` // only in the answer of the create, hmac only
	// Warnings are what the endpoint does that works but should change (credentials.go);
	// never null.
	Warnings  []Warning `json:"warnings"`
	CreatedAt string    `json:"created_at"`
	UpdatedAt string    `json:"updated_at"`
}

// HealthObject is an endpoint's health (CONTRACT §23).
type HealthObject struct {
	Status         string   `json:"status"` // healthy, failing, disabled, idle
	SuccessRate24h *float64 `json:"success_rate_24h"`
	LastSuccessAt  *string  `json:"last_success_at"`
	FailingSince   *string  `json:"failing_since"`
}

// ToHealthObject is ep's health at now, from the health row its read loaded (none: a
// new endpoint's, idle).
func ToHealthObject(ep models.WebhookEndpoint, now time.Time) HealthObject {
	var h models.EndpointHealth
	if ep.Health != nil {
		h = *ep.Health
	}
	return HealthObject{Status: HealthStatus(ep, h, now), SuccessRate24h: h.SuccessRate24h,
		LastSuccessAt: stampOrNil(h.LastSuccessAt), FailingSince: stampOrNil(h.FailingSince)}
}

func stampOrNil(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// RetryPolicyObject is an endpoint's retry policy, its intervals as duration text.
type RetryPolicyObject struct {
	InitialInterval    string  `json:"initial_interval"`
	BackoffCoefficient float64 `json:"backoff_coefficient"`
	MaximumInterval    string  `json:"maximum_interval"`
	MaximumAttempts    int     `json:"maximum_attempts"`
}

// ToEndpointObject converts a stored endpoint to the API form, without its secret.
func ToEndpointObject(ep models.WebhookEndpoint) EndpointObject {
	o := EndpointObject{
		ID: ep.ID, Object: "webhook_endpoint", URL: ep.URL, Method: ep.Method, Description: apiobject.NonEmpty(ep.Description),
		EventTypes: ep.EventTypes, Enabled: ep.Enabled, Status: "enabled", DisabledReason: apiobject.NonEmpty(ep.DisabledReason),
		RetryPolicy: RetryPolicyObject{
			InitialInterval: FormatDuration(ep.InitialInterval()), BackoffCoefficient: ep.BackoffCoefficient,
			MaximumInterval: FormatDuration(ep.MaximumInterval()), MaximumAttempts: ep.MaximumAttempts,
		},
		Ordering: OrderingOf(ep),
		Health:   ToHealthObject(ep, time.Now()), Headers: redactedHeaders(ep.Headers), Warnings: Warnings(ep),
		CreatedAt: ep.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: ep.UpdatedAt.UTC().Format(time.RFC3339),
	}
	o.Signing, o.PublicKey = signingOf(ep)
	o.RateLimit = ToRateLimitObject(ep)
	if !ep.Enabled {
		o.Status = "disabled"
	}
	if ep.Filter != "" {
		o.Filter = json.RawMessage(ep.Filter)
	}
	if o.EventTypes == nil {
		o.EventTypes = []string{}
	}
	return o
}

// OrderingOf is ep's ordering (CONTRACT §26); "none" for a row that names none.
func OrderingOf(ep models.WebhookEndpoint) string {
	if ep.Ordering == "" {
		return models.OrderingNone
	}
	return ep.Ordering
}

// signingOf is ep's scheme and, for ed25519, its public key. The private key is never
// shown; a stored key that does not decode (Revops stores none) shows no public key.
func signingOf(ep models.WebhookEndpoint) (string, *string) {
	scheme := signing.Scheme(ep.Secret)
	if scheme != signing.SchemeEd25519 {
		return scheme, nil
	}
	pub, err := signing.PublicKey(ep.Secret)
	if err != nil {
		return scheme, nil
	}
	return scheme, &pub
}

// ToEndpointWithSecret is the answer of the create: the object with its secret — for an
// ed25519 endpoint the object alone, its public_key being what the receiver keeps.
func ToEndpointWithSecret(ep models.WebhookEndpoint) EndpointObject {
	o := ToEndpointObject(ep)
	if o.Signing == signing.SchemeHMAC {
		o.Secret = ep.Secret
	}
	return o
}

// WithHeadersShown is o, the answer of a write of ep, with the values of the headers
// named shown (the names the write set, as sent, which are the names as saved): CONTRACT
// §25 shows a value only in the answer of the write that sets it. The writes keep their
// answers for replays without them.
func WithHeadersShown(o EndpointObject, ep models.WebhookEndpoint, names []string) EndpointObject {
	shown := make(map[string]string, len(o.Headers))
	for name, v := range o.Headers {
		shown[name] = v
	}
	for _, name := range names {
		if v, ok := ep.Headers[name]; ok {
			shown[name] = v
		}
	}
	o.Headers = shown
	return o
}

// DeletedEndpoint is the answer of an endpoint's deletion: the endpoint is removed, so
// the answer is the deleted stub.
type DeletedEndpoint = apiobject.Deleted

// ToDeletedEndpoint is the answer of ep's deletion.
func ToDeletedEndpoint(ep models.WebhookEndpoint) DeletedEndpoint {
	return apiobject.DeletedOf("webhook_endpoint", ep.ID)
}

// SecretObject is an endpoint's signing key as the secret routes show it (CONTRACT §8,
// §13, §25), with the end of the previous key's overlap while it still signs: the
// secret of an hmac-sha256 endpoint, the public key of an ed25519 one (whose private
// key is never shown).
type SecretObject struct {
	Object            string  `json:"object"`
	Secret            string  `json:"secret,omitempty"`
	PublicKey         string  `json:"public_key,omitempty"`
	PreviousExpiresAt *string `json:"previous_secret_expires_at"`
}

// ToSecretObject is ep's key as the API shows it now: the answer of a rotation.
func ToSecretObject(ep models.WebhookEndpoint) SecretObject {
	o := SecretObject{Object: "webhook_secret"}
	if scheme, pub := signingOf(ep); scheme == signing.SchemeEd25519 {
		if pub != nil {
			o.PublicKey = *pub
		}
	} else {
		o.Secret = ep.Secret
	}
	if ep.PreviousSecret != "" && ep.PreviousUntil != nil && time.Now().Before(*ep.PreviousUntil) {
		at := ep.PreviousUntil.UTC().Format(time.RFC3339)
		o.PreviousExpiresAt = &at
	}
	return o
}

// ReadSecret is the answer of GET …/secret: ep's secret, or, for an ed25519 endpoint,
// ErrNotFound (404 resource_missing, CONTRACT §25) — it has no secret a client may read,
// only a public key, which the endpoint object shows.
func ReadSecret(ep models.WebhookEndpoint) (SecretObject, error) {
	if signing.Scheme(ep.Secret) == signing.SchemeEd25519 {
		return SecretObject{}, apperr.NotFound(
			"This endpoint signs with ed25519: its private key is never shown. Verify its deliveries with the public_key the endpoint shows.")
	}
	return ToSecretObject(ep), nil
}
