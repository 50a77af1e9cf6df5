package webhook

import (
	"context"
	"errors"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/models"
)

// The §8 singular routes (GET|PUT /v1/webhook_endpoint and its secret, rotate_secret and
// test) act on the environment's oldest endpoint (CONTRACT §13). They are §13's
// operations on that endpoint; what the singular form adds is said here.

// OldestEndpoint loads the environment's oldest endpoint (ErrNotFound before the first).
func OldestEndpoint(ctx context.Context, st EndpointReader, env models.Env) (models.WebhookEndpoint, error) {
	return st.WebhookEndpoint(ctx, env)
}

// Put is the §8 PUT: it replaces the url, method and enabled of the oldest endpoint —
// method defaulting to POST and enabled to true, as the whole setting is replaced — or,
// when the environment has none, creates one with a new secret as Create would (created
// tells which). Only in.URL, in.Method and in.Enabled are read.
func (e *Endpoints) Put(ctx context.Context, env models.Env, in EndpointFields) (ep models.WebhookEndpoint, created bool, err error) {
	saved, err := e.savedCredentials(ctx, env, in.URL)
	if err != nil {
		return ep, false, err
	}
	p, err := ValidateEndpointFields(EndpointFields{URL: in.URL, Method: in.Method, Enabled: in.Enabled}, true, models.DefaultRetryPolicy, saved)
	if err != nil {
		return ep, false, err
	}
	if err := e.checkDestination(ctx, *p.URL); err != nil {
		return ep, false, err
	}
	secret, err := signing.NewSecret()
	if err != nil {
		return ep, false, err
	}
	// One store call decides between update and create under the environment's lock, so
	// that concurrent first PUTs make one endpoint.
	return PutOldest(ctx, e.Store, env, newEndpoint(p, secret),
		EndpointPatch{URL: p.URL, Method: p.Method, Enabled: p.Enabled}, time.Now().UTC())
}

// savedCredentials is the oldest endpoint's URL when the PUT's url carries credentials
// (credentials.go): sent again unchanged, that URL keeps them. Other URLs need no read.
func (e *Endpoints) savedCredentials(ctx context.Context, env models.Env, url *string) (string, error) {
	if url == nil || !HasCredentials(*url) {
		return "", nil
	}
	oldest, err := OldestEndpoint(ctx, e.Store, env)
	if errors.Is(err, apperr.ErrNotFound) {
		return "", nil
	}
	return oldest.URL, err
}

// OldestRotator is what RotateOldest needs of the database.
type OldestRotator interface {
	Writer
	EndpointReader
}

// RotateOldest is RotateKey on the oldest endpoint, at now with RotationOverlap. The
// oldest is read, then rotated by id: if it was deleted in between, the next oldest is
// the singular endpoint now, and is rotated instead (as when both steps held one lock);
// ErrNotFound once none is left.
func RotateOldest(ctx context.Context, st OldestRotator, env models.Env, now time.Time, reply idempotency.Reply[SecretObject]) (models.WebhookEndpoint, error) {
	for {
		ep, err := OldestEndpoint(ctx, st, env)
		if err != nil {
			return ep, err
		}
		ep, err = RotateKey(ctx, st, env, ep.ID, now, RotationOverlap, reply)
		if !errors.Is(err, apperr.ErrNotFound) {
			return ep, err
		}
	}
}

// TestOldest is Test on the oldest endpoint: the type is checked before the endpoint is
// looked for, as Test does.
func (e *Endpoints) TestOldest(ctx context.Context, env models.Env, eventType string) (TestResult, error) {
	if err := checkTestType(eventType); err != nil {
		return TestResult{}, err
	}
	ep, err := OldestEndpoint(ctx, e.Store, env)
	if err != nil {
		return TestResult{}, err
	}
	return e.claimedSend(ctx, env, ep.ID, eventType)
}
