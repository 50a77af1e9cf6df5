package meters

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// TestDecodeAlertCanonical: a threshold is kept as its exact decimal whatever its
// spelling, and a group as one JSON text whatever the order of its members.
func TestDecodeAlertCanonical(t *testing.T) {
	for _, c := range []struct {
		body, threshold, group string
	}{
		{`{"threshold":10,"window":"day"}`, "10", "{}"},
		{`{"threshold":"1000.50","window":"day"}`, "1000.5", "{}"},
		{`{"threshold":1.5e3,"window":"day"}`, "1500", "{}"},
		{`{"threshold":"0.000100","window":"day","group":{}}`, "0.0001", "{}"},
		{`{"threshold":"12345678901234567890.5","window":"month"}`, "12345678901234567890.5", "{}"},
		{`{"threshold":1,"window":"day","group":{"region":"eu","plan":"1"}}`, "1", `{"plan":"1","region":"eu"}`},
		{`{"threshold":1,"window":"day","group":{"plan":"1","region":"eu"}}`, "1", `{"plan":"1","region":"eu"}`},
		// Escaped as encoding/json writes a series' kept group (groupsText).
		{`{"threshold":1,"window":"day","group":{"region":"<é>"}}`, "1", `{"region":"\u003cé\u003e"}`},
	} {
		d, err := DecodeAlert([]byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		if got := d.Threshold.String(); got != c.threshold {
			t.Errorf("%s: threshold %q, want %q", c.body, got, c.threshold)
		}
		if got := groupText(d.Group); got != c.group {
			t.Errorf("%s: group %s, want %s", c.body, got, c.group)
		}
	}
}

func TestCheckAlertAgainstItsMeter(t *testing.T) {
	m := models.Meter{Key: "calls", Aggregation: models.AggSum, GroupBy: []string{"region", "plan"}}
	ok := AlertDefinition{Group: map[string]string{"plan": "gold"}}
	if err := checkAlert(m, ok); err != nil {
		t.Fatalf("refused %v", err)
	}
	for _, c := range []struct {
		agg   string
		group map[string]string
		want  string
	}{
		{models.AggLatest, nil, "key"},
		{models.AggMin, nil, "key"},
		{models.AggCount, map[string]string{"tier": "x", "region": "eu", "account_id": "a"}, "group.account_id group.tier"},
		{models.AggMin, map[string]string{"tier": "x"}, "key group.tier"},
	} {
		m.Aggregation = c.agg
		if got := faultParams(checkAlert(m, AlertDefinition{Group: c.group})); got != c.want {
			t.Errorf("%s %v: faults %q, want %q", c.agg, c.group, got, c.want)
		}
	}
}

// faultParams lists the params of err's faults, space-separated ("" for no error).
func faultParams(err error) string {
	var ve *apperr.ValidationError
	if err == nil {
		return ""
	}
	if !errors.As(err, &ve) {
		return fmt.Sprint(err)
	}
	ps := make([]string, len(ve.Faults))
	for i, f := range ve.Faults {
		ps[i] = f.Param
	}
	return strings.Join(ps, " ")
}
