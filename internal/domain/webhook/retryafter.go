package webhook

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter is the longest Retry-After taken as meant: a longer one (past any retry
// schedule of CONTRACT §13, whose bound the delivery activity applies anyway) is noise,
// ignored like a malformed one, and keeps every figure far from time.Duration's range.
const maxRetryAfter = 365 * 24 * time.Hour

// RetryAfter is the wait a receiver asked for in a Retry-After header (RFC 9110 §10.2.3):
// delta-seconds or an HTTP-date, from now. The header comes from outside: anything else
// (empty, negative, fractional, signed, too long, a date past or too far) is 0, no wait
// asked, and the retry policy decides alone.
func RetryAfter(value string, now time.Time) time.Duration {
	v := strings.TrimSpace(value)
	if v == "" || len(v) > 64 {
		return 0
	}
	if v[0] >= '0' && v[0] <= '9' {
		if len(v) > 11 || strings.Trim(v, "0123456789") != "" {
			return 0 // digits only: ParseUint alone would take "+5"; 11 digits fit in int64 seconds
		}
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || time.Duration(secs) > maxRetryAfter/time.Second {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	d := at.Sub(now)
	if d <= 0 || d > maxRetryAfter {
		return 0
	}
	return d
}

// asksToWait tells whether a response status may carry a Retry-After the delivery honours
// (CONTRACT §23): 429 Too Many Requests and 503 Service Unavailable.
func asksToWait(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}
