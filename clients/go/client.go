package revops

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// DefaultBaseURL is where `revops dev` listens unless told otherwise.
const DefaultBaseURL = "http://127.0.0.1:8080"

// Defaults of the retry policy (see WithMaxRetries and WithBackoff).
const (
	DefaultMaxRetries     = 3
	DefaultInitialBackoff = 500 * time.Millisecond
	DefaultMaxBackoff     = 8 * time.Second
	// MaxRetryAfter is the longest Retry-After the client waits out; a longer one is
	// returned to the caller as the 429 error instead of blocking the call.
	MaxRetryAfter = 60 * time.Second
)

// Client calls the Revops API with one key. It is safe for concurrent use.
type Client struct {
	key            string
	baseURL        string
	http           *http.Client
	maxRetries     int
	initialBackoff time.Duration
	maxBackoff     time.Duration
	userAgent      string
}

// String and GoString keep the API key out of %v, %+v and %#v (a client logged as part
// of a struct, say): only its prefix shows, which names its kind and environment.
func (c *Client) String() string {
	if c == nil {
		return "revops.Client(nil)"
	}
	return fmt.Sprintf("revops.Client{baseURL: %s, key: %s…}", c.baseURL, keyKind(c.key))
}

func (c *Client) GoString() string { return c.String() }

// keyKind is the key's non-secret prefix (sk_sandbox_, pk_live_…), or nothing.
func keyKind(key string) string {
	for _, p := range []string{"sk_live_", "sk_sandbox_", "pk_live_", "pk_sandbox_"} {
		if strings.HasPrefix(key, p) {
			return p
		}
	}
	return ""
}

// Option configures NewClient.
type Option func(*Client) error

// WithAPIKey sets the API key (default: $REVOPS_API_KEY).
func WithAPIKey(key string) Option {
	return func(c *Client) error { c.key = key; return nil }
}

// WithBaseURL sets the API's base URL, without /v1 (default: $REVOPS_BASE_URL, else
// DefaultBaseURL).
func WithBaseURL(u string) Option {
	return func(c *Client) error { c.baseURL = u; return nil }
}

// WithHTTPClient sets the *http.Client requests go through (default: one with a 60 s
// timeout per attempt).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("revops: WithHTTPClient: nil *http.Client")
		}
		c.http = hc
		return nil
	}
}

// WithMaxRetries sets how many times a failed attempt is retried (default
// DefaultMaxRetries; 0 turns retries off).
func WithMaxRetries(n int) Option {
	return func(c *Client) error {
		if n < 0 {
			return errors.New("revops: WithMaxRetries: negative count")
		}
		c.maxRetries = n
		return nil
	}
}

// WithBackoff sets the wait before the first retry and the longest wait: each wait
// doubles, is capped at max, and is jittered. A Retry-After header waits longer when it
// asks to.
func WithBackoff(initial, max time.Duration) Option {
	return func(c *Client) error {
		if initial <= 0 || max < initial {
			return errors.New("revops: WithBackoff: need 0 < initial ≤ max")
		}
		c.initialBackoff, c.maxBackoff = initial, max
		return nil
	}
}

// NewClient returns a client. Without WithAPIKey it reads $REVOPS_API_KEY, without
// WithBaseURL $REVOPS_BASE_URL (else DefaultBaseURL); a missing key is an error.
func NewClient(opts ...Option) (*Client, error) {
	c := &Client{
		key:            os.Getenv("REVOPS_API_KEY"),
		baseURL:        os.Getenv("REVOPS_BASE_URL"),
		http:           &http.Client{Timeout: 60 * time.Second},
		maxRetries:     DefaultMaxRetries,
		initialBackoff: DefaultInitialBackoff,
		maxBackoff:     DefaultMaxBackoff,
		userAgent:      "revops-go/" + Version,
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.key == "" {
		return nil, errors.New("revops: no API key: pass WithAPIKey or set REVOPS_API_KEY")
	}
	if c.baseURL == "" {
		c.baseURL = DefaultBaseURL
	}
	if !strings.HasPrefix(c.baseURL, "http://") && !strings.HasPrefix(c.baseURL, "https://") {
		return nil, errors.New("revops: the base URL must start with http:// or https://")
	}
	c.baseURL = strings.TrimRight(c.baseURL, "/")
	return c, nil
}
