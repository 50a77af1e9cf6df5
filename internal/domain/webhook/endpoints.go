package webhook

import (
	"context"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/platform/envgate"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Endpoint rules of CONTRACT §8.
const (
	MaxURLLength    = 2048
	RotationOverlap = 24 * time.Hour // the previous secret keeps signing this long
)

// Endpoint rules of CONTRACT §13.
const (
	MaxDescriptionLength = 255 // characters; the endpoint-disabled schema says the same
	MinRetryInterval     = time.Second
	MaxRetryInterval     = 24 * time.Hour
	MinBackoff           = 1.0
	MaxBackoff           = 10.0
	MaxRetryAttempts     = 20
	MaxRetrySchedule     = 7 * 24 * time.Hour // from the first attempt to the last
	// CodeInvalidEventType is the fault of an event_types entry that is not a known type.
	CodeInvalidEventType = "invalid_event_type"
)

// EndpointReader reads an environment's endpoints.
type EndpointReader interface {
	WebhookEndpoint(ctx context.Context, env models.Env) (models.WebhookEndpoint, error) // the oldest
	WebhookEndpoints(ctx context.Context, env models.Env, page store.Page) ([]models.WebhookEndpoint, bool, error)
	AllWebhookEndpoints(ctx context.Context, env models.Env) ([]models.WebhookEndpoint, error)
	WebhookEndpointByID(ctx context.Context, env models.Env, id string) (models.WebhookEndpoint, error)
}

// EndpointsStore is what the endpoints need of the database: their writes' transaction
// (writes.go) and reads.
type EndpointsStore interface {
	Writer
	EndpointReader
	ClaimEndpointTest(ctx context.Context, env models.Env, id string, now time.Time, lease time.Duration) (models.WebhookEndpoint, string, error)
	ReleaseEndpointTest(ctx context.Context, env models.Env, id, token string) error
	StatsStore
	EventReader // filter tests on stored events
}

var _ EndpointsStore = (*store.Store)(nil)

// Endpoints holds what an endpoint's checked writes and manual tests need of the process
// (CONTRACT §13; through oldest.go, the one the §8 singular routes act on): the Sender,
// the private-address setting and the filter tests' gate. A process builds one, with its
// one Sender (internal/app), and the API and the dashboard share it. The verbs that need
// none of these are functions over the store (GetEndpoint, ListEndpoints, AllEndpoints,
// DeleteEndpoint, RotateKey, EndpointStats, and oldest.go's).
type Endpoints struct {
	Store EndpointsStore
	// Sender sends the manual tests, signed like any delivery.
	Sender *Sender
	// AllowPrivate lets destinations resolve to private and loopback addresses
	// (REVOPS_WEBHOOK_ALLOW_PRIVATE): the save-time check follows the Sender's dialer.
	AllowPrivate bool
	// MaxFilterTests is how many filter tests of one environment run at once in this
	// process (cfg.FilterTests, CONTRACT §21); the next waits up to envgate.Wait, then is
	// refused 429 rate_limited. 0: no bound.
	MaxFilterTests int
	// LaneWorkers lists the workers' identities for the gate on ordering "object"
	// (CheckOrdering, CONTRACT §26); nil refuses it.
	LaneWorkers WorkerIdentities
	// Pace are the caps of paced endpoints (CONTRACT §27: REVOPS_PACED_RATE_PER_
	// ENVIRONMENT, REVOPS_PACED_ENDPOINTS); zero fields take the defaults.
	Pace        PaceLimits
	filterTests envgate.Gate
}

// Create validates and stores a new endpoint with a new secret.
func (e *Endpoints) Create(ctx context.Context, env models.Env, in EndpointFields, reply idempotency.Reply[EndpointObject]) (models.WebhookEndpoint, error) {
	p, err := ValidateEndpointFields(in, true, models.DefaultRetryPolicy, "")
	if err != nil {
		return models.WebhookEndpoint{}, err
	}
	if err := e.checkDestination(ctx, *p.URL); err != nil {
		return models.WebhookEndpoint{}, err
	}
	if err := e.checkOrdering(ctx, p); err != nil {
		return models.WebhookEndpoint{}, err
	}
	secret, err := signing.NewKey(*p.Signing)
	if err != nil {
		return models.WebhookEndpoint{}, err
	}
	return createEndpoint(ctx, e.Store, env, newEndpoint(p, secret), time.Now().UTC(), e.Pace, reply)
}

// newEndpoint is the endpoint a create's validated patch describes (every member set).
func newEndpoint(p EndpointPatch, secret string) models.WebhookEndpoint {
	ep := models.WebhookEndpoint{
		URL: *p.URL, Method: *p.Method, EventTypes: p.EventTypes,
		RetryPolicy: *p.RetryPolicy, Enabled: *p.Enabled, Secret: secret,
	}
	if p.Description != nil {
		ep.Description = *p.Description
	}
	if p.Filter != nil {
		ep.Filter = *p.Filter
	}
	if p.Ordering != nil {
		ep.Ordering = *p.Ordering
	}
	if p.Headers != nil {
		ep.Headers = p.Headers.apply(nil) // counted by ValidateEndpointFields
	}
	if p.Pace != nil {
		ep = withPace(ep, *p.Pace)
	}
	return ep
}

// Update applies a PATCH; a partial retry_policy completes the endpoint's own.
func (e *Endpoints) Update(ctx context.Context, env models.Env, id string, in EndpointFields, reply idempotency.Reply[EndpointObject]) (models.WebhookEndpoint, error) {
	cur, err := e.Store.WebhookEndpointByID(ctx, env, id)
	if err != nil {
		return cur, err
	}
	p, err := ValidateEndpointFields(in, false, cur.RetryPolicy, cur.URL)
	if err != nil {
		return cur, err
	}
	if p.URL != nil {
		if err := e.checkDestination(ctx, *p.URL); err != nil {
			return cur, err
		}
	}
	if err := e.checkOrdering(ctx, p); err != nil {
		return cur, err
	}
	if p.Signing != nil { // used only if the scheme changes (applyPatch)
		if p.NewKey, err = signing.NewKey(*p.Signing); err != nil {
			return cur, err
		}
	}
	return updateEndpoint(ctx, e.Store, env, id, p, time.Now().UTC(), e.Pace, reply)
}

// GetEndpoint loads one endpoint of the environment (ErrNotFound for another's).
func GetEndpoint(ctx context.Context, st EndpointReader, env models.Env, id string) (models.WebhookEndpoint, error) {
	return st.WebhookEndpointByID(ctx, env, id)
}

// AllEndpoints lists every endpoint of the environment, oldest first (at most
// MaxEndpoints).
func AllEndpoints(ctx context.Context, st EndpointReader, env models.Env) ([]models.WebhookEndpoint, error) {
	return st.AllWebhookEndpoints(ctx, env)
}

// ListEndpoints lists the environment's endpoints, newest first.
func ListEndpoints(ctx context.Context, st EndpointReader, env models.Env, page store.Page) ([]models.WebhookEndpoint, bool, error) {
	return st.WebhookEndpoints(ctx, env, page)
}

// Test sends the §8 test body of eventType to the endpoint now, enabled or not; one at
// a time per endpoint (store.ErrTestInProgress otherwise: claimedSend).
func (e *Endpoints) Test(ctx context.Context, env models.Env, id, eventType string) (TestResult, error) {
	if err := checkTestType(eventType); err != nil {
		return TestResult{}, err
	}
	return e.claimedSend(ctx, env, id, eventType)
}
