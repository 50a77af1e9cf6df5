package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/keys"
)

// Error types of CONTRACT §4.
const (
	typeAuthentication = "authentication_error"
	typePermission     = "permission_error"
	typeInvalidRequest = "invalid_request_error"
	typeRateLimit      = "rate_limit_error"
	typeAPI            = "api_error"
)

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Type      string         `json:"type"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Param     string         `json:"param,omitempty"`
	RequestID string         `json:"request_id"`
	Errors    []apperr.Fault `json:"errors,omitempty"`
}

// abort ends the request with an error envelope.
func abort(c *gin.Context, status int, typ, code, message, param string) {
	abortJSON(c, status, errorBody{Error: errorDetail{
		Type: typ, Code: code, Message: message, Param: param, RequestID: requestID(c),
	}})
}

func typeFor(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return typeAuthentication
	case http.StatusForbidden:
		return typePermission
	case http.StatusTooManyRequests:
		return typeRateLimit
	}
	if status >= 500 {
		return typeAPI
	}
	return typeInvalidRequest
}

// fail is the one place that maps domain errors to responses.
func fail(c *gin.Context, err error) {
	var (
		verr *apperr.ValidationError
		cerr *apperr.ConflictError
		rerr *apperr.RequestError
		ierr *apperr.InvalidError
	)
	switch {
	case errors.As(err, &verr):
		first := verr.Faults[0]
		abortJSON(c, http.StatusBadRequest, errorBody{Error: errorDetail{
			Type: typeInvalidRequest, Code: first.Code, Message: first.Message, Param: first.Param,
			RequestID: requestID(c), Errors: verr.Faults,
		}})
	case errors.As(err, &cerr):
		abort(c, http.StatusConflict, typeInvalidRequest, cerr.Code, cerr.Message, "")
	case errors.As(err, &rerr):
		abort(c, rerr.Status, typeFor(rerr.Status), rerr.Code, rerr.Message, rerr.Param)
	case errors.As(err, &ierr): // until the shared statusOf: answered as RequestError{400} was
		abort(c, http.StatusBadRequest, typeInvalidRequest, ierr.Code, ierr.Message, ierr.Param)
	case errors.Is(err, apperr.ErrNotFound):
		abort(c, http.StatusNotFound, typeInvalidRequest, "resource_missing", "No such object.", "")
	case errors.Is(err, keys.ErrMissing), errors.Is(err, keys.ErrInvalid), errors.Is(err, keys.ErrExpired):
		unauthorized(c, err)
	default:
		logger(c).Error("request failed", "request_id", requestID(c), "err", err)
		abort(c, http.StatusInternalServerError, typeAPI, "internal_error", "An internal error occurred. Retry later; quote the request id if it persists.", "")
	}
}

func unauthorized(c *gin.Context, err error) {
	c.Header("WWW-Authenticate", `Bearer realm="revops"`)
	switch {
	case errors.Is(err, keys.ErrMissing):
		abort(c, http.StatusUnauthorized, typeAuthentication, "missing_api_key",
			"No API key provided. Send it as 'Authorization: Bearer <API_KEY>'.", "")
	case errors.Is(err, keys.ErrExpired):
		abort(c, http.StatusUnauthorized, typeAuthentication, "api_key_expired",
			"This API key has expired after being rolled. Use its replacement.", "")
	default:
		abort(c, http.StatusUnauthorized, typeAuthentication, "invalid_api_key", "Invalid API key provided.", "")
	}
}

func logger(c *gin.Context) *slog.Logger {
	if l, ok := c.Get(ctxLogger); ok {
		if lg, ok := l.(*slog.Logger); ok {
			return lg
		}
	}
	return slog.Default()
}
