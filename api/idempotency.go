package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/platform/fingerprint"
)

// idempotent implements CONTRACT §14 for POST, PATCH and DELETE. It runs after the rate
// limit and after the body's content type and size checks (§3), before the handler.
// The handler takes the owned claim (claimOf) and passes its answer down with its
// business call (replyAs), which keeps it inside the change's transaction;
// render then sends the bytes kept. A handler whose answer no transaction kept has its
// 2xx kept right after it answered.
func (s *Server) idempotent(c *gin.Context) {
	m := c.Request.Method
	values := c.Request.Header.Values(idempotency.HeaderKey)
	if (m != http.MethodPost && m != http.MethodPatch && m != http.MethodDelete) || len(values) == 0 {
		c.Next()
		return
	}
	body, err := readBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	withBody(c, body) // read and checked once: the handler's readBody takes it from here
	if len(values) > 1 || !idempotency.ValidKey(values[0]) {
		fail(c, idempotency.ErrInvalidKey)
		return
	}
	claim, err := idempotency.Take(c.Request.Context(), s.store, principal(c).Env, idempotency.Request{
		Key: values[0], Method: m, Path: c.Request.URL.Path, Fingerprint: fingerprint.Of(body),
	})
	if err != nil {
		fail(c, err)
		return
	}
	switch claim.Outcome {
	case idempotency.Replay:
		c.Header("Idempotent-Replayed", "true")
		c.Data(claim.Status, jsonContentType, claim.Body)
		c.Abort()
		return
	case idempotency.Reused:
		fail(c, idempotency.ErrReused)
		return
	case idempotency.InUse:
		fail(c, idempotency.ErrInUse)
		return
	}
	s.runOwned(c, claim.Answer)
}

// runOwned runs the handler with the claim. A change keeps its answer in its own
// transaction and render sends those bytes; a 2xx that no transaction kept (no change,
// or a route without one) is kept here, from what the handler wrote; any other answer
// frees the key for a retry.
func (s *Server) runOwned(c *gin.Context, a *idempotency.Answer) {
	withClaim(c, a)
	rec := &recordingWriter{ResponseWriter: c.Writer}
	c.Writer = rec
	// The key's bookkeeping outlives a client that hung up: a change may have committed.
	bg, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), 5*time.Second)
	defer cancel()
	defer func() {
		c.Writer = rec.ResponseWriter
		if r := recover(); r != nil {
			if st := rec.Status(); rec.Written() && st >= 200 && st <= 299 {
				// The answer went out before the panic: keep it, so that a retry gets it
				// instead of running again, and append no error to what was sent.
				logger(c).Error("panic after the answer was sent", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				s.keepWritten(c, bg, a, st, rec.body.Bytes())
				c.Abort()
				return
			}
			s.releaseKey(c, bg, a)
			panic(r)
		}
	}()
	c.Next()
	status := rec.Status()
	switch _, _, kept := a.Kept(); {
	case status < 200 || status > 299:
		s.releaseKey(c, bg, a)
	case !kept:
		s.keepWritten(c, bg, a, status, rec.body.Bytes())
	}
}

// keepWritten keeps a 2xx answer that no transaction kept, as the handler wrote it.
func (s *Server) keepWritten(c *gin.Context, ctx context.Context, a *idempotency.Answer, status int, body []byte) {
	if _, _, kept := a.Kept(); kept {
		return
	}
	if err := s.store.CompleteIdempotencyKey(ctx, a, status, body); err != nil {
		logger(c).Error("keep idempotent answer", "err", err)
	}
}

func (s *Server) releaseKey(c *gin.Context, ctx context.Context, a *idempotency.Answer) {
	if err := s.store.ReleaseIdempotencyKey(ctx, a); err != nil {
		logger(c).Error("release idempotency key", "err", err)
	}
}

// replyAs is how a handler's change answers an idempotent request: with status and T,
// the domain package's answer (deals.Object, meters.Deleted…), which the handler renders
// with render. The handler passes it to its business call, which converts its result to
// T and keeps it in the change's own transaction, rendered by the encoder render uses:
// the first answer and every replay are the same bytes.
func replyAs[T any](c *gin.Context, status int) idempotency.Reply[T] {
	return idempotency.For[T](claimOf(c), status)
}

// recordingWriter keeps a copy of what the handler writes, for an answer no
// transaction kept.
type recordingWriter struct {
	gin.ResponseWriter
	body bytes.Buffer
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *recordingWriter) WriteString(s string) (int, error) {
	w.body.WriteString(s)
	return w.ResponseWriter.WriteString(s)
}
