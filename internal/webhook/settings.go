package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/signing"
	"github.com/revops/revops/internal/ssrf"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/textcheck"
	"github.com/revops/revops/models"
)

// ErrURLNotAllowed is a destination refused at save time: it resolves to a loopback,
// private, link-local or metadata address, or does not resolve (CONTRACT §8). It comes
// wrapped in an *apperr.InvalidError with CodeURLNotAllowed and param "url".
var ErrURLNotAllowed = errors.New("webhook destination not allowed")

// CodeURLNotAllowed is the error code of ErrURLNotAllowed.
const CodeURLNotAllowed = "url_not_allowed"

// Settings rules (CONTRACT §8).
const (
	MaxURLLength    = 2048
	RotationOverlap = 24 * time.Hour // the previous secret keeps signing this long
)

// SettingsStore is what the settings need of the database.
type SettingsStore interface {
	WebhookEndpoint(ctx context.Context, env store.Env) (models.WebhookEndpoint, error)
	PutWebhookEndpoint(ctx context.Context, env store.Env, set store.EndpointSettings, newSecret string, now time.Time) (models.WebhookEndpoint, bool, error)
	RotateWebhookSecret(ctx context.Context, env store.Env, newSecret string, now time.Time, overlap time.Duration) (models.WebhookEndpoint, error)
}

var _ SettingsStore = (*store.Store)(nil)

// Settings manages an environment's endpoint and sends manual tests.
type Settings struct {
	Store        SettingsStore
	Sender       *Sender
	AllowPrivate bool
	Resolver     ssrf.Resolver // nil: the system resolver
}

// EndpointInput is a PUT body; nil fields were absent.
type EndpointInput struct {
	URL     *string
	Method  *string
	Enabled *bool
}

// ValidateEndpoint applies the defaults and lists every fault.
func ValidateEndpoint(in EndpointInput) (store.EndpointSettings, error) {
	var fs apperr.Faults
	set := store.EndpointSettings{Method: http.MethodPost, Enabled: true}
	if u, ok := checkURL(&fs, in.URL); ok {
		set.URL = u
	}
	if in.Method != nil && checkMethod(&fs, *in.Method) {
		set.Method = *in.Method
	}
	if in.Enabled != nil {
		set.Enabled = *in.Enabled
	}
	return set, fs.Err()
}

// checkMethod records a fault unless m is POST or GET, and tells whether it is.
func checkMethod(fs *apperr.Faults, m string) bool {
	if !textcheck.LineOK(fs, "method", m) {
		return false
	}
	if m != http.MethodPost && m != http.MethodGet {
		fs.Invalid("method", "method must be POST or GET.")
		return false
	}
	return true
}

// checkDestination is the save-time SSRF check.
func (s *Settings) checkDestination(ctx context.Context, rawURL string) error {
	u, _ := url.Parse(rawURL) // validated
	err := ssrf.CheckHost(ctx, s.Resolver, u.Hostname(), s.AllowPrivate)
	switch {
	case errors.Is(err, ssrf.ErrNotAllowed):
		return apperr.Invalid(ErrURLNotAllowed, CodeURLNotAllowed, "url",
			"Webhooks cannot be sent to %s: it resolves to a loopback, private, link-local or metadata address.", u.Hostname())
	case errors.Is(err, ssrf.ErrUnresolvable):
		return apperr.Invalid(ErrURLNotAllowed, CodeURLNotAllowed, "url",
			"Webhooks cannot be sent to %s: the host name does not resolve.", u.Hostname())
	}
	return err
}

// Get returns the endpoint (ErrNotFound before the first PUT).
func (s *Settings) Get(ctx context.Context, env store.Env) (models.WebhookEndpoint, error) {
	return s.Store.WebhookEndpoint(ctx, env)
}

// Put replaces the settings; created tells whether this made the endpoint (and its secret).
func (s *Settings) Put(ctx context.Context, env store.Env, in EndpointInput) (models.WebhookEndpoint, bool, error) {
	set, err := ValidateEndpoint(in)
	if err != nil {
		return models.WebhookEndpoint{}, false, err
	}
	if err := s.checkDestination(ctx, set.URL); err != nil {
		return models.WebhookEndpoint{}, false, err
	}
	secret, err := signing.NewSecret()
	if err != nil {
		return models.WebhookEndpoint{}, false, err
	}
	return s.Store.PutWebhookEndpoint(ctx, env, set, secret, time.Now().UTC())
}

// Rotate makes a new secret; the old one keeps signing for RotationOverlap.
func (s *Settings) Rotate(ctx context.Context, env store.Env) (models.WebhookEndpoint, error) {
	secret, err := signing.NewSecret()
	if err != nil {
		return models.WebhookEndpoint{}, err
	}
	return s.Store.RotateWebhookSecret(ctx, env, secret, time.Now().UTC(), RotationOverlap)
}

// TestResult is the outcome of a manual test.
type TestResult struct {
	OK              bool
	StatusCode      int
	DurationMS      int64
	ResponseExcerpt string
	Error           string
}

// Test sends a sample of eventType to the endpoint now, enabled or not, signed like
// any delivery.
func (s *Settings) Test(ctx context.Context, env store.Env, eventType string) (TestResult, error) {
	if err := checkTestType(eventType); err != nil {
		return TestResult{}, err
	}
	ep, err := s.Store.WebhookEndpoint(ctx, env)
	if err != nil {
		return TestResult{}, err
	}
	return s.send(ctx, ep, eventType)
}

// checkTestType: a type of the seed (the §8 test body has no operational shape).
func checkTestType(eventType string) error {
	var fs apperr.Faults
	if eventType == "" {
		fs.Missing("type")
	} else if textcheck.LineOK(&fs, "type", eventType) && !KnownType(eventType) {
		fs.Invalid("type", "type must be one of %v.", EventTypes)
	}
	return fs.Err()
}

// send sends the test body of eventType to ep now, signed like any delivery.
func (s *Settings) send(ctx context.Context, ep models.WebhookEndpoint, eventType string) (TestResult, error) {
	body, err := TestBody(eventType)
	if err != nil {
		return TestResult{}, fmt.Errorf("test body: %w", err)
	}
	now := time.Now().UTC()
	res := s.Sender.Send(ctx, Message{
		URL: ep.URL, Method: ep.Method, ID: uuid.NewString(), Body: body, Secrets: SigningSecrets(ep, now), At: now,
	})
	return TestResult{OK: res.OK(), StatusCode: res.StatusCode, DurationMS: res.Duration.Milliseconds(),
		ResponseExcerpt: res.Excerpt, Error: res.Reason}, nil
}

// SigningSecrets are the current secret and, during the rotation overlap, the previous one.
func SigningSecrets(ep models.WebhookEndpoint, now time.Time) []string {
	secrets := []string{ep.Secret}
	if ep.PreviousSecret != "" && ep.PreviousUntil != nil && now.Before(*ep.PreviousUntil) {
		secrets = append(secrets, ep.PreviousSecret)
	}
	return secrets
}
