package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/textcheck"
)

// CONTRACT §15 at the edge of paths and query strings: what cannot be valid is refused
// here, once, before any query — PostgreSQL answers NUL and invalid UTF-8 with an error
// (a 500 otherwise), and a value that cannot match is not worth a round trip.

// pathIDs answers 404 for a route whose :id cannot be an id, or whose :key cannot be a
// meter's key, as for an unknown one.
func pathIDs(c *gin.Context) {
	id, isID := c.Params.Get("id")
	key, isKey := c.Params.Get("key")
	if isID && !textcheck.IsID(id) || isKey && !meters.ValidKey(key) {
		fail(c, apperr.ErrNotFound)
		return
	}
	c.Next()
}

// checkQuery refuses a query string with a value no filter can hold: not valid UTF-8, a
// NUL or another control character, or a malformed %-escape (which net/url would drop
// silently, answering as if the filter were absent). Unknown parameters are ignored, as
// before, but must be well-formed too.
func checkQuery(c *gin.Context) error {
	raw := c.Request.URL.RawQuery
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, kerr := url.QueryUnescape(k)
		keyOK := kerr == nil && textcheck.Line(key) == nil
		param := key
		if !keyOK {
			param = ""
		}
		val, verr := url.QueryUnescape(v)
		switch {
		case kerr != nil || verr != nil || strings.Contains(pair, ";"):
			return queryInvalid(param, "The query parameter %s is not correctly %%-encoded.", quoted(param))
		case !keyOK:
			return queryInvalid("", "A query parameter name is not valid UTF-8 or holds control characters.")
		}
		if err := textcheck.Line(val); err != nil {
			return queryInvalid(param, "%s %v.", param, err)
		}
	}
	return nil
}

// idQuery reads an optional query parameter that must be an id.
func idQuery(c *gin.Context, name string) (string, error) {
	v := c.Query(name)
	if v != "" && !textcheck.IsID(v) {
		return "", queryInvalid(name, "%s must be an object id (a UUID such as 0192f4a4-7c1e-7d2a-9f6e-3c1b2a4d5e6f).", name)
	}
	return v, nil
}

func queryInvalid(param, format string, args ...any) error {
	return httperr.Request(http.StatusBadRequest, apperr.CodeParameterInvalid, param, format, args...)
}

// quoted names a parameter in a message, or says "a query parameter" when it has no
// printable name.
func quoted(param string) string {
	if param == "" {
		return "(unnamed)"
	}
	return param
}

// limitQuery reads ?limit=, an integer from 1 to most: ok when it was given, a fault in
// fs when it is not such an integer (n is then what it read, 0 if not a number).
func limitQuery(c *gin.Context, most int, fs *apperr.Faults) (n int, ok bool) {
	v, ok := c.GetQuery("limit")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		fs.Invalid("limit", "limit must be an integer from 1 to %d.", most)
	}
	return n, true
}

// timeQuery reads the time query parameter name: RFC 3339, or with unixSeconds also
// integer Unix seconds; nil when absent or empty (a fault in fs when required). Usage
// and events times take both forms, as a usage timestamp does (CONTRACT §5); the meter
// values' from and to are RFC 3339 only (§18), each on a window's boundary.
func timeQuery(c *gin.Context, name string, required, unixSeconds bool, fs *apperr.Faults) *time.Time {
	v := c.Query(name)
	if v == "" {
		if required {
			fs.Missing(name)
		}
		return nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		t = t.UTC()
		return &t
	}
	if !unixSeconds {
		fs.Invalid(name, "%s must be an RFC 3339 time such as 2026-11-01T00:00:00Z (a + in an offset is sent as %%2B).", name)
		return nil
	}
	if sec, err := strconv.ParseInt(v, 10, 64); err == nil && sec >= 0 && sec < 1<<40 {
		t := time.Unix(sec, 0).UTC()
		return &t
	}
	fs.Invalid(name, "%s must be an RFC 3339 time or integer Unix seconds.", name)
	return nil
}
