package revops

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Error is an answer of the API that is not 2xx (CONTRACT §4). Get it with errors.As:
//
//	var apiErr *revops.Error
//	if errors.As(err, &apiErr) && apiErr.Code == "invalid_state_transition" { … }
type Error struct {
	Status    int       // HTTP status
	Type      ErrorType // e.g. ErrorTypeInvalidRequestError
	Code      string    // e.g. "parameter_invalid", "resource_missing", "rate_limited"
	Message   string
	Param     string  // the one field at fault, when there is one
	RequestID string  // quote it when asking for support
	Errors    []Fault // every fault of a validation error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "revops: %d", e.Status)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Param != "" {
		b.WriteString(" (param " + e.Param + ")")
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	return b.String()
}

// newError reads the error envelope; an answer without one (a proxy's 502 page) keeps its
// status and the status text, never the body, which could hold anything.
func newError(res *response) *Error {
	e := &Error{Status: res.status}
	var env errorEnvelope
	if json.Unmarshal(res.body, &env) == nil && env.Error.Code != "" {
		b := env.Error
		e.Type, e.Code, e.Message, e.Param, e.RequestID, e.Errors = b.Type, b.Code, b.Message, b.Param, b.RequestID, b.Errors
	} else {
		e.Message = http.StatusText(res.status)
	}
	if e.RequestID == "" {
		e.RequestID = res.header.Get("X-Request-Id")
	}
	return e
}

// ErrMissingArgument is a call made without a required argument (an empty id, nil
// params or body); the request is not sent.
var ErrMissingArgument = errors.New("missing argument")

func missingArgument(method, arg string) error {
	return fmt.Errorf("revops: %s: %s is required: %w", method, arg, ErrMissingArgument)
}
