package api

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// A panic in a handler answers 500 api_error with the request id and no internals.
func TestPanicsBecome500WithoutInternals(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(withRequestID(slog.New(slog.NewTextHandler(io.Discard, nil))), recoverPanics)
	r.GET("/boom", func(*gin.Context) { panic("secret internal detail sk_live_x") })
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/boom", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d", rec.Code)
	}
	var body errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.Error.Type != "api_error" || body.Error.RequestID == "" || body.Error.RequestID != rec.Header().Get("X-Request-Id") {
		t.Errorf("envelope %+v", body.Error)
	}
	if strings.Contains(rec.Body.String(), "secret") || strings.Contains(rec.Body.String(), "sk_live") {
		t.Errorf("internals leaked: %s", rec.Body)
	}
}
