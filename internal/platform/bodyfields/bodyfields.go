// Package bodyfields says which members a request object may carry, for every decoder of
// request bodies: the API's (api.bindObject) and the domain decoders that read a raw body
// themselves to list every fault at once (meters.DecodeCreate). One rule, one wording:
// read-only members are parameter_read_only, anything else unknown is unknown_parameter
// (CONTRACT §4), so that typos never pass silently.
package bodyfields

import (
	"encoding/json"
	"sort"

	"github.com/revops/revops/internal/platform/apperr"
)

// Rules says which members of a request object a caller may send: Writable ones are
// decoded, ReadOnly ones (the object's own output fields) are refused with
// parameter_read_only, anything else is unknown_parameter. Nested applies the same to a
// member that is itself an object (customer: id writable, name read-only).
type Rules struct {
	Writable []string
	ReadOnly []string
	Nested   map[string]Rules
}

func has(list []string, k string) bool {
	for _, v := range list {
		if v == k {
			return true
		}
	}
	return false
}

// Check records a fault for every read-only or unknown member of obj, in name order;
// prefix names obj's place in the body ("" for the body itself, "filter." for a member).
func (r Rules) Check(fs *apperr.Faults, prefix string, obj map[string]json.RawMessage) {
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		param := prefix + k
		switch {
		case has(r.ReadOnly, k):
			fs.Add(param, apperr.CodeParameterReadOnly, "%s is read-only and cannot be set.", param)
		case !has(r.Writable, k):
			fs.Add(param, apperr.CodeUnknownParameter, "Unknown parameter %s.", param)
		default:
			sub, ok := r.Nested[k]
			var inner map[string]json.RawMessage
			if ok && json.Unmarshal(obj[k], &inner) == nil && inner != nil {
				sub.Check(fs, param+".", inner)
			}
		}
	}
}
