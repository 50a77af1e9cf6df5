package accounts

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/internal/testkit/jsontest"
	"github.com/revops/revops/models"
)

// decode builds an Input from JSON the way the API does.
var decode = jsontest.Decode[Input]

func TestValidate(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		creating bool
		want     string
	}{
		{"name only", `{"name":"Globex"}`, true, ""},
		{"name missing", `{}`, true, "name:parameter_missing"},
		{"name null on create", `{"name":null}`, true, "name:parameter_missing"},
		{"patch without name", `{}`, false, ""},
		{"name null on patch", `{"name":null}`, false, "name:parameter_invalid"},
		{"blank name", `{"name":"  "}`, false, "name:parameter_invalid"},
		{"long name", `{"name":"` + strings.Repeat("x", 256) + `"}`, false, "name:parameter_invalid"},
		{"all fields", `{"name":"G","external_id":"cus_1","domain":"globex.example","billing_email":"ap@globex.example","properties":{"tier":"gold","seats":10,"vip":true}}`, true, ""},
		{"nulls clear", `{"external_id":null,"domain":null,"billing_email":null}`, false, ""},
		{"bad domain", `{"domain":"https://globex.example"}`, false, "domain:parameter_invalid"},
		{"single-label domain", `{"domain":"localhost"}`, false, "domain:parameter_invalid"},
		{"bad email", `{"billing_email":"Ann <ann@x.example>"}`, false, "billing_email:parameter_invalid"},
		{"empty external id", `{"external_id":""}`, false, "external_id:parameter_invalid"},
		{"properties null", `{"properties":null}`, false, "properties:parameter_invalid"},
		{"property null removes", `{"properties":{"tier":null}}`, false, ""},
		// CONTRACT §15: a property number is at most 64 characters written out; 1e400 was
		// stored and printed in full, 1e99999999 made the change check build 10^99999999.
		{"property 1e400", `{"properties":{"n":1e400}}`, false, "properties.n:invalid_number"},
		{"property 1e-99999", `{"properties":{"n":1e-99999}}`, false, "properties.n:invalid_number"},
		{"property exponent of twenty digits", `{"properties":{"n":1e99999999999999999999}}`, false, "properties.n:invalid_number"},
		{"property 64 characters", `{"properties":{"a":1e63,"b":-1e62,"c":1e-62}}`, false, ""},
		{"property 65 characters", `{"properties":{"a":1e64,"b":1e-63}}`, false, "properties.a:invalid_number properties.b:invalid_number"},
		{"nested property", `{"properties":{"a":{"b":1},"c":[1]}}`, false, "properties.a:parameter_invalid properties.c:parameter_invalid"},
		{"long property name", `{"properties":{"` + strings.Repeat("k", 41) + `":1}}`, false, "properties." + strings.Repeat("k", 41) + ":parameter_invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := apperr.Summary(Validate(decode(t, c.body), c.creating))
			// property faults come from a map: compare as sets
			if !sameFields(got, c.want) {
				t.Fatalf("faults %q, want %q", got, c.want)
			}
		})
	}
}

func sameFields(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	seen := map[string]int{}
	for _, f := range fa {
		seen[f]++
	}
	for _, f := range fb {
		seen[f]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestApplyMergesAndDetectsChanges(t *testing.T) {
	cur := models.Account{Name: "Globex", Status: "draft", Properties: `{"seats":10,"tier":"gold","vip":true}`}
	cases := []struct {
		name      string
		body      string
		changed   bool
		wantProps string
	}{
		{"empty patch", `{}`, false, `{"seats":10,"tier":"gold","vip":true}`},
		{"same values", `{"name":"Globex","properties":{"tier":"gold","vip":true}}`, false, `{"seats":10,"tier":"gold","vip":true}`},
		{"same number written differently", `{"properties":{"seats":10.0}}`, false, `{"seats":10,"tier":"gold","vip":true}`},
		{"removing an absent key", `{"properties":{"nope":null}}`, false, `{"seats":10,"tier":"gold","vip":true}`},
		{"new key", `{"properties":{"region":"eu"}}`, true, `{"region":"eu","seats":10,"tier":"gold","vip":true}`},
		{"null removes", `{"properties":{"vip":null}}`, true, `{"seats":10,"tier":"gold"}`},
		{"type change is a change", `{"properties":{"seats":"10"}}`, true, `{"seats":"10","tier":"gold","vip":true}`},
		{"name change", `{"name":"Globex Corp"}`, true, `{"seats":10,"tier":"gold","vip":true}`},
		{"set a nullable field", `{"domain":"Globex.Example"}`, true, `{"seats":10,"tier":"gold","vip":true}`},
		{"clear an unset field", `{"billing_email":null}`, false, `{"seats":10,"tier":"gold","vip":true}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next, changed, err := Apply(cur, decode(t, c.body))
			if err != nil {
				t.Fatal(err)
			}
			if changed != c.changed || next.Properties != c.wantProps {
				t.Fatalf("changed=%v props=%s, want %v %s", changed, next.Properties, c.changed, c.wantProps)
			}
		})
	}
	next, _, _ := Apply(cur, decode(t, `{"domain":"Globex.Example"}`))
	if next.Domain == nil || *next.Domain != "globex.example" {
		t.Fatalf("domain not lower-cased: %v", next.Domain)
	}
}

func TestApplyLimitsPropertyCount(t *testing.T) {
	props := map[string]any{}
	for i := 0; i < MaxPropertyKeys+1; i++ {
		props[strings.Repeat("k", i+1)] = "v"
	}
	b, _ := json.Marshal(map[string]any{"properties": props})
	if _, _, err := Apply(models.Account{Properties: "{}"}, decode(t, string(b))); apperr.Summary(err) != "properties:parameter_invalid" {
		t.Fatalf("got %v", err)
	}
}

func TestTransitionEveryPair(t *testing.T) {
	type want struct{ to, event string }
	allowed := map[[2]string]want{
		{"draft", ActionUpdate}:       {"draft", "account-updated"},
		{"active", ActionUpdate}:      {"active", "account-updated"},
		{"draft", ActionActivate}:     {"active", "account-updated"},
		{"draft", ActionDeprovision}:  {"deprovisioned", "account-deleted"},
		{"active", ActionDeprovision}: {"deprovisioned", "account-deleted"},
	}
	for _, from := range []string{models.AccountDraft, models.AccountActive, models.AccountDeprovisioned} {
		for _, action := range []string{ActionUpdate, ActionActivate, ActionDeprovision} {
			t.Run(from+"/"+action, func(t *testing.T) {
				to, event, err := Transition(from, action)
				if w, ok := allowed[[2]string{from, action}]; ok {
					if err != nil || to != w.to || event != w.event {
						t.Fatalf("got (%q, %q, %v), want %v", to, event, err, w)
					}
					return
				}
				var ce *apperr.ConflictError
				if !errors.As(err, &ce) || ce.Code != "invalid_state_transition" || !strings.Contains(ce.Message, from) || to != from {
					t.Fatalf("got (%q, %q, %v), want a conflict naming %s", to, event, err, from)
				}
			})
		}
	}
}

// TestValidateStrings: CONTRACT §15 — names, identifiers, domains and emails refuse NUL,
// invalid UTF-8 and control characters; property values are free text (NUL and invalid
// UTF-8 refused, newlines kept); property names are identifiers.
func TestValidateStrings(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want string
	}{
		{"name NUL", Input{Name: bodyfields.Of("a\x00")}, "name:invalid_string"},
		{"name invalid UTF-8", Input{Name: bodyfields.Of("a\xff")}, "name:invalid_string"},
		{"name newline", Input{Name: bodyfields.Of("a\nb")}, "name:invalid_string"},
		{"name C1", Input{Name: bodyfields.Of("a\u0085")}, "name:invalid_string"},
		{"name non-ASCII", Input{Name: bodyfields.Of("Zürich 東京")}, ""},
		{"external_id tab", Input{ExternalID: bodyfields.Of("a\tb")}, "external_id:invalid_string"},
		{"domain escape", Input{Domain: bodyfields.Of("a\x1b.example")}, "domain:invalid_string"},
		{"email DEL", Input{BillingEmail: bodyfields.Of("a\x7f@b.example")}, "billing_email:invalid_string"},
		{"property value NUL", Input{Properties: bodyfields.Of(map[string]any{"k": "a\x00"})}, "properties.k:invalid_string"},
		{"property value invalid UTF-8", Input{Properties: bodyfields.Of(map[string]any{"k": "\xc0\x80"})}, "properties.k:invalid_string"},
		{"property value newline", Input{Properties: bodyfields.Of(map[string]any{"k": "line 1\nline 2\ttab"})}, ""},
		{"property name newline", Input{Properties: bodyfields.Of(map[string]any{"a\nb": "x"})}, "properties.a\nb:invalid_string"},
		{"property name NUL", Input{Properties: bodyfields.Of(map[string]any{"\x00": "x"})}, "properties.\x00:invalid_string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := apperr.Summary(Validate(c.in, false)); got != c.want {
				t.Fatalf("faults %q, want %q", got, c.want)
			}
		})
	}
}
