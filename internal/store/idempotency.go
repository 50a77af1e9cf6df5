package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/platform/apperr"
)

func init() {
	register(migration{version: 50, name: "idempotency_keys", sql: `
CREATE TABLE idempotency_keys (
	environment_id TEXT NOT NULL REFERENCES environments(id),
	idempotency_key TEXT NOT NULL,
	method TEXT NOT NULL,
	path TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	claim TEXT NOT NULL,
	status INTEGER,
	response TEXT,
	claimed_at {{ts}} NOT NULL,
	completed_at {{ts}},
	expires_at {{ts}} NOT NULL,
	created_at {{ts}} NOT NULL,
	PRIMARY KEY (environment_id, idempotency_key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at)`})
}

const (
	// IdempotencyClaimLapse is how long an uncompleted claim blocks its key (CONTRACT
	// §14): a request that crashed never blocks its key for longer.
	IdempotencyClaimLapse = 60 * time.Second
	// IdempotencyKeyLife is how long a completed answer is replayed.
	IdempotencyKeyLife = 24 * time.Hour
)

// IdempotentRequest is what a key is bound to: a second use must match all of it.
type IdempotentRequest struct {
	Key, Method, Path string
	Fingerprint       string // the body by value (internal/platform/fingerprint)
}

// ClaimOutcome is what claiming a key found.
type ClaimOutcome int

// The outcomes of ClaimIdempotencyKey.
const (
	ClaimOwned  ClaimOutcome = iota // this request runs; Claim.Answer completes it
	ClaimReplay                     // answered before: Claim.Status and Claim.Body
	ClaimReused                     // the key belongs to another method, path or body
	ClaimInUse                      // the first request with this key is still running
)

// Claim is the result of ClaimIdempotencyKey.
type Claim struct {
	Outcome ClaimOutcome
	Status  int    // ClaimReplay
	Body    []byte // ClaimReplay
	Answer  *Answer
}

// idempotencyRow is a row of idempotency_keys.
type idempotencyRow struct {
	EnvironmentID  string
	IdempotencyKey string
	Method         string
	Path           string
	Fingerprint    string
	Claim          string
	Status         *int
	Response       *string
	// SecretEndpointID names the endpoint whose current signing secret the kept answer
	// shows in place of secretPlaceholder (idempotency_secret.go).
	SecretEndpointID *string
	ClaimedAt        time.Time
	CompletedAt      *time.Time
	ExpiresAt        time.Time
	CreatedAt        time.Time
}

func (idempotencyRow) TableName() string { return "idempotency_keys" }

// ClaimIdempotencyKey binds key to req for this request, atomically: the first request
// inserts the row; a later one replays the kept answer, is told the key is reused or in
// use, or takes over a claim that lapsed (or an answer older than 24 h) with a
// conditional update, so two requests can never both own a key.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, env Env, req IdempotentRequest) (Claim, error) {
	db := s.db.WithContext(ctx)
	// Kept keyed: the body may carry secrets (custom header values, CONTRACT §25).
	fingerprint := s.keyring.Digest(req.Fingerprint)
	for range 3 { // a row may vanish (released) or be taken between our statements
		now := changeTime()
		token := rand.Text()
		res := db.Exec(`INSERT INTO idempotency_keys
			(environment_id, idempotency_key, method, path, fingerprint, claim, claimed_at, expires_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (environment_id, idempotency_key) DO NOTHING`,
			env.ID, req.Key, req.Method, req.Path, fingerprint, token, now, now.Add(IdempotencyKeyLife), now)
		if res.Error != nil {
			return Claim{}, fmt.Errorf("claim idempotency key: %w", res.Error)
		}
		if res.RowsAffected == 1 {
			return owned(env, req.Key, token), nil
		}
		var row idempotencyRow
		err := scope(db, env).Where("idempotency_key = ?", req.Key).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			continue
		}
		if err != nil {
			return Claim{}, fmt.Errorf("read idempotency key: %w", err)
		}
		completed := row.CompletedAt != nil
		// Ages are judged here, in Go, not in SQL: SQLite compares times as text.
		live := (completed && now.Before(row.ExpiresAt)) || (!completed && now.Sub(row.ClaimedAt) < IdempotencyClaimLapse)
		if live {
			switch {
			case row.Method != req.Method || row.Path != req.Path || !s.keyring.DigestMatches(row.Fingerprint, req.Fingerprint):
				return Claim{Outcome: ClaimReused}, nil
			case completed && row.Status != nil && row.Response != nil:
				body, err := s.withCurrentSecret(ctx, env, []byte(*row.Response), row.SecretEndpointID)
				if err != nil {
					return Claim{}, err
				}
				return Claim{Outcome: ClaimReplay, Status: *row.Status, Body: body}, nil
			default:
				return Claim{Outcome: ClaimInUse}, nil
			}
		}
		// Take over only the row as read: same claim, and still (un)completed as it was.
		q := scope(db.Model(&idempotencyRow{}), env).Where("idempotency_key = ? AND claim = ?", req.Key, row.Claim)
		if completed {
			q = q.Where("completed_at IS NOT NULL")
		} else {
			q = q.Where("completed_at IS NULL")
		}
		res = q.Updates(map[string]any{
			"method": req.Method, "path": req.Path, "fingerprint": fingerprint, "claim": token,
			"status": nil, "response": nil, "secret_endpoint_id": nil, "claimed_at": now, "completed_at": nil,
			"expires_at": now.Add(IdempotencyKeyLife), "created_at": now,
		})
		if res.Error != nil {
			return Claim{}, fmt.Errorf("take over idempotency key: %w", res.Error)
		}
		if res.RowsAffected == 1 {
			return owned(env, req.Key, token), nil
		}
	}
	return Claim{Outcome: ClaimInUse}, nil
}

func owned(env Env, key, token string) Claim {
	return Claim{Outcome: ClaimOwned, Answer: &Answer{env: env, key: key, token: token}}
}

// ErrIdempotencyClaimLost: the request ran past the 60 s lapse and another request took
// its key over; its change rolls back so that nothing is done twice.
var ErrIdempotencyClaimLost = apperr.Conflict("idempotency_key_in_use",
	"Another request with this Idempotency-Key took it over while this one ran past 60 s; nothing was changed.")

// Answer is an owned claim: how the request will answer, and whether that answer is
// kept. A change keeps it inside its own transaction, just before commit, so that the
// answer is stored with the change or not at all, through the Reply every writer is
// passed explicitly (never through the request's context).
type Answer struct {
	env        Env
	key, token string
	kept       bool
	status     int
	body       []byte
}

// Kept returns the answer stored by the change's transaction, if one was.
func (a *Answer) Kept() (status int, body []byte, ok bool) { return a.status, a.body, a.kept }

// Keep writes status and body as the key's answer in tx, the transaction of the change it
// answers; call it last, just before the transaction commits. A non-2xx answer is not
// kept (CONTRACT §14); a claim lost to a takeover fails the transaction, so nothing is
// changed without its answer. internal/domain/idempotency renders body.
func (a *Answer) Keep(tx *Tx, status int, body []byte) error {
	return a.keep(tx.db, status, body, kept{body: body})
}

// KeepSecret is Keep for the answer of a change of endpoint endpointID whose signing
// secret is secret: the answer kept holds a placeholder instead, filled in with the
// endpoint's current secret when it is replayed (CONTRACT §17); body, as sent now, keeps it.
func (a *Answer) KeepSecret(tx *Tx, status int, body []byte, endpointID, secret string) error {
	k, err := withoutSecret(body, endpointID, secret)
	if err != nil {
		return err
	}
	return a.keep(tx.db, status, body, k)
}

// KeepSecretShown is KeepSecret for an answer that shows more than its replays do:
// sent is the answer as sent now, keep the answer its replays show (CONTRACT §25: the
// values of an endpoint's custom headers appear only in the answer of the write that
// set them). The secret rule applies to keep.
func (a *Answer) KeepSecretShown(tx *Tx, status int, sent, keep []byte, endpointID, secret string) error {
	k, err := withoutSecret(keep, endpointID, secret)
	if err != nil {
		return err
	}
	return a.keep(tx.db, status, sent, k)
}

// keep writes status and k as the key's answer in db and remembers body, the answer as
// sent now.
func (a *Answer) keep(db *gorm.DB, status int, body []byte, k kept) error {
	if status < 200 || status > 299 {
		return nil
	}
	if err := complete(db, a.env, a.key, a.token, status, k); err != nil {
		return err
	}
	a.kept, a.status, a.body = true, status, body
	return nil
}

// Keeper is a request's idempotent answer as a write keeps it in its transaction
// (internal/domain/idempotency.Reply is one; the replay writes take any, so that a test
// can give them an answer whose rendering fails): Keeps tells whether there is one to
// keep, Keep renders result and keeps it in tx.
type Keeper[T any] interface {
	Keeps() bool
	Keep(tx *Tx, result T) error
}

func complete(db *gorm.DB, env Env, key, token string, status int, k kept) error {
	res := scope(db.Model(&idempotencyRow{}), env).
		Where("idempotency_key = ? AND claim = ? AND completed_at IS NULL", key, token).
		Updates(map[string]any{"status": status, "response": string(k.body), "secret_endpoint_id": k.secretEndpointID, "completed_at": changeTime()})
	if res.Error != nil {
		return fmt.Errorf("keep idempotent answer: %w", res.Error)
	}
	if res.RowsAffected != 1 {
		return ErrIdempotencyClaimLost
	}
	return nil
}

// CompleteIdempotencyKey keeps a 2xx answer of a request that had no write transaction
// of its own (or answered without one): right after the operation, not with it.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, a *Answer, status int, body []byte) error {
	if err := complete(s.db.WithContext(ctx), a.env, a.key, a.token, status, kept{body: body}); err != nil {
		return err
	}
	a.kept, a.status, a.body = true, status, body
	return nil
}

// ReleaseIdempotencyKey frees the key of a request that did not answer 2xx, so that a
// retry runs again. A kept answer is never released.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, a *Answer) error {
	err := scope(s.db.WithContext(ctx), a.env).
		Where("idempotency_key = ? AND claim = ? AND completed_at IS NULL", a.key, a.token).
		Delete(&idempotencyRow{}).Error
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}
