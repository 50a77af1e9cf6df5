package api

import (
	"context"
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/keys"
)

// The request state a middleware hands to the handlers after it, in the request's
// context under keys of their own types (no string keys, no unchecked casts): the
// request's id and logger, the authenticated caller, the body the idempotent middleware
// read once, and the claim it owns.
type (
	requestKey   struct{}
	principalKey struct{}
	bodyKey      struct{}
	claimKey     struct{}
)

// request is what withRequestID gives every request.
type request struct {
	id  string
	log *slog.Logger
}

// withRequest records the request's id and its logger (which names the id).
func withRequest(c *gin.Context, id string, log *slog.Logger) {
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), requestKey{}, request{id: id, log: log}))
}

// requestID is the request's id ("" before withRequestID).
func requestID(c *gin.Context) string {
	r, _ := c.Request.Context().Value(requestKey{}).(request)
	return r.id
}

// logger is the request's logger, or the default one before withRequestID.
func logger(c *gin.Context) *slog.Logger {
	if r, ok := c.Request.Context().Value(requestKey{}).(request); ok && r.log != nil {
		return r.log
	}
	return slog.Default()
}

// withPrincipal records the authenticated caller.
func withPrincipal(c *gin.Context, p keys.Principal) {
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), principalKey{}, p))
}

// principal is the authenticated caller; only routes behind authenticate call it.
func principal(c *gin.Context) keys.Principal {
	p, _ := c.Request.Context().Value(principalKey{}).(keys.Principal)
	return p
}

// withBody records the body read (and checked) by a middleware; readBody returns it.
func withBody(c *gin.Context, body []byte) {
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), bodyKey{}, body))
}

// bodyOf is the body a middleware read, if one did.
func bodyOf(c *gin.Context) ([]byte, bool) {
	body, ok := c.Request.Context().Value(bodyKey{}).([]byte)
	return body, ok
}

// withClaim records the owned claim of the request's Idempotency-Key.
func withClaim(c *gin.Context, a *idempotency.Answer) {
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), claimKey{}, a))
}

// claimOf is the owned claim the idempotent middleware left for the handler (nil: the
// request has no Idempotency-Key).
func claimOf(c *gin.Context) *idempotency.Answer {
	a, _ := c.Request.Context().Value(claimKey{}).(*idempotency.Answer)
	return a
}
