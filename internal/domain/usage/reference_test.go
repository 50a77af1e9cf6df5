package usage

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/apperr"
)

// referenceBodies are the inputs where a hand-written decoder could drift from
// encoding/json: escapes, duplicates, bad UTF-8, nesting, number spellings, limits.
func referenceBodies() []string {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	metrics := func(n int, m string) string {
		return `{"transaction_id":"t","mode":"increment","event_metrics":[` + strings.TrimSuffix(strings.Repeat(m+",", n), ",") + `]}`
	}
	one := `{"account_id":"a","product":"p","metric_name":"m","metric_value":1,"metric_resolution":"hour"}`
	bodies := []string{
		body("increment"), body("set"), "", " ", "{", "}", "null", "true", "1", `"x"`, "[]", "{}", " {} ", "{}\x00", "{} x",
		"\v{}", "{}\f", "\u00a0" + body("set"), body("set") + "\u0085", "\t\r\n" + body("set") + "\n",
		`{"transaction_id":"t","transaction_id":"u","mode":"set","event_metrics":[` + one + `]}`,
		`{"\u0074ransaction_id":"t","mode":"set","event_metrics":[` + one + `]}`,
		`{"mode":"set","event_metrics":[` + one + `],"event_metrics":[1],"transaction_id":"t"}`,
		`{"mode":"set","event_metrics":[1],"event_metrics":[` + one + `],"transaction_id":"t"}`,
		`{"mode":"set","event_metrics":null,"transaction_id":"t"}`, `{"mode":"set","event_metrics":"x","transaction_id":"t"}`,
		`{"z":1,"a":2,"z":3,"\u00e9":4,"` + "\xff" + `":5,"mode":null,"transaction_id":1,"event_metrics":[]}`,
		metrics(1000, one), metrics(1001, one), metrics(1001, "1"), metrics(3, `null`), metrics(2, `{}`),
		metrics(2, `{"x":1,"x":2,"a\u0301":3,"metric_value":null}`), metrics(1, `{"":1}`), `{"":1}`, metrics(1, `{"\u0061ccount_id":"a"}`),
		`{"a":` + deep(9999) + `}`, `{"a":` + deep(10000) + `}`, deep(10001), `{"a":` + strings.Repeat("{\"b\":", 10000) + "1" + strings.Repeat("}", 10000) + `}`,
		`{"\u0000":1,"mode":"set","transaction_id":"t","\ud800x":2,"event_metrics":[` + one + `]}`, `{"` + "\xff" + `":1,"\ufffd":2,"\ud800":3}`,
		metrics(2, `{"\u0000":1,"`+"\xfe"+`":2,"\ufffd":3,"ok\\u0000":4,"metric_value":1}`),
		`{"a":"\u12"}`, `{"a":"\x"}`, `{"a":"` + "\x01" + `"}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a" 1}`, `{"a":1,}`, `[1,]`,
	}
	for _, v := range []string{"0", "-0", "-0.0e-5", "00", "0.10", "2.50", "1200", "12E3", "1e-7", "-1.5E+2", "123456789012345678",
		"1234567890123456789", "0.000000000000000001", "1.7976931348623157e308", "1.8e308", "1e-400", "4.9e-324",
		"1.2345678901234567890123456789012345", "9999999999999999999999999999999999", "-9223372036854775808", "1.", ".5", "+1", `"5"`, "true", "{}", "[1]",
		"1e63", "1e64", "-1e62", "-1e63", "1e-62", "1e-63", "1.000000000000000000000000000000000000000000000000000000000000000000e1", "1e-99999", "1e131000"} {
		bodies = append(bodies, body("increment", `"metric_value":`+v), body("set", `"metric_value":`+v))
	}
	for _, m := range []string{`null`, `{}`, `{ }`, `[]`, `"x"`, `{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a":{"b":[1,1.0,"<&>"]}}`,
		`{"k":"\u2028\u003c` + "\xff\xfe" + `é"}`, `{"k":"a\"b\\c\/d\b\f\n\r\t"}`, `{"\u006b":1e0,"k":-0}`, `{"n":null,"t":true,"f":false}`,
		`{"big":1e400,"tiny":1E-400,"long":12345678901234567890123456789012345678}`, `{"k":"` + strings.Repeat("x", 16<<10) + `"}`,
		`{"k":"` + strings.Repeat("x", 16<<10-8) + `"}`, `{ "k" : [ 1 , 2 ] }`,
		// CONTRACT §15: numbers written out, strings PostgreSQL can store.
		`{"n":1e131000,"m":1e131000}`, `{"n":1e-99999}`, `{"n":1e-16384}`, `{"n":0e-16383}`, `{"n":0e1000000}`, `{"n":0e999999}`,
		`{"a":1e63,"b":-1e62,"c":1e-62,"d":0e-62}`, `{"a":1e64}`, `{"a":-1e63}`, `{"a":0.0e-62}`, `{"a":1E+0000000000000000063}`,
		`{"a":[1,{"b":"x","c":1e99}]}`, `{"a":1e99,"a":1}`, `{"a":[` + strings.TrimSuffix(strings.Repeat("1e60,", 300), ",") + `]}`,
		`{"k":"\u0000"}`, `{"\u0000":1}`, `{"k":"\\u0000"}`, `{"k":"\ud800"}`, `{"k":"\ud800\u0041"}`, `{"k":["\udc00"]}`,
		`{"k":"\ud83d\ude00\uD83D\uDE00"}`, `{"k":"\ud800\\n"}`, `{"k":"a` + "\xff" + `"}`, `{"` + "\xff" + `":1}`, `{"k":"\t\n\u0007"}`} {
		bodies = append(bodies, body("increment", `"metadata":`+m))
	}
	for _, ts := range []string{`"2025-03-12T15:00:00Z"`, `"2025-03-12T16:04:05.123456789+01:00"`, `1741791845`, `1741791845.0`, `"x"`,
		`"` + "\xff" + `"`, `"\u0032025-03-12T15:00:00Z"`, `-62135596801`, `99999999999999999999`, `true`, `null`, `{}`} {
		bodies = append(bodies, body("set", `"timestamp":`+ts))
	}
	for _, id := range []string{`""`, `" "`, `"a b"`, `"\u0000"`, `"` + "\xff" + `"`, `"\ud800"`, `"é"`, `"\u00e9"`, `"a\u0007"`, `"` + "\u200b" + `"`,
		`"` + strings.Repeat("é", 256) + `"`, `"` + strings.Repeat("a", 255) + `"`, `12`, `null`, `["a"]`,
		`"a\tb"`, `"\u0085"`, `"` + "\u0085" + `"`, `"\u007f"`, `"\udfff"`, `"a\u0000` + strings.Repeat("é", 256) + `"`} {
		bodies = append(bodies, body("set", `"account_id":`+id), body("set", `"metric_resolution":`+id))
	}
	return bodies
}

func TestDecodeMatchesReference(t *testing.T) {
	for i, s := range referenceBodies() {
		t.Run(fmt.Sprint(i), func(t *testing.T) { compareWithReference(t, []byte(s)) })
	}
}

// FuzzDecodeMatchesReference: the single-pass decoder gives what the original one gave.
// Run: go test ./internal/domain/usage -run '^$' -fuzz FuzzDecodeMatchesReference -fuzztime 30s
func FuzzDecodeMatchesReference(f *testing.F) {
	for _, s := range referenceBodies() {
		if len(s) < 4096 {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { compareWithReference(t, data) })
}

// compareWithReference checks that Decode and refDecode agree on data: the same error, or
// the same batch down to metadata bytes, canonical hashes and the batch hash.
func compareWithReference(t *testing.T, data []byte) {
	t.Helper()
	got, gotErr := Decode(data, testNow)
	if !bytes.Equal(bytes.TrimSpace(data), bytes.Trim(data, " \t\r\n")) {
		// The one intended change: the original trimmed Unicode white space (\v, \f, U+0085,
		// U+00A0) around the body, accepting text that is not JSON.
		var ierr *apperr.InvalidError
		if !errors.As(gotErr, &ierr) || ierr.Code != apperr.CodeInvalidJSON {
			t.Fatalf("%q: got %v, want invalid_json", data, gotErr)
		}
		return
	}
	want, wantErr := refDecode(data, testNow)
	if !reflect.DeepEqual(gotErr, wantErr) {
		t.Fatalf("%q:\n got error %v\nwant error %v", data, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if got.TransactionID != want.TransactionID || got.Mode != want.Mode || len(got.Metrics) != len(want.Metrics) {
		t.Fatalf("%q: got %+v, want %+v", data, got, want)
	}
	for i := range got.Metrics {
		g, w := &got.Metrics[i], &want.Metrics[i]
		if g.AccountID != w.AccountID || g.Product != w.Product || g.MetricName != w.MetricName ||
			g.Resolution != w.Resolution || !bytes.Equal(g.Metadata, w.Metadata) || g.metaHash != w.metaHash ||
			!g.Timestamp.Equal(w.Timestamp) || g.TimestampSet != w.TimestampSet ||
			g.Value.String() != w.Value.String() || g.Value.Sign() != w.Value.Sign() ||
			g.Value.Unscaled().Cmp(w.Value.Unscaled()) != 0 || g.Value.Scale() != w.Value.Scale() {
			t.Fatalf("%q: metric %d: got %+v, want %+v", data, i, *g, *w)
		}
	}
	if got.Hash() != refHash(&want) {
		t.Fatalf("%q: hash differs", data)
	}
}
