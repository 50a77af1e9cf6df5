package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/idempotency"
)

// keysOnly is the storage of a request whose key is already claimed: it counts what
// runOwned does with the claim.
type keysOnly struct {
	Storage
	completed, released int
	body                string
}

func (k *keysOnly) CompleteIdempotencyKey(_ context.Context, _ *idempotency.Answer, _ int, body []byte) error {
	k.completed++
	k.body = string(body)
	return nil
}

func (k *keysOnly) ReleaseIdempotencyKey(context.Context, *idempotency.Answer) error {
	k.released++
	return nil
}

// A handler that panics after its 2xx went out (CONTRACT §14): the answer sent is kept
// for the key's retries, as sent, and no error envelope is appended to it; one that
// panics before answering frees the key and answers 500.
func TestPanicAfterTheAnswerKeepsIt(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	for _, tc := range []struct {
		name             string
		handler          gin.HandlerFunc
		status           int
		body             string
		completed, freed int
	}{
		{"after", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", []byte(`{"ok":true}`)); panic("late") }, 200, `{"ok":true}`, 1, 0},
		{"before", func(*gin.Context) { panic("early") }, 500, "", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := &keysOnly{}
			s := &Server{store: keys}
			r := gin.New()
			r.Use(withRequestID(slog.New(slog.NewTextHandler(io.Discard, nil))), recoverPanics,
				func(c *gin.Context) { s.runOwned(c, &idempotency.Answer{}) })
			r.POST("/x", tc.handler)
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/x", nil))
			if rec.Code != tc.status || (tc.body != "" && rec.Body.String() != tc.body) {
				t.Fatalf("answer %d %q, want %d %q", rec.Code, rec.Body, tc.status, tc.body)
			}
			if keys.completed != tc.completed || keys.released != tc.freed || (tc.completed > 0 && keys.body != tc.body) {
				t.Fatalf("kept %d (%q), freed %d; want kept %d, freed %d", keys.completed, keys.body, keys.released, tc.completed, tc.freed)
			}
		})
	}
}
