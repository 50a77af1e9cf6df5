package meters

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/internal/platform/textcheck"
	"github.com/revops/revops/models"
)

// The bodies of POST and PATCH /v1/meters (CONTRACT §18), checked here with every fault
// listed at once. The API has already applied what every body gets (CONTRACT §3 and §15:
// size, nesting, UTF-8 and escapes, in api.requiredBody); what is left is the meter's own
// rules. The names a meter refers to (metric name, product, metadata keys) follow the
// rule usage holds them to (usage.IdentifierOK), so that a definition can name only what
// a usage event can carry.

// Bounds of a meter definition.
const (
	MaxKeyLen         = 64
	MaxDescriptionLen = 1000
	MaxGroupBy        = 3
)

// Bodies refused before any member is read, each in an *apperr.InvalidError of code
// invalid_json.
var (
	ErrInvalidJSON = errors.New("meter body is not valid JSON")
	ErrNotObject   = errors.New("meter body is not a JSON object")
)

// Aggregations lists the aggregations a meter may have, in the CONTRACT's order.
var Aggregations = []string{models.AggSum, models.AggCount, models.AggMax, models.AggMin, models.AggLatest, models.AggUniqueCount}

// createFields are the members POST /v1/meters takes; the object's output fields are
// read-only.
var createFields = bodyfields.Rules{
	Writable: []string{"key", "description", "filter", "aggregation", "value_key", "group_by"},
	ReadOnly: []string{"id", "object", "status", "created_at", "updated_at"},
	Nested:   map[string]bodyfields.Rules{"filter": {Writable: []string{"metric_name", "product"}}},
}

// patchFields: PATCH changes only description. What a meter counts is fixed at creation
// (its figures were kept for it), so the definition's members are read-only there.
var patchFields = bodyfields.Rules{
	Writable: []string{"description"},
	ReadOnly: []string{"id", "object", "key", "filter", "aggregation", "value_key", "group_by", "status", "created_at", "updated_at"},
}

// DecodeCreate checks a POST /v1/meters body and returns its definition. Malformed JSON
// is an invalid_json *apperr.InvalidError (ErrInvalidJSON, ErrNotObject); anything else
// wrong is one *apperr.ValidationError listing every fault.
func DecodeCreate(body []byte) (Definition, error) {
	obj, err := object(body)
	if err != nil {
		return Definition{}, err
	}
	var fs apperr.Faults
	createFields.Check(&fs, "", obj)
	var d Definition
	if raw, ok := member(obj, "key"); !ok {
		fs.Missing("key")
	} else if s, ok := str(&fs, "key", raw); ok && textcheck.LineOK(&fs, "key", s) {
		if !ValidKey(s) {
			fs.Invalid("key", "key must be 1 to %d characters, each a lowercase letter, a digit, _ or -.", MaxKeyLen)
		}
		d.Key = s
	}
	d.Description = description(&fs, obj)
	d.MetricName, d.Product = filter(&fs, obj)
	d.Aggregation = aggregation(&fs, obj)
	d.ValueKey = valueKey(&fs, obj, d.Aggregation)
	d.GroupBy = groupBy(&fs, obj)
	if err := fs.Err(); err != nil {
		return Definition{}, err
	}
	return d, nil
}

// DecodePatch checks a PATCH /v1/meters/{key} body and returns the new description.
// description is required, since it is all a PATCH changes; null clears it, as "" does.
func DecodePatch(body []byte) (string, error) {
	obj, err := object(body)
	if err != nil {
		return "", err
	}
	var fs apperr.Faults
	patchFields.Check(&fs, "", obj)
	if _, sent := obj["description"]; !sent {
		fs.Add("description", apperr.CodeParameterMissing,
			"description is required: it is the one field a PATCH of a meter changes (null or \"\" clears it).")
	}
	d := description(&fs, obj)
	if err := fs.Err(); err != nil {
		return "", err
	}
	return d, nil
}

// ValidKey tells whether s can be a meter's key: 1–64 characters of [a-z0-9_-]. The API
// answers a path key that cannot be one as it answers an unknown one (CONTRACT §15).
func ValidKey(s string) bool {
	if len(s) < 1 || len(s) > MaxKeyLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// object decodes the body as one JSON object, its members kept raw.
func object(body []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		if !json.Valid(body) {
			return nil, apperr.Invalid(ErrInvalidJSON, apperr.CodeInvalidJSON, "", "The body is not valid JSON.")
		}
		return nil, apperr.Invalid(ErrNotObject, apperr.CodeInvalidJSON, "", "The body must be a JSON object.")
	}
	return obj, nil
}

// member returns obj's member k unless it is absent or null: an optional member sent as
// null is left out, and a required one is missing.
func member(obj map[string]json.RawMessage, k string) (json.RawMessage, bool) {
	raw, ok := obj[k]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// str decodes a member that must be a JSON string.
func str(fs *apperr.Faults, param string, raw json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		fs.Invalid(param, "%s must be a string.", param)
		return "", false
	}
	return s, true
}

// name decodes a member that names a metric, a product or a metadata key.
func name(fs *apperr.Faults, param string, raw json.RawMessage) (string, bool) {
	s, ok := str(fs, param, raw)
	return s, ok && usage.IdentifierOK(fs, param, s)
}

func description(fs *apperr.Faults, obj map[string]json.RawMessage) string {
	raw, ok := member(obj, "description")
	if !ok {
		return ""
	}
	s, ok := str(fs, "description", raw)
	if !ok || !textcheck.TextOK(fs, "description", s) {
		return ""
	}
	if utf8.RuneCountInString(s) > MaxDescriptionLen {
		fs.Invalid("description", "description must be at most %d characters.", MaxDescriptionLen)
	}
	return s
}

// filter reads filter.metric_name (required) and filter.product (optional: any product).
func filter(fs *apperr.Faults, obj map[string]json.RawMessage) (metricName, product string) {
	raw, ok := member(obj, "filter")
	if !ok {
		fs.Missing("filter")
		return "", ""
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(raw, &f); err != nil {
		fs.Invalid("filter", "filter must be an object: {\"metric_name\": …, \"product\": …}.")
		return "", ""
	}
	if raw, ok := member(f, "metric_name"); !ok {
		fs.Missing("filter.metric_name")
	} else {
		metricName, _ = name(fs, "filter.metric_name", raw)
	}
	if raw, ok := member(f, "product"); ok {
		product, _ = name(fs, "filter.product", raw)
	}
	return metricName, product
}

func aggregation(fs *apperr.Faults, obj map[string]json.RawMessage) string {
	raw, ok := member(obj, "aggregation")
	if !ok {
		fs.Missing("aggregation")
		return ""
	}
	s, ok := str(fs, "aggregation", raw)
	if !ok || !textcheck.LineOK(fs, "aggregation", s) {
		return ""
	}
	if slices.Contains(Aggregations, s) {
		return s
	}
	fs.Invalid("aggregation", "aggregation must be one of %s.", strings.Join(Aggregations, ", "))
	return ""
}

// valueKey reads value_key: the metadata key unique_count counts the distinct values of,
// required for it and refused for the others, which read metric_value or count rows. agg
// is "" when aggregation itself is at fault: value_key is then checked on its own.
func valueKey(fs *apperr.Faults, obj map[string]json.RawMessage, agg string) string {
	raw, ok := member(obj, "value_key")
	switch {
	case !ok && agg == models.AggUniqueCount:
		fs.Add("value_key", apperr.CodeParameterMissing,
			"value_key is required for unique_count: the metadata key whose distinct values are counted.")
		return ""
	case !ok:
		return ""
	case agg != "" && agg != models.AggUniqueCount:
		reads := "reads metric_value"
		if agg == models.AggCount {
			reads = "counts rows"
		}
		fs.Invalid("value_key", "value_key is for unique_count meters only (a %s meter %s); leave it out.", agg, reads)
		return ""
	}
	s, _ := name(fs, "value_key", raw)
	return s
}

// groupBy reads group_by: up to MaxGroupBy distinct metadata keys. account_id is always a
// dimension of a meter's values, so naming it would only be a second, confusing one.
func groupBy(fs *apperr.Faults, obj map[string]json.RawMessage) []string {
	raw, ok := member(obj, "group_by")
	if !ok {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		fs.Invalid("group_by", "group_by must be an array of up to %d metadata keys.", MaxGroupBy)
		return nil
	}
	if len(items) > MaxGroupBy {
		fs.Invalid("group_by", "group_by holds %d keys; a meter groups by at most %d.", len(items), MaxGroupBy)
		return nil
	}
	out := make([]string, 0, len(items))
	for i, raw := range items {
		param := "group_by[" + strconv.Itoa(i) + "]"
		s, ok := name(fs, param, raw)
		switch {
		case !ok:
		case s == "account_id":
			fs.Invalid(param, "account_id is always a dimension of a meter's values; leave it out of group_by.")
		case slices.Contains(out, s):
			fs.Invalid(param, "%s repeats %q; each group_by key may appear once.", param, s)
		default:
			out = append(out, s)
		}
	}
	return out
}
