package webhook

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Retry-After comes from the receiver: only delta-seconds and HTTP-dates in the future,
// within a year, are a wait; anything else is none (CONTRACT §23, §15).
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	date := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	tests := []struct {
		value string
		want  time.Duration
	}{
		{"120", 2 * time.Minute},
		{" 3600 ", time.Hour},
		{"0", 0},
		{"", 0},
		{"-5", 0},
		{"+5", 0},
		{"1.5", 0},
		{"5s", 0},
		{"0x10", 0},
		{"120, 240", 0},
		{"99999999999", 0},                   // 3,000 years: past the bound, ignored
		{"999999999999999999999999", 0},      // past int64
		{"31536000", 365 * 24 * time.Hour},   // one year: the longest taken
		{"31536001", 0},                      // a second more: ignored
		{date(2 * time.Hour), 2 * time.Hour}, // IMF-fixdate
		{now.Add(90 * time.Minute).Format(time.RFC850), 90 * time.Minute},
		{now.Add(time.Minute).Format(time.ANSIC), time.Minute},
		{date(-time.Hour), 0},           // past
		{date(0), 0},                    // now
		{date(400 * 24 * time.Hour), 0}, // too far
		{"Fri, 27 Nov 2026 25:00:00 GMT", 0},
		{"tomorrow", 0},
		{string(make([]byte, 100)), 0},
	}
	for _, tt := range tests {
		if got := RetryAfter(tt.value, now); got != tt.want {
			t.Errorf("RetryAfter(%q) = %v, want %v", tt.value, got, tt.want)
		}
	}
}

// The sender reads Retry-After from 429 and 503 answers only, and reports a 410 as gone.
func TestSendReadsTheReceiversSignals(t *testing.T) {
	tests := []struct {
		status     int
		retryAfter string
		wantWait   time.Duration
		wantGone   bool
	}{
		{http.StatusTooManyRequests, "7200", 2 * time.Hour, false},
		{http.StatusServiceUnavailable, "60", time.Minute, false},
		{http.StatusServiceUnavailable, "soon", 0, false},
		{http.StatusInternalServerError, "7200", 0, false},
		{http.StatusGone, "7200", 0, true},
	}
	for _, tt := range tests {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", tt.retryAfter)
			w.WriteHeader(tt.status)
		}))
		s := &Sender{Client: srv.Client(), AckSentence: "ok", Timeout: 5 * time.Second}
		res := s.Send(t.Context(), Message{URL: srv.URL, Method: http.MethodPost, ID: "evt", Body: []byte("{}"), Secrets: []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
		srv.Close()
		if res.OK() || res.RetryAfter != tt.wantWait || res.Gone() != tt.wantGone || res.Permanent {
			t.Errorf("status %d Retry-After %q: %+v gone=%v, want wait %v gone=%v", tt.status, tt.retryAfter, res, res.Gone(), tt.wantWait, tt.wantGone)
		}
	}
}
