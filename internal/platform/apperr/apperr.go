// Package apperr holds the domain errors every layer shares. Business code returns them
// (wrapped with %w) and chooses no HTTP status: the edge maps them to a status and the
// CONTRACT §4 envelope in one place (api/httperr), for the API and the dashboard alike.
package apperr

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors, wrapped with context where they are returned.
var (
	ErrNotFound = errors.New("not found")
	// ErrStatementTimeout is a database statement stopped by its statement timeout: its
	// transaction rolled back, so nothing changed; the edge answers 503 with Retry-After
	// and no internals (CONTRACT §4, §21).
	ErrStatementTimeout = errors.New("statement timeout")
)

// Fault is one problem with one field of a request.
type Fault struct {
	Param   string `json:"param"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Fault codes of CONTRACT §4.
const (
	CodeParameterMissing  = "parameter_missing"
	CodeParameterInvalid  = "parameter_invalid"
	CodeUnknownParameter  = "unknown_parameter"
	CodeParameterReadOnly = "parameter_read_only"
	CodeInvalidJSON       = "invalid_json"
)

// ValidationError lists every fault found in a request (400).
type ValidationError struct {
	Faults []Fault
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Faults))
	for i, f := range e.Faults {
		parts[i] = f.Param + ": " + f.Message
	}
	return "invalid request: " + strings.Join(parts, "; ")
}

// Faults collects faults while a request is validated.
type Faults []Fault

// Add records a fault.
func (fs *Faults) Add(param, code, format string, args ...any) {
	*fs = append(*fs, Fault{Param: param, Code: code, Message: fmt.Sprintf(format, args...)})
}

// Missing records a required field that is absent.
func (fs *Faults) Missing(param string) {
	fs.Add(param, CodeParameterMissing, "%s is required.", param)
}

// Invalid records a field whose value is wrong.
func (fs *Faults) Invalid(param, format string, args ...any) {
	fs.Add(param, CodeParameterInvalid, format, args...)
}

// Err returns a *ValidationError when any fault was recorded, else nil.
func (fs Faults) Err() error {
	if len(fs) == 0 {
		return nil
	}
	return &ValidationError{Faults: fs}
}

// ConflictError is a request that is valid but clashes with the current state (409).
// Err, when set, is the owning package's error value (store.ErrReplayJobLimit…), so that
// callers can test it with errors.Is, as with InvalidError.
type ConflictError struct {
	Err     error
	Code    string // invalid_state_transition, transaction_id_reused, delivery_in_progress…
	Message string
}

func (e *ConflictError) Error() string { return e.Code + ": " + e.Message }

func (e *ConflictError) Unwrap() error { return e.Err }

// Conflict builds a *ConflictError.
func Conflict(code, format string, args ...any) error {
	return &ConflictError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ConflictOn builds a *ConflictError around the package's error value err.
func ConflictOn(err error, code, format string, args ...any) error {
	return &ConflictError{Err: err, Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidError is a request the caller must change, named by one code and, when one
// parameter is at fault, by that parameter. Err is the owning package's error value
// (store.ErrBadCursor, webhook.ErrURLNotAllowed…) so that callers can test it with
// errors.Is; the edge chooses the status (400), never the package that returns it.
type InvalidError struct {
	Err     error
	Code    string // parameter_invalid, invalid_json, url_not_allowed, too_many_endpoints…
	Param   string
	Message string
}

func (e *InvalidError) Error() string { return e.Code + ": " + e.Message }

func (e *InvalidError) Unwrap() error { return e.Err }

// Invalid builds an *InvalidError around the package's error value err.
func Invalid(err error, code, param, format string, args ...any) error {
	return &InvalidError{Err: err, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// NotFoundError is ErrNotFound with words of its own, for an object that exists but
// whose part asked for does not (the private key of an ed25519 endpoint, CONTRACT §25):
// the edge answers 404 resource_missing with Message.
type NotFoundError struct {
	Message string
}

func (e *NotFoundError) Error() string { return "not found: " + e.Message }

func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// NotFound builds a *NotFoundError.
func NotFound(format string, args ...any) error {
	return &NotFoundError{Message: fmt.Sprintf(format, args...)}
}

// BusyError is a request refused because what it needs is busy now: a lock held past the
// lock timeout (lock_timeout), a bound on concurrent work (rate_limited). It changed
// nothing; the caller retries after RetryAfter (CONTRACT §21). The edge answers 429.
type BusyError struct {
	Err        error
	Code       string // lock_timeout, rate_limited
	Message    string
	RetryAfter time.Duration
}

func (e *BusyError) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *BusyError) Unwrap() error { return e.Err }

// Codes of BusyError (CONTRACT §4, §21).
const (
	CodeLockTimeout = "lock_timeout"
	CodeRateLimited = "rate_limited"
)

// Busy builds a *BusyError around its cause err (may be nil).
func Busy(err error, code string, retryAfter time.Duration, format string, args ...any) error {
	return &BusyError{Err: err, Code: code, RetryAfter: retryAfter, Message: fmt.Sprintf(format, args...)}
}

// ForbiddenError is a request its credentials may not make, or not this way: a public
// key on a secret route, plain HTTP behind a TLS proxy (403).
type ForbiddenError struct {
	Code    string // secret_key_required, https_required
	Message string
}

func (e *ForbiddenError) Error() string { return e.Code + ": " + e.Message }

// Forbidden builds a *ForbiddenError.
func Forbidden(code, format string, args ...any) error {
	return &ForbiddenError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrInvalidTransition is wrapped by every refused move of a state machine (deals,
// accounts), beside the *ConflictError that words it.
var ErrInvalidTransition = errors.New("invalid state transition")

// Summary lists "param:code" of every fault of a validation error, space-separated: a
// compact form for tests and logs. It is "" for nil and the error's text for any other error.
func Summary(err error) string {
	if err == nil {
		return ""
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	out := make([]string, len(ve.Faults))
	for i, f := range ve.Faults {
		out[i] = f.Param + ":" + f.Code
	}
	return strings.Join(out, " ")
}
