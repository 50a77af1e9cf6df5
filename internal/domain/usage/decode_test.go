package usage

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/textcheck"
)

var testNow = time.Date(2025, 3, 12, 15, 4, 5, 0, time.UTC)

// body builds a request with one metric whose fields are replaced/added by extra
// (a raw JSON member list such as `"metric_value":"5"`); "-name" removes a field.
func body(mode string, extra ...string) string {
	fields := map[string]string{
		"account_id": `"acct_1"`, "product": `"api"`, "metric_name": `"calls"`,
		"metric_value": `5`, "metric_resolution": `"hour"`,
	}
	order := []string{"account_id", "product", "metric_name", "metric_value", "metric_resolution"}
	for _, e := range extra {
		if strings.HasPrefix(e, "-") {
			delete(fields, e[1:])
			continue
		}
		k, v, _ := strings.Cut(e, ":")
		k = strings.Trim(k, `"`)
		if _, ok := fields[k]; !ok {
			order = append(order, k)
		}
		fields[k] = v
	}
	var parts []string
	for _, k := range order {
		if v, ok := fields[k]; ok {
			parts = append(parts, fmt.Sprintf("%q:%s", k, v))
		}
	}
	return fmt.Sprintf(`{"transaction_id":"tx_1","mode":%q,"event_metrics":[{%s}]}`, mode, strings.Join(parts, ","))
}

func TestDecodeRejects(t *testing.T) {
	long := strings.Repeat("a", 256)
	tests := []struct {
		name, body, param, code string
	}{
		{"malformed", `{"transaction_id":`, "", apperr.CodeInvalidJSON},
		{"not an object", `[1,2]`, "", apperr.CodeInvalidJSON},
		{"null body", `null`, "", apperr.CodeInvalidJSON},
		{"empty body", ``, "", apperr.CodeInvalidJSON},
		{"missing transaction_id", `{"mode":"set","event_metrics":[]}`, "transaction_id", apperr.CodeParameterMissing},
		{"unknown top field", strings.Replace(body("set"), `"mode"`, `"modes":1,"mode"`, 1), "modes", apperr.CodeUnknownParameter},
		{"unknown metric field", body("set", `"acount_id":"x"`), "event_metrics[0].acount_id", apperr.CodeUnknownParameter},
		{"bad mode", body("add"), "mode", apperr.CodeParameterInvalid},
		{"string value", body("set", `"metric_value":"5"`), "event_metrics[0].metric_value", apperr.CodeParameterInvalid},
		{"bool value", body("set", `"metric_value":true`), "event_metrics[0].metric_value", apperr.CodeParameterInvalid},
		{"overflowing value", body("set", `"metric_value":1e400`), "event_metrics[0].metric_value", apperr.CodeParameterInvalid},
		{"underflowing value", body("set", `"metric_value":1e-400`), "event_metrics[0].metric_value", apperr.CodeParameterInvalid},
		{"too precise", body("set", `"metric_value":1.2345678901234567890123456789012345`), "event_metrics[0].metric_value", apperr.CodeParameterInvalid},
		{"negative in set", body("set", `"metric_value":-1`), "event_metrics[0].metric_value", apperr.CodeParameterInvalid},
		{"missing value", body("set", `-metric_value`), "event_metrics[0].metric_value", apperr.CodeParameterMissing},
		{"null value", body("set", `"metric_value":null`), "event_metrics[0].metric_value", apperr.CodeParameterMissing},
		{"bad resolution", body("set", `"metric_resolution":"year"`), "event_metrics[0].metric_resolution", apperr.CodeParameterInvalid},
		{"array metadata", body("set", `"metadata":[1]`), "event_metrics[0].metadata", apperr.CodeParameterInvalid},
		{"string metadata", body("set", `"metadata":"x"`), "event_metrics[0].metadata", apperr.CodeParameterInvalid},
		{"huge metadata", body("set", `"metadata":{"k":"`+strings.Repeat("x", 16<<10)+`"}`), "event_metrics[0].metadata", apperr.CodeParameterInvalid},
		{"empty account", body("set", `"account_id":""`), "event_metrics[0].account_id", apperr.CodeParameterInvalid},
		{"long product", body("set", `"product":"`+long+`"`), "event_metrics[0].product", apperr.CodeParameterInvalid},
		{"long transaction", strings.Replace(body("set"), `"tx_1"`, `"`+long+`"`, 1), "transaction_id", apperr.CodeParameterInvalid},
		{"control char", body("set", `"metric_name":"a\u0007b"`), "event_metrics[0].metric_name", textcheck.Code},
		{"numeric id", body("set", `"account_id":12`), "event_metrics[0].account_id", apperr.CodeParameterInvalid},
		{"old timestamp", body("set", `"timestamp":"2025-02-01T00:00:00Z"`), "event_metrics[0].timestamp", apperr.CodeParameterInvalid},
		{"future timestamp", body("set", fmt.Sprintf(`"timestamp":%d`, testNow.Add(6*time.Minute).Unix())), "event_metrics[0].timestamp", apperr.CodeParameterInvalid},
		{"fractional unix", body("set", `"timestamp":1741791845.5`), "event_metrics[0].timestamp", apperr.CodeParameterInvalid},
		{"bad timestamp", body("set", `"timestamp":"yesterday"`), "event_metrics[0].timestamp", apperr.CodeParameterInvalid},
		{"metric not object", `{"transaction_id":"t","mode":"set","event_metrics":[1]}`, "event_metrics[0]", apperr.CodeParameterInvalid},
		{"null metric", `{"transaction_id":"t","mode":"set","event_metrics":[null]}`, "event_metrics[0]", apperr.CodeParameterInvalid},
		{"second metric not object", strings.Replace(body("set"), "}]}", `},"x"]}`, 1), "event_metrics[1]", apperr.CodeParameterInvalid},
		{"metrics not array", `{"transaction_id":"t","mode":"set","event_metrics":{}}`, "event_metrics", apperr.CodeParameterInvalid},
		{"no metrics", `{"transaction_id":"t","mode":"set","event_metrics":[]}`, "event_metrics", apperr.CodeParameterInvalid},
		{"1001 metrics", `{"transaction_id":"t","mode":"set","event_metrics":[` + strings.Repeat(`{},`, 1000) + `{}]}`, "event_metrics", apperr.CodeParameterInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.body), testNow)
			if err == nil {
				t.Fatal("accepted")
			}
			var ierr *apperr.InvalidError
			if errors.As(err, &ierr) {
				if ierr.Code != tt.code || tt.param != "" {
					t.Fatalf("got %v, want %s at %q", err, tt.code, tt.param)
				}
				return
			}
			var verr *apperr.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			for _, f := range verr.Faults {
				if f.Param == tt.param && f.Code == tt.code {
					return
				}
			}
			t.Fatalf("no fault %s at %q in %v", tt.code, tt.param, err)
		})
	}
}

func TestDecodeListsEveryFault(t *testing.T) {
	b := `{"mode":"set","x":1,"event_metrics":[
		{"account_id":"a","product":"p","metric_name":"m","metric_value":1,"metric_resolution":"day"},
		{"account_id":"","product":"p","metric_name":"m","metric_value":-1,"metric_resolution":"days"}]}`
	_, err := Decode([]byte(b), testNow)
	var verr *apperr.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("got %v", err)
	}
	var got []string
	for _, f := range verr.Faults {
		got = append(got, f.Param)
	}
	want := "x transaction_id event_metrics[1].account_id event_metrics[1].metric_value event_metrics[1].metric_resolution"
	if strings.Join(got, " ") != want {
		t.Fatalf("faults %v, want %s", got, want)
	}
}

func TestDecodeAccepts(t *testing.T) {
	tests := []struct {
		name, body string
		value      string
		ts         time.Time
		tsSet      bool
	}{
		{"plain", body("increment"), "5", testNow, false},
		{"negative increment", body("increment", `"metric_value":-2.50`), "-2.5", testNow, false},
		{"zero in set", body("set", `"metric_value":0`), "0", testNow, false},
		{"exponent", body("set", `"metric_value":12E3`), "12000", testNow, false},
		{"small", body("set", `"metric_value":1e-7`), "0.0000001", testNow, false},
		{"64 characters written out", body("set", `"metric_value":1.7976931348623157e63`), "17976931348623157" + strings.Repeat("0", 47), testNow, false},
		{"rfc3339", body("set", `"timestamp":"2025-03-12T16:04:05+01:00"`), "5", testNow, true},
		{"unix", body("set", fmt.Sprintf(`"timestamp":%d`, testNow.Unix())), "5", testNow, true},
		{"null metadata", body("set", `"metadata":null`), "5", testNow, false},
		{"255 chars, unicode", body("set", `"account_id":"`+strings.Repeat("é", 255)+`"`), "5", testNow, false},
		{"whitespace", strings.ReplaceAll(body("set"), ":", " :\n "), "5", testNow, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Decode([]byte(tt.body), testNow)
			if err != nil {
				t.Fatal(err)
			}
			m := b.Metrics[0]
			if m.Value.String() != tt.value || !m.Timestamp.Equal(tt.ts) || m.TimestampSet != tt.tsSet {
				t.Fatalf("got %s %s %v", m.Value.String(), m.Timestamp, m.TimestampSet)
			}
			if string(m.Metadata) != "{}" {
				t.Fatalf("metadata %s", m.Metadata)
			}
		})
	}
}

func TestHashComparesByValue(t *testing.T) {
	base := body("increment", `"metadata":{"a":1,"b":[1,"x"]}`)
	same := []string{
		body("increment", `"metric_value":5.0`, `"metadata":{"b":[1.0,"x"],"a":1e0}`),
		body("increment", `"metric_value":5e0`, `"metadata":{"b" : [ 10e-1 , "\u0078" ] , "a":1}`),
	}
	different := []string{
		body("increment", `"metric_value":5.01`, `"metadata":{"a":1,"b":[1,"x"]}`),
		body("increment", `"metadata":{"a":1,"b":["x",1]}`),
		body("set", `"metadata":{"a":1,"b":[1,"x"]}`),
		body("increment", `"metadata":{"a":1,"b":[1,"x"]}`, fmt.Sprintf(`"timestamp":%d`, testNow.Unix())),
	}
	h := mustHash(t, base, testNow)
	for _, s := range same {
		if mustHash(t, s, testNow) != h {
			t.Errorf("hash differs for %s", s)
		}
	}
	for _, s := range different {
		if mustHash(t, s, testNow) == h {
			t.Errorf("hash equal for %s", s)
		}
	}
	// Missing metadata equals {}, and a default timestamp is not part of the hash.
	if mustHash(t, body("set"), testNow) != mustHash(t, body("set", `"metadata":{}`), testNow.Add(time.Hour)) {
		t.Error("missing metadata or default timestamp changed the hash")
	}
	// RFC 3339 and Unix seconds of the same instant are the same value.
	if mustHash(t, body("set", `"timestamp":"2025-03-12T15:04:05Z"`), testNow) !=
		mustHash(t, body("set", fmt.Sprintf(`"timestamp":%d`, testNow.Unix())), testNow) {
		t.Error("same instant hashed differently")
	}
}

func mustHash(t *testing.T, s string, now time.Time) string {
	t.Helper()
	b, err := Decode([]byte(s), now)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return b.Hash()
}

// Malformed bodies are told apart by the package's values; the message is the client's.
func TestDecodeMalformedValues(t *testing.T) {
	for body, want := range map[string]error{"": ErrInvalidJSON, "{": ErrInvalidJSON, "[]": ErrNotObject, `"x"`: ErrNotObject} {
		_, err := Decode([]byte(body), testNow)
		var ierr *apperr.InvalidError
		if !errors.Is(err, want) || !errors.As(err, &ierr) || ierr.Code != apperr.CodeInvalidJSON {
			t.Errorf("%q: got %v, want %v", body, err, want)
		}
	}
}
