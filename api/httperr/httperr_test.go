package httperr

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/platform/apperr"
)

// errValue stands for a package's error value (store.ErrBadCursor…).
var errValue = errors.New("bad value")

func TestOf(t *testing.T) {
	var fs apperr.Faults
	fs.Missing("name")
	fs.Invalid("amount", "amount must be positive.")
	tests := []struct {
		name string
		err  error
		want Problem
	}{
		{"validation: first fault, all listed", fmt.Errorf("create: %w", fs.Err()), Problem{Status: 400, Type: TypeInvalidRequest,
			Code: apperr.CodeParameterMissing, Message: "name is required.", Param: "name", Faults: fs}},
		{"conflict", apperr.Conflict("invalid_state_transition", "No."), Problem{Status: 409, Type: TypeInvalidRequest,
			Code: "invalid_state_transition", Message: "No."}},
		{"invalid: 400 as a RequestError of 400 was", fmt.Errorf("list: %w", apperr.Invalid(errValue, apperr.CodeParameterInvalid, "starting_after", "bad %s", "x")),
			Problem{Status: 400, Type: TypeInvalidRequest, Code: apperr.CodeParameterInvalid, Message: "bad x", Param: "starting_after"}},
		{"edge request error keeps its status", Request(http.StatusRequestEntityTooLarge, "request_too_large", "", "Too large."),
			Problem{Status: 413, Type: TypeInvalidRequest, Code: "request_too_large", Message: "Too large."}},
		{"not found", fmt.Errorf("deal: %w", apperr.ErrNotFound), Problem{Status: 404, Type: TypeInvalidRequest,
			Code: CodeNotFound, Message: "No such object."}},
		{"not found with words of its own", fmt.Errorf("secret: %w", apperr.NotFound("No %s here.", "key")), Problem{Status: 404, Type: TypeInvalidRequest,
			Code: CodeNotFound, Message: "No key here."}},
		{"missing key", keys.ErrMissing, Problem{Status: 401, Type: TypeAuthentication, Code: "missing_api_key",
			Message: "No API key provided. Send it as 'Authorization: Bearer <API_KEY>'."}},
		{"expired key", keys.ErrExpired, Problem{Status: 401, Type: TypeAuthentication, Code: "api_key_expired",
			Message: "This API key has expired after being rolled. Use its replacement."}},
		{"invalid key", keys.ErrInvalid, Problem{Status: 401, Type: TypeAuthentication, Code: "invalid_api_key",
			Message: "Invalid API key provided."}},
		{"lock timeout: 429 with Retry-After 1", fmt.Errorf("patch deal: %w", apperr.Busy(errValue, apperr.CodeLockTimeout, time.Second, "Busy.")),
			Problem{Status: 429, Type: TypeRateLimit, Code: apperr.CodeLockTimeout,
				Message: "Busy. Retry after the number of seconds in Retry-After.", RetryAfter: time.Second}},
		{"busy under a second still says 1 s", apperr.Busy(nil, apperr.CodeRateLimited, 0, "Busy."),
			Problem{Status: 429, Type: TypeRateLimit, Code: apperr.CodeRateLimited,
				Message: "Busy. Retry after the number of seconds in Retry-After.", RetryAfter: time.Second}},
		{"statement timeout: 503, no internals", fmt.Errorf("list deals: %w: %w", apperr.ErrStatementTimeout, errors.New("ERROR: canceling statement due to statement timeout (SQLSTATE 57014)")),
			Problem{Status: 503, Type: TypeAPI, Code: CodeUnavailable,
				Message: "The request took too long and was stopped; nothing was changed. Retry after the number of seconds in Retry-After.", RetryAfter: StatementRetryAfter}},
		{"anything else", errors.New("connection refused"), Problem{Status: 500, Type: TypeAPI, Code: CodeInternal,
			Message: "An internal error occurred. Retry later; quote the request id if it persists."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(tt.err); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestInvalidUnwrapsToThePackageValue(t *testing.T) {
	if err := fmt.Errorf("x: %w", apperr.Invalid(errValue, "c", "p", "m")); !errors.Is(err, errValue) {
		t.Fatal("errors.Is does not reach the package's value")
	}
}
