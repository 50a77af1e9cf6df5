// Package keys manages API keys and authenticates requests with them. Verified keys are
// cached for a short TTL; revoking through the same Manager drops the cache entry at once.
package keys

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/platform/apikey"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// CacheTTL bounds how long another process may still accept a revoked key (CONTRACT §2: 5 s).
const CacheTTL = 2 * time.Second

// RecentTTL is how long a key that authenticated stays "recently valid": the keys a
// throttled client may still use (AuthenticateKnown, CONTRACT §17).
const RecentTTL = 10 * time.Minute

// Authentication failures; the API turns them into 401s.
var (
	ErrMissing = errors.New("missing_api_key")
	ErrInvalid = errors.New("invalid_api_key")
	ErrExpired = errors.New("api_key_expired")
)

// ErrNotRecent is a key presented by a throttled client that this process has not seen
// valid lately (AuthenticateKnown): it is not looked up.
var ErrNotRecent = errors.New("key not recently valid")

// ErrNegativeExpiry is a roll asked to end the old key before now.
var ErrNegativeExpiry = errors.New("negative expiry of a rolled key")

// Principal is who a request acts as.
type Principal struct {
	KeyID  string
	Type   string // public or secret
	Prefix string // for logs: never the full key
	Env    models.Env
}

// Store is what the manager needs from the database: keys are written in a transaction
// of their environment (InTx, writes.go).
type Store interface {
	InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error)
	APIKeyByHash(ctx context.Context, hash string) (models.APIKey, error)
	APIKey(ctx context.Context, orgID, id string) (models.APIKey, error)
	APIKeys(ctx context.Context, orgID, env string) ([]models.APIKey, error)
	TouchAPIKey(ctx context.Context, id string, at time.Time) error
	Environment(ctx context.Context, orgID, name string) (models.Env, error)
}

var _ Store = (*store.Store)(nil)

// Manager creates, rolls, revokes and verifies keys.
type Manager struct {
	store Store
	now   func() time.Time

	mu    sync.Mutex
	cache map[string]cached // by key hash
	swept time.Time         // when the cache was last rid of entries long unused
}

type cached struct {
	key     models.APIKey
	fetched time.Time
	touched time.Time
	valid   time.Time // when it last authenticated a request (zero: never)
}

// NewManager returns a Manager over st.
func NewManager(st Store) *Manager {
	return &Manager{store: st, now: time.Now, cache: map[string]cached{}}
}

// Created is a new key: Plain is shown once.
type Created struct {
	Plain string
	Key   models.APIKey
}

// Create makes a key of type ("public"|"secret") in the organization's environment env.
func (m *Manager) Create(ctx context.Context, orgID, env, keyType string) (Created, error) {
	gen, err := apikey.Generate(keyType, env)
	if err != nil {
		return Created{}, err
	}
	e, err := m.store.Environment(ctx, orgID, env)
	if err != nil {
		return Created{}, err
	}
	k := toModel(gen, e, m.now())
	if err := insert(ctx, m.store, &k); err != nil {
		return Created{}, err
	}
	return Created{Plain: gen.Plain, Key: k}, nil
}

// Get reads one key of the organization.
func (m *Manager) Get(ctx context.Context, orgID, id string) (models.APIKey, error) {
	return m.store.APIKey(ctx, orgID, id)
}

// List returns the organization's keys (env "" for both environments).
func (m *Manager) List(ctx context.Context, orgID, env string) ([]models.APIKey, error) {
	return m.store.APIKeys(ctx, orgID, env)
}

// Roll issues a replacement for a key; the old one keeps working for expiresIn.
func (m *Manager) Roll(ctx context.Context, orgID, id string, expiresIn time.Duration) (Created, error) {
	if expiresIn < 0 {
		return Created{}, apperr.Invalid(ErrNegativeExpiry, apperr.CodeParameterInvalid, "expires_in", "expires_in must not be negative")
	}
	old, err := m.store.APIKey(ctx, orgID, id)
	if err != nil {
		return Created{}, err
	}
	gen, err := apikey.Generate(old.Type, old.Environment)
	if err != nil {
		return Created{}, err
	}
	k := toModel(gen, envOf(old), m.now())
	rolled, err := replace(ctx, m.store, orgID, id, m.now().Add(expiresIn).UTC(), &k)
	if err != nil {
		return Created{}, err
	}
	m.forget(rolled.Hash)
	return Created{Plain: gen.Plain, Key: k}, nil
}

// Revoke stops a key at once in this process (and within CacheTTL in others).
func (m *Manager) Revoke(ctx context.Context, orgID, id string) (models.APIKey, error) {
	k, err := revoke(ctx, m.store, orgID, id, m.now().UTC())
	if err != nil {
		return k, err
	}
	m.forget(k.Hash)
	return k, nil
}

func (m *Manager) forget(hash string) {
	m.mu.Lock()
	delete(m.cache, hash)
	m.mu.Unlock()
}

// Authenticate verifies a presented key. It never says why an unknown key is unknown.
func (m *Manager) Authenticate(ctx context.Context, presented string) (Principal, error) {
	return m.authenticate(ctx, presented, false)
}

// AuthenticateKnown verifies a key of a client throttled for failed authentications
// (CONTRACT §17): only a key this process saw valid within RecentTTL is considered, and
// anything else is refused with ErrNotRecent without a database lookup. A known key whose
// cache entry is older than CacheTTL is read again (one lookup per key per CacheTTL,
// whoever presents it), so that a revocation still takes effect within CONTRACT §2's 5 s.
func (m *Manager) AuthenticateKnown(ctx context.Context, presented string) (Principal, error) {
	return m.authenticate(ctx, presented, true)
}

func (m *Manager) authenticate(ctx context.Context, presented string, knownOnly bool) (Principal, error) {
	if presented == "" {
		return Principal{}, ErrMissing
	}
	if _, _, ok := apikey.Parse(presented); !ok {
		if knownOnly {
			return Principal{}, ErrNotRecent
		}
		return Principal{}, ErrInvalid
	}
	hash := apikey.Hash(presented)
	now := m.now()
	if knownOnly && !m.recentlyValid(hash, now) {
		return Principal{}, ErrNotRecent
	}
	k, err := m.lookup(ctx, hash, now)
	if err != nil {
		return Principal{}, err
	}
	if k.RevokedAt != nil {
		return Principal{}, ErrInvalid
	}
	if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
		return Principal{}, ErrExpired
	}
	m.markValid(hash, now)
	return Principal{
		KeyID:  k.ID,
		Type:   k.Type,
		Prefix: k.Prefix + "…" + k.Last4,
		Env:    models.Env{OrganizationID: k.OrganizationID, ID: k.EnvironmentID, Name: k.Environment},
	}, nil
}

func (m *Manager) recentlyValid(hash string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.cache[hash]
	return ok && !c.valid.IsZero() && now.Sub(c.valid) < RecentTTL
}

func (m *Manager) markValid(hash string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.cache[hash]; ok {
		c.valid = now
		m.cache[hash] = c
	}
}

func (m *Manager) lookup(ctx context.Context, hash string, now time.Time) (models.APIKey, error) {
	m.mu.Lock()
	c, ok := m.cache[hash]
	m.mu.Unlock()
	if ok && now.Sub(c.fetched) < CacheTTL {
		return c.key, nil
	}
	k, err := m.store.APIKeyByHash(ctx, hash)
	if errors.Is(err, apperr.ErrNotFound) {
		return k, ErrInvalid
	}
	if err != nil {
		return k, fmt.Errorf("authenticate: %w", err)
	}
	touched := c.touched
	// last_used_at is informational: write it at most once a minute per key.
	if now.Sub(touched) > time.Minute {
		if err := m.store.TouchAPIKey(ctx, k.ID, now.UTC()); err == nil {
			touched = now
		}
	}
	m.mu.Lock()
	m.cache[hash] = cached{key: k, fetched: now, touched: touched, valid: c.valid}
	m.sweep(now)
	m.mu.Unlock()
	return k, nil
}

// sweep drops, at most once a minute, the entries neither read nor valid within
// RecentTTL, so that the cache holds the keys in use, not every key ever presented.
// m.mu is held.
func (m *Manager) sweep(now time.Time) {
	if now.Sub(m.swept) < time.Minute {
		return
	}
	m.swept = now
	for h, c := range m.cache {
		if now.Sub(c.fetched) >= RecentTTL && now.Sub(c.valid) >= RecentTTL {
			delete(m.cache, h)
		}
	}
}

func toModel(gen apikey.Key, env models.Env, now time.Time) models.APIKey {
	return models.APIKey{
		ID:             uuid.NewString(),
		OrganizationID: env.OrganizationID,
		EnvironmentID:  env.ID,
		Environment:    env.Name,
		Type:           gen.Type,
		Prefix:         gen.Prefix,
		Last4:          gen.Last4,
		Hash:           gen.Hash,
		CreatedAt:      now.UTC(),
	}
}

// State reports a key's state at time now: active, expiring, expired or revoked.
func State(k models.APIKey, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return "expired"
	case k.ExpiresAt != nil:
		return "expiring"
	default:
		return "active"
	}
}
