package api

import (
	"net/http"
	"net/url"
	"strings"

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
		abort(c, http.StatusNotFound, typeInvalidRequest, "resource_missing", "No such object.", "")
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
