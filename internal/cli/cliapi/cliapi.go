// Package cliapi connects the CLI commands that call the Revops API (listen, trigger,
// webhooks replay, webhooks status) to it through the Go client (clients/go), and words the client's
// errors for the terminal, where main already prefixes "revops: ".
package cliapi

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/demo"
	"github.com/revops/revops/internal/platform/config"
)

// HTTPClient is the HTTP client the commands' API calls go through: a 60 s timeout per
// attempt, the system's roots for https.
func HTTPClient() *http.Client { return &http.Client{Timeout: 60 * time.Second} }

// New returns a client of the API at baseURL (without /v1) with key, through
// HTTPClient. It retries as the client does by default (network errors, 429, 5xx; each
// change with one idempotency key, so a retried call changes once); opts come last, e.g.
// revops.WithMaxRetries(0).
func New(baseURL, key string, opts ...revops.Option) (*revops.Client, error) {
	c, err := revops.NewClient(append([]revops.Option{
		revops.WithBaseURL(baseURL), revops.WithAPIKey(key), revops.WithHTTPClient(HTTPClient()),
	}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("--api %s: %w", baseURL, Err(err))
	}
	return c, nil
}

// Err words an error of the client for the terminal: an API error reads "404
// resource_missing: message", any other loses the client's "revops: " prefix. The
// error is still the client's for errors.As and errors.Is.
func Err(err error) error {
	if err == nil {
		return nil
	}
	var apiErr *revops.Error
	if errors.As(err, &apiErr) && apiErr == err {
		return &cliError{msg: Message(apiErr), err: err}
	}
	if msg, ok := strings.CutPrefix(err.Error(), "revops: "); ok {
		return &cliError{msg: msg, err: err}
	}
	return err
}

// Message is how the CLI shows an API error: status, code and message, as the API gave them.
func Message(e *revops.Error) string {
	if e.Code == "" {
		return fmt.Sprintf("%d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

type cliError struct {
	msg string
	err error
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.err }

// Value is what an optional member of an answer holds: *p, or T's zero value when the
// API left it out or sent null.
func Value[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// Target is the API a command calls and the secret key it calls it with: the flags
// every API command of the CLI takes, defaulting from the environment
// (config.ClientEnv), and without a key the one `revops dev` saved for Env.
type Target struct {
	API, Key, Env, DataDir string
}

// Flags is the flag set of command name, which prints usage and then the flags to stderr
// on -h or a mistake, with the target's flags on it. The key's flag has no default: flag
// prints a default in the usage text, and $REVOPS_API_KEY is a secret key; Resolve reads
// it instead.
func (t *Target) Flags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, usage); fs.PrintDefaults() }
	env := config.ClientEnv()
	fs.StringVar(&t.API, "api", env.APIURL, "Revops API base URL ($REVOPS_PUBLIC_URL, else the dev API)")
	fs.StringVar(&t.Key, "api-key", "", "secret key (default: $REVOPS_API_KEY, else the dev key that revops dev saved)")
	fs.StringVar(&t.Env, "env", "sandbox", "environment of the dev key: sandbox or live")
	fs.StringVar(&t.DataDir, "data-dir", env.DataDir, "where revops dev keeps its keys")
	return fs
}

// Check refuses an environment that is not sandbox or live.
func (t *Target) Check() error {
	if t.Env != "sandbox" && t.Env != "live" {
		return fmt.Errorf("--env %q: want sandbox or live", t.Env)
	}
	return nil
}

// Resolve checks the target and, when no key was given, takes $REVOPS_API_KEY, else the
// dev key saved.
func (t *Target) Resolve() error {
	if err := t.Check(); err != nil {
		return err
	}
	if t.Key == "" {
		t.Key = config.ClientEnv().APIKey
	}
	if t.Key != "" {
		return nil
	}
	var err error
	t.Key, err = demo.SavedKey(t.DataDir, "secret", t.Env)
	return err
}

// Client is a client of the target (New).
func (t *Target) Client(opts ...revops.Option) (*revops.Client, error) {
	return New(t.API, t.Key, opts...)
}

// Connect resolves the target (Resolve) and returns its client.
func (t *Target) Connect() (*revops.Client, error) {
	if err := t.Resolve(); err != nil {
		return nil, err
	}
	return t.Client()
}
