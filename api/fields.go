package api

import (
	"encoding/json"
	"net/http"
	"sort"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/apperr"
)

// fieldRules says which members of a request object a caller may send: writable ones
// are decoded, read-only ones (the object's own output fields) are refused with
// parameter_read_only, anything else is unknown_parameter. nested applies the same to a
// member that is itself an object (customer: id writable, name read-only).
type fieldRules struct {
	writable []string
	readOnly []string
	nested   map[string]fieldRules
}

func (r fieldRules) has(list []string, k string) bool {
	for _, v := range list {
		if v == k {
			return true
		}
	}
	return false
}

// check records a fault for every read-only or unknown member of obj, in name order.
func (r fieldRules) check(fs *apperr.Faults, prefix string, obj map[string]json.RawMessage) {
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		param := prefix + k
		switch {
		case r.has(r.readOnly, k):
			fs.Add(param, apperr.CodeParameterReadOnly, "%s is read-only and cannot be set.", param)
		case !r.has(r.writable, k):
			fs.Add(param, apperr.CodeUnknownParameter, "Unknown parameter %s.", param)
		default:
			sub, ok := r.nested[k]
			var inner map[string]json.RawMessage
			if ok && json.Unmarshal(obj[k], &inner) == nil && inner != nil {
				sub.check(fs, param+".", inner)
			}
		}
	}
}

// bindObject reads a JSON object body, refuses read-only and unknown members (all of
// them listed), then decodes it strictly into dst.
func bindObject(c *gin.Context, rules fieldRules, dst any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	if body == nil {
		return httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "A JSON request body is required.")
	}
	if err := checkBody(body); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := decodeStrict(body, &raw); err != nil {
		return err
	}
	if raw == nil {
		return httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "The body must be a JSON object.")
	}
	var fs apperr.Faults
	rules.check(&fs, "", raw)
	if err := fs.Err(); err != nil {
		return err
	}
	return decodeStrict(body, dst)
}

// bindNoParams accepts an action request with no body or an empty JSON object.
func bindNoParams(c *gin.Context) error {
	var none struct{}
	return bindOptionalJSON(c, &none)
}
