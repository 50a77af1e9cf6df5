package meters

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/jsonnum"
	"github.com/revops/revops/internal/platform/textcheck"
	"github.com/revops/revops/models"
)

// The body of POST /v1/meters/{key}/alerts (CONTRACT §24), checked here with every fault
// listed at once, as a meter's is (define.go). What depends on the meter — its
// aggregation, its group_by keys — is checked once it is found (checkAlert).

// AlertDefinition is an alert as POST /v1/meters/{key}/alerts defines it, checked
// (DecodeAlert) but not yet against its meter.
type AlertDefinition struct {
	Threshold   decimal.Decimal   // > 0, within §15's bounds
	Window      string            // models.AlertWindow*
	AccountID   string            // "": every account
	Group       map[string]string // group_by key → canonical text of its value; empty: any group
	Description string
}

// AlertWindows lists the windows an alert may watch.
var AlertWindows = []string{models.AlertWindowDay, models.AlertWindowMonth}

var alertFields = bodyfields.Rules{
	Writable: []string{"threshold", "window", "account_id", "group", "description"},
	ReadOnly: []string{"id", "object", "meter", "meter_id", "created_at"},
}

// DecodeAlert checks a POST /v1/meters/{key}/alerts body. Malformed JSON is an
// invalid_json *apperr.InvalidError; anything else wrong is one *apperr.ValidationError
// listing every fault.
func DecodeAlert(body []byte) (AlertDefinition, error) {
	obj, err := object(body)
	if err != nil {
		return AlertDefinition{}, err
	}
	var fs apperr.Faults
	alertFields.Check(&fs, "", obj)
	d := AlertDefinition{
		Threshold:   threshold(&fs, obj),
		Window:      alertWindow(&fs, obj),
		Description: description(&fs, obj),
		Group:       alertGroup(&fs, obj),
	}
	if raw, ok := member(obj, "account_id"); ok {
		if s, ok := str(&fs, "account_id", raw); ok && usage.IdentifierOK(&fs, "account_id", s) {
			d.AccountID = s
		}
	}
	if err := fs.Err(); err != nil {
		return AlertDefinition{}, err
	}
	return d, nil
}

// threshold reads a JSON number or a string holding one (a decimal string keeps digits
// a client's float would lose), exact, within CONTRACT §15's bounds, and above 0: a
// threshold of 0 would fire for every series at its first figure, which is no warning.
func threshold(fs *apperr.Faults, obj map[string]json.RawMessage) decimal.Decimal {
	raw, ok := member(obj, "threshold")
	if !ok {
		fs.Missing("threshold")
		return decimal.Decimal{}
	}
	lit := string(raw)
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil || !textcheck.LineOK(fs, "threshold", s) {
			return decimal.Decimal{}
		}
		lit = s
	}
	if err := jsonnum.Check(lit); errors.Is(err, jsonnum.ErrNotNumber) {
		fs.Invalid("threshold", "threshold must be a number or a decimal string such as \"1000.5\".")
		return decimal.Decimal{}
	} else if err != nil {
		fs.Add("threshold", jsonnum.Code, "threshold must be at most %d characters written out in plain decimal.", jsonnum.MaxText)
		return decimal.Decimal{}
	}
	d, err := decimal.Parse(lit)
	if err != nil {
		fs.Add("threshold", jsonnum.Code, "threshold must be a finite decimal of at most %d significant digits.", decimal.MaxSignificantDigits)
		return decimal.Decimal{}
	}
	if d.Sign() <= 0 {
		fs.Invalid("threshold", "threshold must be greater than 0.")
	}
	return d
}

func alertWindow(fs *apperr.Faults, obj map[string]json.RawMessage) string {
	raw, ok := member(obj, "window")
	if !ok {
		fs.Missing("window")
		return ""
	}
	s, ok := str(fs, "window", raw)
	ok = ok && textcheck.LineOK(fs, "window", s)
	if ok && slices.Contains(AlertWindows, s) {
		return s
	}
	if ok {
		fs.Invalid("window", "window must be day or month.")
	}
	return ""
}

// alertGroup reads group: the values of some of the meter's group_by keys, each the
// canonical text a group value has (CONTRACT §18: a string its content, a number its
// canonical decimal, true/false), as the values' filter[k]=v takes it. Whether the keys
// are the meter's is checked with the meter (checkAlert).
func alertGroup(fs *apperr.Faults, obj map[string]json.RawMessage) map[string]string {
	raw, ok := member(obj, "group")
	if !ok {
		return nil
	}
	var g map[string]json.RawMessage
	if err := json.Unmarshal(raw, &g); err != nil {
		fs.Invalid("group", "group must be an object of group_by keys and their values: {\"region\": \"eu\"}.")
		return nil
	}
	if len(g) > MaxGroupBy {
		fs.Invalid("group", "group has %d keys; a meter groups by at most %d.", len(g), MaxGroupBy)
		return nil
	}
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	sort.Strings(keys) // faults in a stable order
	out := make(map[string]string, len(g))
	for _, k := range keys {
		param := "group." + k
		if !usage.IdentifierOK(fs, param, k) {
			continue
		}
		var v string
		if err := json.Unmarshal(g[k], &v); err != nil {
			fs.Invalid(param, "%s must be a string: the group value's text (a number or boolean value as text, \"2\" or \"true\").", param)
			continue
		}
		if !textcheck.TextOK(fs, param, v) {
			continue
		}
		if n := utf8.RuneCountInString(v); n < 1 || n > maxDimension {
			fs.Invalid(param, "%s must be 1 to %d characters.", param, maxDimension)
			continue
		}
		out[k] = v
	}
	return out
}
