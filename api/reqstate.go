package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/idempotency"
)

// The request state a middleware hands to the handler, in the request's context under
// keys of their own types (no string keys, no unchecked casts): the body the idempotent
// middleware read once, and the claim it owns.
type (
	bodyKey  struct{}
	claimKey struct{}
)

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
