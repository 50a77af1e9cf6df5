package api

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/platform/fingerprint"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

const (
	headerIdempotencyKey = "Idempotency-Key"
	ctxAnswer            = "revops.idempotent_answer"
	// claimWait is how long a request waits for the first request with its key to
	// finish before it answers 409 idempotency_key_in_use: identical retries that
	// arrive together get the first answer, not an error.
	claimWait = 5 * time.Second
	claimPoll = 25 * time.Millisecond
)

// idempotent implements CONTRACT §14 for POST, PATCH and DELETE. It runs after the rate
// limit and after the body's content type and size checks (§3), before the handler.
// The handler takes the owned claim (claimOf) and passes its answer down with its
// business call (replyAs, replyWith), which keeps it inside the change's transaction. A
// handler whose answer no transaction kept has its 2xx kept right after it answered.
func (s *Server) idempotent(c *gin.Context) {
	m := c.Request.Method
	values := c.Request.Header.Values(headerIdempotencyKey)
	if (m != http.MethodPost && m != http.MethodPatch && m != http.MethodDelete) || len(values) == 0 {
		c.Next()
		return
	}
	body, err := readBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	c.Set(ctxBody, body) // read and checked once: the handler's readBody takes it from here
	if len(values) > 1 || !validIdempotencyKey(values[0]) {
		abort(c, http.StatusBadRequest, typeInvalidRequest, "parameter_invalid",
			"Idempotency-Key must be one header of 1 to 255 printable ASCII characters.", headerIdempotencyKey)
		return
	}
	env := principal(c).Env
	claim, err := s.claimKey(c.Request.Context(), env, store.IdempotentRequest{
		Key: values[0], Method: m, Path: c.Request.URL.Path, Fingerprint: fingerprint.Of(body),
	})
	if err != nil {
		fail(c, err)
		return
	}
	switch claim.Outcome {
	case store.ClaimReplay:
		c.Header("Idempotent-Replayed", "true")
		c.Data(claim.Status, "application/json; charset=utf-8", claim.Body)
		c.Abort()
		return
	case store.ClaimReused:
		abort(c, http.StatusConflict, typeInvalidRequest, "idempotency_key_reused",
			"This Idempotency-Key was already used with another method, path or body; use a new key for a new request.", "")
		return
	case store.ClaimInUse:
		abort(c, http.StatusConflict, typeInvalidRequest, "idempotency_key_in_use",
			"A request with this Idempotency-Key is still running; retry once it has answered.", "")
		return
	}
	s.runOwned(c, claim.Answer)
}

// claimKey claims the key, waiting while its first request still runs.
func (s *Server) claimKey(ctx context.Context, env models.Env, req store.IdempotentRequest) (store.Claim, error) {
	deadline := time.Now().Add(claimWait)
	for {
		claim, err := s.store.ClaimIdempotencyKey(ctx, env, req)
		if err != nil || claim.Outcome != store.ClaimInUse || time.Now().After(deadline) {
			return claim, err
		}
		select {
		case <-ctx.Done():
			return claim, nil
		case <-time.After(claimPoll):
		}
	}
}

// runOwned runs the handler with the claim and sends what was kept, so that the first
// answer and every replay are the same bytes.
func (s *Server) runOwned(c *gin.Context, a *store.Answer) {
	c.Set(ctxAnswer, a)
	buf := &bufferedWriter{ResponseWriter: c.Writer, status: http.StatusOK}
	c.Writer = buf
	// The key's bookkeeping outlives a client that hung up: a change may have committed.
	bg, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), 5*time.Second)
	defer cancel()
	defer func() {
		c.Writer = buf.ResponseWriter
		if r := recover(); r != nil {
			s.releaseKey(c, bg, a)
			panic(r)
		}
	}()
	c.Next()
	c.Writer = buf.ResponseWriter
	if buf.status < 200 || buf.status > 299 {
		s.releaseKey(c, bg, a)
		buf.send(c)
		return
	}
	status, body, kept := a.Kept()
	if !kept {
		// No write transaction kept it (no change, or a route without one): keep it now.
		if err := s.store.CompleteIdempotencyKey(bg, a, buf.status, buf.body.Bytes()); err != nil {
			logger(c).Error("keep idempotent answer", "err", err)
		}
		buf.send(c)
		return
	}
	c.Data(status, "application/json; charset=utf-8", body)
}

func (s *Server) releaseKey(c *gin.Context, ctx context.Context, a *store.Answer) {
	if err := s.store.ReleaseIdempotencyKey(ctx, a); err != nil {
		logger(c).Error("release idempotency key", "err", err)
	}
}

// claimOf is the owned claim the idempotent middleware left for the handler (nil: the
// request has no Idempotency-Key).
func claimOf(c *gin.Context) *store.Answer {
	v, _ := c.Get(ctxAnswer)
	a, _ := v.(*store.Answer)
	return a
}

// replyAs is how a handler's change answers an idempotent request: with status, and
// the change's result as render writes it, so that the first answer and every replay
// are the same bytes. The handler passes it to its business call, which keeps the
// answer in the change's own transaction.
func replyAs[T any](c *gin.Context, status int) store.Reply[T] {
	return store.NewReply(claimOf(c), status, func(v T) ([]byte, error) { return marshalJSON(v) })
}

// replyWith is replyAs for a change whose result the handler converts before it renders
// it (render: what the response sends), so that the answer kept is that rendering.
func replyWith[T, R any](c *gin.Context, status int, render func(T) R) store.Reply[T] {
	return store.NewReply(claimOf(c), status, func(v T) ([]byte, error) { return marshalJSON(render(v)) })
}

// validIdempotencyKey: 1–255 printable ASCII characters (CONTRACT §14).
func validIdempotencyKey(k string) bool {
	if len(k) < 1 || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// bufferedWriter holds the handler's response until the key's bookkeeping is done.
type bufferedWriter struct {
	gin.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *bufferedWriter) WriteHeader(code int) {
	if code > 0 && !w.wrote {
		w.status = code
	}
}
func (w *bufferedWriter) WriteHeaderNow() { w.wrote = true }
func (w *bufferedWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.body.Write(b)
}
func (w *bufferedWriter) WriteString(s string) (int, error) {
	w.wrote = true
	return w.body.WriteString(s)
}
func (w *bufferedWriter) Status() int   { return w.status }
func (w *bufferedWriter) Size() int     { return w.body.Len() }
func (w *bufferedWriter) Written() bool { return w.wrote }
func (w *bufferedWriter) Flush()        {}

// send writes the held response to the real writer.
func (w *bufferedWriter) send(c *gin.Context) {
	c.Writer.WriteHeader(w.status)
	c.Writer.WriteHeaderNow()
	_, _ = c.Writer.Write(w.body.Bytes())
}
