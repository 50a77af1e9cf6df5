package meters

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/apperr"
)

func TestDecodeCreateAccepts(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       Definition
	}{
		{"smallest", `{"key":"api_calls","filter":{"metric_name":"calls"},"aggregation":"sum"}`,
			Definition{Key: "api_calls", MetricName: "calls", Aggregation: "sum"}},
		{"nulls are absent", `{"key":"a-1","description":null,"filter":{"metric_name":"calls","product":null},"aggregation":"count","value_key":null,"group_by":null}`,
			Definition{Key: "a-1", MetricName: "calls", Aggregation: "count"}},
		{"everything", `{"key":"active_users","description":"Distinct users\nper month","filter":{"metric_name":"logins","product":"app"},
			"aggregation":"unique_count","value_key":"user","group_by":["region","plan","tier"]}`,
			Definition{Key: "active_users", Description: "Distinct users\nper month", MetricName: "logins", Product: "app",
				Aggregation: "unique_count", ValueKey: "user", GroupBy: []string{"region", "plan", "tier"}}},
		{"empty group_by", `{"key":"s","filter":{"metric_name":"seats"},"aggregation":"max","group_by":[]}`,
			Definition{Key: "s", MetricName: "seats", Aggregation: "max", GroupBy: []string{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := DecodeCreate([]byte(c.body))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !reflect.DeepEqual(d, c.want) {
				t.Fatalf("got %+v, want %+v", d, c.want)
			}
		})
	}
}

// Every fault of a body is listed, each once, naming its member.
func TestDecodeCreateRejects(t *testing.T) {
	long := strings.Repeat("x", 256)
	for _, c := range []struct{ name, body, want string }{
		{"empty object", `{}`, "key:parameter_missing filter:parameter_missing aggregation:parameter_missing"},
		{"key pattern", `{"key":"API Calls","filter":{"metric_name":"c"},"aggregation":"sum"}`, "key:parameter_invalid"},
		{"key too long", `{"key":"` + strings.Repeat("k", 65) + `","filter":{"metric_name":"c"},"aggregation":"sum"}`, "key:parameter_invalid"},
		{"key control", `{"key":"a\u0001","filter":{"metric_name":"c"},"aggregation":"sum"}`, "key:invalid_string"},
		{"key a number", `{"key":5,"filter":{"metric_name":"c"},"aggregation":"sum"}`, "key:parameter_invalid"},
		{"description NUL", `{"key":"k","description":"a\u0000","filter":{"metric_name":"c"},"aggregation":"sum"}`, "description:invalid_string"},
		{"description long", `{"key":"k","description":"` + strings.Repeat("é", 1001) + `","filter":{"metric_name":"c"},"aggregation":"sum"}`, "description:parameter_invalid"},
		{"filter not an object", `{"key":"k","filter":"calls","aggregation":"sum"}`, "filter:parameter_invalid"},
		{"filter without metric", `{"key":"k","filter":{"product":"p"},"aggregation":"sum"}`, "filter.metric_name:parameter_missing"},
		{"filter names", `{"key":"k","filter":{"metric_name":"","product":"` + long + `"},"aggregation":"sum"}`,
			"filter.metric_name:parameter_invalid filter.product:parameter_invalid"},
		{"filter unknown member", `{"key":"k","filter":{"metric_name":"c","region":"eu"},"aggregation":"sum"}`, "filter.region:unknown_parameter"},
		{"aggregation", `{"key":"k","filter":{"metric_name":"c"},"aggregation":"avg"}`, "aggregation:parameter_invalid"},
		{"unique_count needs value_key", `{"key":"k","filter":{"metric_name":"c"},"aggregation":"unique_count"}`, "value_key:parameter_missing"},
		{"value_key refused for sum", `{"key":"k","filter":{"metric_name":"c"},"aggregation":"sum","value_key":"user"}`, "value_key:parameter_invalid"},
		{"value_key checked alone", `{"key":"k","filter":{"metric_name":"c"},"aggregation":"avg","value_key":"a\tb"}`,
			"aggregation:parameter_invalid value_key:invalid_string"},
		{"group_by not a list", `{"key":"k","filter":{"metric_name":"c"},"aggregation":"sum","group_by":"region"}`, "group_by:parameter_invalid"},
		{"group_by too long", `{"key":"k","filter":{"metric_name":"c"},"aggregation":"sum","group_by":["a","b","c","d"]}`, "group_by:parameter_invalid"},
		{"group_by items", `{"key":"k","filter":{"metric_name":"c"},"aggregation":"sum","group_by":["account_id","region","region"]}`,
			"group_by[0]:parameter_invalid group_by[2]:parameter_invalid"},
		{"group_by empty and typed", `{"key":"k","filter":{"metric_name":"c"},"aggregation":"sum","group_by":["",1]}`,
			"group_by[0]:parameter_invalid group_by[1]:parameter_invalid"},
		{"read-only and unknown", `{"id":"x","status":"ready","aggregate":"sum","key":"k","filter":{"metric_name":"c"},"aggregation":"sum"}`,
			"aggregate:unknown_parameter id:parameter_read_only status:parameter_read_only"},
		{"every fault at once", `{"key":"Bad Key","description":7,"filter":{"metric_name":"","extra":1},"aggregation":"count","value_key":"u","group_by":["account_id"],"object":"meter"}`,
			"filter.extra:unknown_parameter object:parameter_read_only key:parameter_invalid description:parameter_invalid filter.metric_name:parameter_invalid value_key:parameter_invalid group_by[0]:parameter_invalid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeCreate([]byte(c.body))
			var ve *apperr.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want a validation error, got %v", err)
			}
			if got := apperr.Summary(err); got != c.want {
				t.Fatalf("faults\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestDecodeMalformedBodies(t *testing.T) {
	for body, want := range map[string]error{
		`{"key":`: ErrInvalidJSON, `[]`: ErrNotObject, `null`: ErrNotObject, `"x"`: ErrNotObject, `{} {}`: ErrInvalidJSON,
	} {
		if _, err := DecodeCreate([]byte(body)); !errors.Is(err, want) {
			t.Errorf("create %s: %v, want %v", body, err, want)
		}
		if _, err := DecodePatch([]byte(body)); !errors.Is(err, want) {
			t.Errorf("patch %s: %v, want %v", body, err, want)
		}
	}
}

func TestDecodePatch(t *testing.T) {
	for _, c := range []struct{ body, want, faults string }{
		{`{"description":"Seats, monthly peak"}`, "Seats, monthly peak", ""},
		{`{"description":null}`, "", ""},
		{`{"description":""}`, "", ""},
		{`{}`, "", "description:parameter_missing"},
		{`{"description":"d","aggregation":"max","key":"k2"}`, "", "aggregation:parameter_read_only key:parameter_read_only"},
		{`{"description":"d","colour":"red"}`, "", "colour:unknown_parameter"},
		{`{"description":["d"]}`, "", "description:parameter_invalid"},
	} {
		got, err := DecodePatch([]byte(c.body))
		if s := apperr.Summary(err); s != c.faults || got != c.want {
			t.Errorf("%s: %q, faults %q; want %q, faults %q", c.body, got, s, c.want, c.faults)
		}
	}
}

func TestValidKey(t *testing.T) {
	for k, want := range map[string]bool{
		"api_calls": true, "a": true, "0-9_z": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "API": false, "a b": false, "a.b": false, "é": false,
	} {
		if ValidKey(k) != want {
			t.Errorf("ValidKey(%q) = %v", k, !want)
		}
	}
}
