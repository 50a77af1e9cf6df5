package idempotency

import (
	"context"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// The claim's types are the store's, which keeps them; the API names them here.
type (
	// Request is what a key is bound to: a second use must match all of it.
	Request = store.IdempotentRequest
	// Claim is what claiming a key found (Outcome), with the answer to replay or the
	// owned claim (Answer) the request's change keeps its answer through.
	Claim = store.Claim
	// Answer is an owned claim.
	Answer = store.Answer
)

// The outcomes of Take.
const (
	Owned  = store.ClaimOwned  // this request runs; Claim.Answer completes it
	Replay = store.ClaimReplay // answered before: Claim.Status and Claim.Body
	Reused = store.ClaimReused // ErrReused
	InUse  = store.ClaimInUse  // ErrInUse
)

// HeaderKey is the request header that carries the key.
const HeaderKey = "Idempotency-Key"

// The refusals of CONTRACT §14, answered before anything runs.
var (
	ErrInvalidKey = apperr.Invalid(nil, apperr.CodeParameterInvalid, HeaderKey,
		"Idempotency-Key must be one header of 1 to 255 printable ASCII characters.")
	ErrReused = apperr.Conflict("idempotency_key_reused",
		"This Idempotency-Key was already used with another method, path or body; use a new key for a new request.")
	ErrInUse = apperr.Conflict("idempotency_key_in_use",
		"A request with this Idempotency-Key is still running; retry once it has answered.")
)

// ValidKey: 1–255 printable ASCII characters (CONTRACT §14).
func ValidKey(k string) bool {
	if len(k) < 1 || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// Keys is the storage of claims this package needs.
type Keys interface {
	ClaimIdempotencyKey(ctx context.Context, env models.Env, req Request) (Claim, error)
	CompleteIdempotencyKey(ctx context.Context, a *Answer, status int, body []byte) error
	ReleaseIdempotencyKey(ctx context.Context, a *Answer) error
}

var _ Keys = (*store.Store)(nil)

const (
	// claimWait is how long a request waits for the first request with its key to
	// finish before it answers 409 idempotency_key_in_use: identical retries that
	// arrive together get the first answer, not an error.
	claimWait = 5 * time.Second
	claimPoll = 25 * time.Millisecond
)

// Take claims req's key in env, waiting while its first request still runs.
func Take(ctx context.Context, keys Keys, env models.Env, req Request) (Claim, error) {
	deadline := time.Now().Add(claimWait)
	for {
		claim, err := keys.ClaimIdempotencyKey(ctx, env, req)
		if err != nil || claim.Outcome != InUse || time.Now().After(deadline) {
			return claim, err
		}
		select {
		case <-ctx.Done():
			return claim, nil
		case <-time.After(claimPoll):
		}
	}
}
