// Package httperr is the one place that chooses an HTTP status for an error. The packages
// below the edge return error values (apperr.ErrNotFound, *apperr.ValidationError,
// store.ErrBadCursor wrapped in an *apperr.InvalidError…) and never a status; the API and
// the dashboard both turn them into a status and the words of CONTRACT §4 with Of, so that
// one error reads the same on either side. It lives under api/ (the edge) in a package of
// its own because api imports the dashboard: both can import it without a cycle.
package httperr

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/platform/apperr"
)

// Error types of CONTRACT §4.
const (
	TypeAuthentication = "authentication_error"
	TypePermission     = "permission_error"
	TypeInvalidRequest = "invalid_request_error"
	TypeRateLimit      = "rate_limit_error"
	TypeAPI            = "api_error"
)

// Codes Of gives to errors that carry no code of their own: the dashboard tells them
// apart to word its pages.
const (
	CodeNotFound    = "resource_missing"
	CodeInternal    = "internal_error"
	CodeUnavailable = "service_unavailable"
)

// StatementRetryAfter is the Retry-After of a request stopped by the statement timeout: it
// was heavy (it ran the whole timeout), so the client is asked to wait longer than the 1 s
// of a lock timeout before trying again.
const StatementRetryAfter = 5 * time.Second

// Problem is what a client is told about an error: the members of the CONTRACT §4
// envelope, and the status that carries it.
type Problem struct {
	Status  int
	Type    string
	Code    string
	Message string
	Param   string
	Faults  []apperr.Fault // every fault of a validation error; nil for any other error
	// RetryAfter, when set, is sent as Retry-After (whole seconds, at least 1).
	RetryAfter time.Duration
}

// Of maps err to its Problem. An error it does not know is a 500 internal_error whose
// details are for the log only (the message says nothing of them).
func Of(err error) Problem {
	var (
		verr *apperr.ValidationError
		cerr *apperr.ConflictError
		ierr *apperr.InvalidError
		berr *apperr.BusyError
		ferr *apperr.ForbiddenError
		nerr *apperr.NotFoundError
		rerr *RequestError
		uerr *routeError
	)
	switch {
	case errors.As(err, &verr):
		// The first fault fills the envelope; errors lists them all (CONTRACT §4).
		first := verr.Faults[0]
		p := problem(http.StatusBadRequest, first.Code, first.Message, first.Param)
		p.Faults = verr.Faults
		return p
	case errors.As(err, &cerr):
		return problem(http.StatusConflict, cerr.Code, cerr.Message, "")
	case errors.As(err, &ierr):
		return problem(http.StatusBadRequest, ierr.Code, ierr.Message, ierr.Param)
	case errors.As(err, &berr):
		p := problem(http.StatusTooManyRequests, berr.Code, berr.Message+" Retry after the number of seconds in Retry-After.", "")
		p.RetryAfter = max(berr.RetryAfter, time.Second)
		return p
	case errors.As(err, &ferr):
		return problem(http.StatusForbidden, ferr.Code, ferr.Message, "")
	case errors.As(err, &uerr):
		return problem(uerr.status, uerr.code, uerr.message, "")
	case errors.As(err, &rerr):
		return problem(rerr.Status, rerr.Code, rerr.Message, rerr.Param)
	case errors.Is(err, apperr.ErrStatementTimeout):
		// No internals (CONTRACT §4): the statement or its timeout are for the log.
		p := problem(http.StatusServiceUnavailable, CodeUnavailable,
			"The request took too long and was stopped; nothing was changed. Retry after the number of seconds in Retry-After.", "")
		p.RetryAfter = StatementRetryAfter
		return p
	case errors.As(err, &nerr):
		return problem(http.StatusNotFound, CodeNotFound, nerr.Message, "")
	case errors.Is(err, apperr.ErrNotFound):
		return problem(http.StatusNotFound, CodeNotFound, "No such object.", "")
	case errors.Is(err, keys.ErrMissing):
		return problem(http.StatusUnauthorized, "missing_api_key",
			"No API key provided. Send it as 'Authorization: Bearer <API_KEY>'.", "")
	case errors.Is(err, keys.ErrExpired):
		return problem(http.StatusUnauthorized, "api_key_expired",
			"This API key has expired after being rolled. Use its replacement.", "")
	case errors.Is(err, keys.ErrInvalid):
		return problem(http.StatusUnauthorized, "invalid_api_key", "Invalid API key provided.", "")
	default:
		return problem(http.StatusInternalServerError, CodeInternal,
			"An internal error occurred. Retry later; quote the request id if it persists.", "")
	}
}

func problem(status int, code, message, param string) Problem {
	return Problem{Status: status, Type: TypeOf(status), Code: code, Message: message, Param: param}
}

// TypeOf is the CONTRACT §4 error type of a status.
func TypeOf(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return TypeAuthentication
	case http.StatusForbidden:
		return TypePermission
	case http.StatusTooManyRequests:
		return TypeRateLimit
	}
	if status >= 500 {
		return TypeAPI
	}
	return TypeInvalidRequest
}

// RequestError is a client error the edge finds and words itself, with its status: a body
// too large (413), not sent as JSON (415), not JSON at all (400 invalid_json), a query
// parameter no filter can hold, a dashboard form's notice (400, 409). Packages below the
// edge return an *apperr.InvalidError instead, and Of chooses its status.
type RequestError struct {
	Status  int
	Code    string
	Message string
	Param   string
}

func (e *RequestError) Error() string { return e.Code + ": " + e.Message }

// routeError is a request no route answers: its path (404) or its method (405).
type routeError struct {
	status        int
	code, message string
}

func (e *routeError) Error() string { return e.code + ": " + e.message }

// NoRoute is the error of a request whose path no route has.
func NoRoute(method, path string) error {
	return &routeError{http.StatusNotFound, CodeNotFound, "Unrecognized request URL (" + method + " " + path + ")."}
}

// NoMethod is the error of a request whose path has routes, none for its method.
func NoMethod(method, path string) error {
	return &routeError{http.StatusMethodNotAllowed, "method_not_allowed", "Method " + method + " is not allowed on " + path + "."}
}

// Request builds a *RequestError.
func Request(status int, code, param, format string, args ...any) error {
	return &RequestError{Status: status, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}
