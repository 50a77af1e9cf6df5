package webhook

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// The endpoint writes of CONTRACT §13, each one transaction that reads top to bottom:
// lock, decide, save, keep the answer (object.go: the API form of the result, kept
// without the secret it shows, CONTRACT §17). Endpoints (endpoints.go) validates a
// request and calls them; tests and fixtures call them with an endpoint already valid.

// MaxEndpoints is how many webhook endpoints an environment may have (CONTRACT §13).
const MaxEndpoints = 16

// ErrTooManyEndpoints refuses an environment's 17th endpoint. It comes wrapped in an
// *apperr.InvalidError with CodeTooManyEndpoints.
var ErrTooManyEndpoints = errors.New("too many webhook endpoints")

// CodeTooManyEndpoints is the error code of ErrTooManyEndpoints.
const CodeTooManyEndpoints = "too_many_endpoints"

// EndpointPatch is a PATCH of an endpoint; nil fields are left as they are.
type EndpointPatch struct {
	URL, Method, Description *string
	EventTypes               []string // nil: unchanged
	RetryPolicy              *models.RetryPolicy
	Enabled                  *bool
	// Signing is the scheme asked for (CONTRACT §25). When it is not the endpoint's,
	// NewKey (a fresh key of that scheme) becomes its key and the old one keeps signing
	// for RotationOverlap, as in a rotation.
	Signing *string
	NewKey  string
	Filter  *string // compact JSON; "" removes the filter
	// Ordering is none or object (CONTRACT §26): it orders, or stops ordering, the
	// deliveries created after the change only.
	Ordering *string
	Headers  *HeaderChanges // merged into the headers as locked
	Pace     *Pace          // the rate_limit (CONTRACT §27); Limit 0 unpaces
}

// Writer is what the endpoint writes need of the database: one transaction.
type Writer interface {
	InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error)
}

var _ Writer = (*store.Store)(nil)

// CreateEndpoint stores ep as a new endpoint created at now (its ID, timestamps and
// disabled reason are set here), refusing a 17th one of the environment even under
// concurrent creates: the environment is locked while its endpoints are counted. reply's
// answer is the endpoint with its secret (ToEndpointWithSecret) and its headers'
// values, which its replays show redacted (CONTRACT §25).
func CreateEndpoint(ctx context.Context, st Writer, env models.Env, ep models.WebhookEndpoint, now time.Time, reply idempotency.Reply[EndpointObject]) (models.WebhookEndpoint, error) {
	return createEndpoint(ctx, st, env, ep, now, PaceLimits{}, reply)
}

// createEndpoint is CreateEndpoint held to limits: a paced endpoint is refused past the
// environment's or the deployment's cap (CONTRACT §27), decided under the same lock.
func createEndpoint(ctx context.Context, st Writer, env models.Env, ep models.WebhookEndpoint, now time.Time, limits PaceLimits, reply idempotency.Reply[EndpointObject]) (models.WebhookEndpoint, error) {
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		if err := tx.LockEndpoints(); err != nil {
			return err
		}
		if err := checkRoom(tx); err != nil {
			return err
		}
		ep = newRow(ep, now)
		if err := checkPace(tx, models.WebhookEndpoint{}, ep, limits); err != nil {
			return err
		}
		if err := tx.InsertEndpoint(&ep); err != nil {
			return err
		}
		kept := ToEndpointWithSecret(ep)
		return reply.KeepSecretShown(tx, WithHeadersShown(kept, ep, HeaderNames(ep.Headers)), kept, ep.ID, ep.Secret)
	})
	return ep, err
}

// checkRoom refuses an environment's 17th endpoint, under the environment's lock
// (LockEndpoints). A deleted endpoint holds its place until its unfinished deliveries
// have ended (CONTRACT §21): that is work the environment still causes.
func checkRoom(tx *store.Tx) error {
	endpoints, deleting, err := tx.CountEndpoints()
	if err != nil {
		return err
	}
	if endpoints+deleting >= MaxEndpoints {
		return apperr.Invalid(ErrTooManyEndpoints, CodeTooManyEndpoints, "",
			"This environment already has %d webhook endpoints, counting deleted endpoints whose unfinished deliveries are still being ended: the most it may have. Delete one first, or wait for a deletion to end.", MaxEndpoints)
	}
	return nil
}

// newRow is ep as a new endpoint created at now: enabled since now, or disabled by hand;
// every type and the default retry policy unless it names its own.
func newRow(ep models.WebhookEndpoint, now time.Time) models.WebhookEndpoint {
	ep.ID = uuid.NewString()
	ep.CreatedAt, ep.UpdatedAt, ep.FailingSince = now, now, nil
	ep.DisabledReason, ep.EnabledAt = "", &now
	if !ep.Enabled {
		ep.EnabledAt = nil
		ep.DisabledReason = models.DisabledManual
	}
	if len(ep.EventTypes) == 0 {
		ep.EventTypes = []string{"*"}
	}
	if ep.RetryPolicy == (models.RetryPolicy{}) {
		ep.RetryPolicy = models.DefaultRetryPolicy
	}
	if ep.Ordering == "" {
		ep.Ordering = models.OrderingNone
	}
	return ep
}

// UpdateEndpoint applies p to endpoint id at now; reply's answer is the endpoint
// (ToEndpointObject) with the values of the headers p sets, which its replays show
// redacted (CONTRACT §25).
func UpdateEndpoint(ctx context.Context, st Writer, env models.Env, id string, p EndpointPatch, now time.Time, reply idempotency.Reply[EndpointObject]) (models.WebhookEndpoint, error) {
	return updateEndpoint(ctx, st, env, id, p, now, PaceLimits{}, reply)
}

// updateEndpoint is UpdateEndpoint held to limits. A patch that sets a pace locks the
// environment first (the caps of CONTRACT §27 are decided under its lock, as the
// endpoint quota is), then the endpoint: the order PutOldest locks them in.
func updateEndpoint(ctx context.Context, st Writer, env models.Env, id string, p EndpointPatch, now time.Time, limits PaceLimits, reply idempotency.Reply[EndpointObject]) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		if p.Pace != nil {
			if err := tx.LockEndpoints(); err != nil {
				return err
			}
		}
		cur, err := tx.LockEndpoint(id)
		if err != nil {
			return err
		}
		if p.Pace != nil {
			if err := checkPace(tx, cur, withPace(cur, *p.Pace), limits); err != nil {
				return err
			}
		}
		if ep, err = patch(tx, cur, p, now); err != nil {
			return err
		}
		kept := ToEndpointObject(ep)
		return reply.KeepSecretShown(tx, WithHeadersShown(kept, ep, p.Headers.names()), kept, ep.ID, ep.Secret)
	})
	return ep, err
}

// patch saves cur, locked in tx, with p applied, and returns it as saved.
func patch(tx *store.Tx, cur models.WebhookEndpoint, p EndpointPatch, now time.Time) (models.WebhookEndpoint, error) {
	next, err := applyPatch(cur, p, now)
	if err != nil {
		return cur, err
	}
	if err := tx.SaveEndpoint(&next); err != nil {
		return cur, err
	}
	if next.Enabled && !cur.Enabled {
		// Its lanes go on (CONTRACT §26), before the health row's lock (lock order:
		// endpoint, lane, event, health row): a first page here, the rest by the minute
		// check (ReleaseStuckLanes).
		if _, err := tx.ReleaseLanesOf(cur.ID, LaneReleasePage); err != nil {
			return cur, err
		}
		if err := reenabled(tx, cur); err != nil { // CONTRACT §23: after the endpoint's lock
			return cur, err
		}
	}
	return tx.Endpoint(cur.ID)
}

// applyPatch is cur with p applied at now. Enabling by hand clears the disabled reason
// and restarts the failing window (failures before it do not count towards automatic
// disabling); disabling by hand says "manual", unless the endpoint is disabled already
// (it keeps its reason). Headers merge into cur's (CONTRACT §25), at most MaxHeaders.
func applyPatch(cur models.WebhookEndpoint, p EndpointPatch, now time.Time) (models.WebhookEndpoint, error) {
	next := cur
	next.UpdatedAt = now
	if p.Enabled != nil {
		switch on := *p.Enabled; {
		case on && !cur.Enabled:
			next.Enabled, next.DisabledReason, next.FailingSince, next.EnabledAt = true, "", nil, &now
		case !on && cur.Enabled:
			next.Enabled, next.DisabledReason = false, models.DisabledManual
		}
	}
	if p.URL != nil {
		next.URL = *p.URL
	}
	if p.Method != nil {
		next.Method = *p.Method
	}
	if p.Description != nil {
		next.Description = *p.Description
	}
	if p.EventTypes != nil {
		next.EventTypes = p.EventTypes
	}
	if p.RetryPolicy != nil {
		next.RetryPolicy = *p.RetryPolicy
	}
	if p.Signing != nil && *p.Signing != signing.Scheme(cur.Secret) && p.NewKey != "" {
		next = withNewKey(next, p.NewKey, now, RotationOverlap)
	}
	if p.Filter != nil {
		next.Filter = *p.Filter
	}
	if p.Ordering != nil {
		next.Ordering = *p.Ordering
	}
	if p.Pace != nil {
		next = withPace(next, *p.Pace)
	}
	if p.Headers != nil {
		h, err := mergeHeaders(cur.Headers, *p.Headers)
		if err != nil {
			return cur, err
		}
		next.Headers = h
	}
	return next, nil
}

// withNewKey is ep signing with key from now on, its current key still signing until
// now+overlap (a rotation, or a change of scheme: CONTRACT §25).
func withNewKey(ep models.WebhookEndpoint, key string, now time.Time, overlap time.Duration) models.WebhookEndpoint {
	until := now.Add(overlap)
	ep.PreviousSecret, ep.PreviousUntil, ep.Secret, ep.UpdatedAt = ep.Secret, &until, key, now
	return ep
}

// DeleteEndpoint removes endpoint id and records its deletion, whatever its backlog, in
// one short transaction (CONTRACT §21): from its commit the endpoint is 404 and takes no
// new delivery. Its unfinished deliveries end skipped (endpoint_deleted) afterwards, by
// its EndpointDeletion job, which the deletion's transaction records and hands to the job
// starter once committed (store.AfterCommit); its past deliveries and attempts stay. The
// request is answered at once. reply's answer is the deleted stub (ToDeletedEndpoint).
func DeleteEndpoint(ctx context.Context, st Writer, env models.Env, id string, reply idempotency.Reply[DeletedEndpoint]) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		var err error
		if ep, err = tx.LockEndpoint(id); err != nil {
			return err
		}
		if err := tx.DeleteEndpoint(ep); err != nil {
			return err
		}
		if ep.PacedRate() > 0 {
			tx.Repace(ep.ID, 0) // its weight override goes with it (CONTRACT §27)
		}
		return reply.KeepSecret(tx, ToDeletedEndpoint(ep), ep.ID, ep.Secret)
	})
	return ep, err
}

// RotateSecret makes newSecret endpoint id's current key at now; the old one keeps
// signing until now+overlap. reply's answer is the secret, or the public key of an
// ed25519 endpoint (ToSecretObject).
func RotateSecret(ctx context.Context, st Writer, env models.Env, id, newSecret string, now time.Time, overlap time.Duration, reply idempotency.Reply[SecretObject]) (models.WebhookEndpoint, error) {
	return rotate(ctx, st, env, id, func(string) (string, error) { return newSecret, nil }, now, overlap, reply)
}

// RotateKey is RotateSecret with a fresh key of the endpoint's own scheme (a secret, or
// an ed25519 key pair); requests rotate with RotationOverlap. The scheme is read under the endpoint's lock, so that a rotation
// racing a change of scheme makes a key of the scheme it finds, never undoing the change.
func RotateKey(ctx context.Context, st Writer, env models.Env, id string, now time.Time, overlap time.Duration, reply idempotency.Reply[SecretObject]) (models.WebhookEndpoint, error) {
	return rotate(ctx, st, env, id, signing.NewKey, now, overlap, reply)
}

// rotate gives endpoint id the key newKey makes for its scheme.
func rotate(ctx context.Context, st Writer, env models.Env, id string, newKey func(scheme string) (string, error), now time.Time, overlap time.Duration, reply idempotency.Reply[SecretObject]) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		var err error
		if ep, err = tx.LockEndpoint(id); err != nil {
			return err
		}
		key, err := newKey(signing.Scheme(ep.Secret))
		if err != nil {
			return err
		}
		ep = withNewKey(ep, key, now, overlap)
		if err := tx.SaveEndpoint(&ep); err != nil {
			return err
		}
		return reply.KeepSecret(tx, ToSecretObject(ep), ep.ID, ep.Secret)
	})
	return ep, err
}

// PutOldest is the §8 PUT of the singular routes (CONTRACT §13): it applies p to the
// environment's oldest endpoint or, when there is none, creates create (created tells
// which). The environment is locked first, so that concurrent first PUTs make one
// endpoint (and one secret), the others updating it.
func PutOldest(ctx context.Context, st Writer, env models.Env, create models.WebhookEndpoint, p EndpointPatch, now time.Time) (ep models.WebhookEndpoint, created bool, err error) {
	_, err = st.InTx(ctx, env, func(tx *store.Tx) error {
		if err := tx.LockEndpoints(); err != nil {
			return err
		}
		cur, err := tx.OldestEndpoint()
		switch {
		case errors.Is(err, apperr.ErrNotFound):
			if err := checkRoom(tx); err != nil {
				return err // none left, but 16 deleted ones still ending their deliveries
			}
			created, ep = true, newRow(create, now)
			return tx.InsertEndpoint(&ep)
		case err != nil:
			return err
		}
		// The environment's lock keeps it the oldest, but a rotation, a PATCH or an
		// automatic disable locks the endpoint's row only: lock it too, and patch the row
		// as they left it (patch saves every column).
		if cur, err = tx.LockEndpoint(cur.ID); err != nil {
			return err
		}
		ep, err = patch(tx, cur, p, now)
		return err
	})
	return ep, created, err
}
