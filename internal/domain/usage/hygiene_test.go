package usage

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/jsonnum"
	"github.com/revops/revops/internal/platform/textcheck"
)

// TestDecodeHygiene: CONTRACT §15 in a usage batch. Strings must be storable text (and
// identifiers single lines); numbers in metadata and metric_value at most 64 characters
// written out, whatever their spelling.
func TestDecodeHygiene(t *testing.T) {
	twenty := func(n string) string {
		parts := make([]string, 20)
		for i := range parts {
			parts[i] = `"n` + string(rune('a'+i)) + `":` + n
		}
		return `"metadata":{` + strings.Join(parts, ",") + `}`
	}
	cases := []struct {
		name string
		body string
		want string // apperr.Summary of the error; "" when accepted
	}{
		// The bodies: twenty 1e131000 (2.6 MB per read on PostgreSQL), 1e-99999
		// (100,000-character strings per value), numbers PostgreSQL's numeric cannot hold.
		{"twenty 1e131000", body("increment", twenty("1e131000")), "event_metrics[0].metadata.na:invalid_number"},
		{"twenty 1e-99999", body("increment", twenty("1e-99999")), "event_metrics[0].metadata.na:invalid_number"},
		{"overflows numeric", body("increment", `"metadata":{"n":1e131072}`), "event_metrics[0].metadata.n:invalid_number"},
		{"underflows numeric", body("increment", `"metadata":{"n":1e-16384}`), "event_metrics[0].metadata.n:invalid_number"},
		{"zero with numeric's largest scale", body("increment", `"metadata":{"n":0e-16383}`), "event_metrics[0].metadata.n:invalid_number"},
		{"exponent of seven digits", body("increment", `"metadata":{"n":0e1000000}`), "event_metrics[0].metadata.n:invalid_number"},
		{"exponent of twenty digits", body("increment", `"metadata":{"n":1e99999999999999999999}`), "event_metrics[0].metadata.n:invalid_number"},
		{"64 characters", body("increment", `"metadata":{"a":1e63,"b":-1e62,"c":1e-62,"d":0e-62,"e":0e999999}`), ""},
		{"65 characters", body("increment", `"metadata":{"a":1e64}`), "event_metrics[0].metadata.a:invalid_number"},
		{"65 characters negative", body("increment", `"metadata":{"a":-1e63}`), "event_metrics[0].metadata.a:invalid_number"},
		{"65 characters small", body("increment", `"metadata":{"a":1e-63}`), "event_metrics[0].metadata.a:invalid_number"},
		{"65 characters of zeros", body("increment", `"metadata":{"a":0.0e-62}`), "event_metrics[0].metadata.a:invalid_number"},
		{"leading zeros of an exponent", body("increment", `"metadata":{"a":1e0000000000000000000000000000000000000000001}`), ""},
		{"nested path", body("increment", `"metadata":{"a":[1,{"b":"x","c":1e99}]}`), "event_metrics[0].metadata.a[1].c:invalid_number"},
		{"first fault only", body("increment", `"metadata":{"a":1e99,"b":1e99}`), "event_metrics[0].metadata.a:invalid_number"},
		{"duplicate key still stored", body("increment", `"metadata":{"a":1e99,"a":1}`), "event_metrics[0].metadata.a:invalid_number"},
		{"every metric", batchOf(metricWith(`"metadata":{"a":1e99}`), metricWith(`"metadata":{"a":1e99}`)),
			"event_metrics[0].metadata.a:invalid_number event_metrics[1].metadata.a:invalid_number"},
		{"metric_value 64 characters", body("set", `"metric_value":1e63`), ""},
		{"metric_value 65 characters", body("set", `"metric_value":1e64`), "event_metrics[0].metric_value:invalid_number"},
		{"metric_value 1e-99999", body("set", `"metric_value":1e-99999`), "event_metrics[0].metric_value:parameter_invalid"},

		{"NUL escape in metadata value", body("increment", `"metadata":{"k":"a\u0000"}`), "event_metrics[0].metadata.k:invalid_string"},
		{"NUL escape in metadata key", body("increment", `"metadata":{"a\u0000":1}`), "event_metrics[0].metadata.a\x00:invalid_string"},
		{"escaped backslash before u0000", body("increment", `"metadata":{"k":"\\u0000"}`), ""},
		{"lone high surrogate", body("increment", `"metadata":{"k":"\ud800"}`), "event_metrics[0].metadata.k:invalid_string"},
		{"high surrogate then letter", body("increment", `"metadata":{"k":"\ud800\u0041"}`), "event_metrics[0].metadata.k:invalid_string"},
		{"lone low surrogate", body("increment", `"metadata":{"k":["\udc00"]}`), "event_metrics[0].metadata.k[0]:invalid_string"},
		{"surrogate pair", body("increment", `"metadata":{"k":"\ud83d\ude00","l":"\uD83D\uDE00 ok"}`), ""},
		{"invalid UTF-8 in metadata", body("increment", `"metadata":{"k":"a`+"\xff"+`"}`), "event_metrics[0].metadata.k:invalid_string"},
		{"control characters in metadata text", body("increment", `"metadata":{"k":"tab\tnewline\n\u0007"}`), ""},

		{"NUL in transaction_id", strings.Replace(body("set"), `"tx_1"`, `"tx\u0000"`, 1), "transaction_id:invalid_string"},
		{"tab in account_id", body("set", `"account_id":"a\tb"`), "event_metrics[0].account_id:invalid_string"},
		{"invalid UTF-8 in product", body("set", `"product":"p`+"\xc0\xaf"+`"`), "event_metrics[0].product:invalid_string"},
		{"surrogate half in metric_name", body("set", `"metric_name":"m\udfff"`), "event_metrics[0].metric_name:invalid_string"},
		{"C1 control in metric_name", body("set", `"metric_name":"m`+"\u0085"+`"`), "event_metrics[0].metric_name:invalid_string"},
		{"NUL in mode", strings.Replace(body("set"), `"mode":"set"`, `"mode":"set\u0000"`, 1), "mode:invalid_string"},
		{"unknown member named NUL", strings.Replace(body("set"), `"mode"`, `"\u0000":1,"mode"`, 1), "\x00:invalid_string"},
		{"unknown metric member with invalid UTF-8", batchOf(metricWith(`"` + "\xff" + `":1`)), "event_metrics[0].\ufffd:invalid_string"},
		{"unknown metric member with a surrogate half", batchOf(metricWith(`"\udbff":1`)), "event_metrics[0].\ufffd:invalid_string"},
		{"unknown member named U+FFFD", batchOf(metricWith(`"\ufffd":1`)), "event_metrics[0].\ufffd:unknown_parameter"},
		{"one bad spelling of a name", batchOf(metricWith(`"\ufffd":1,"` + "\xff" + `":2`)), "event_metrics[0].\ufffd:invalid_string"},
		{"zero-width space is not printable", body("set", `"account_id":"a`+"\u200b"+`"`), "event_metrics[0].account_id:parameter_invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.body), testNow)
			if got := apperr.Summary(err); got != c.want {
				t.Fatalf("got %q, want %q (%v)", got, c.want, err)
			}
		})
	}
}

func batchOf(metrics ...string) string {
	return `{"transaction_id":"t","mode":"set","event_metrics":[` + strings.Join(metrics, ",") + `]}`
}

func metricWith(extra string) string {
	return `{"account_id":"a","product":"p","metric_name":"m","metric_value":1,"metric_resolution":"hour",` + extra + `}`
}

// TestMetadataSizeCountsNumbersWrittenOut: 16 KiB of metadata is 16 KiB as stored, where
// PostgreSQL prints 1e60 as 61 characters.
func TestMetadataSizeCountsNumbersWrittenOut(t *testing.T) {
	n := strings.TrimSuffix(strings.Repeat("1e60,", 300), ",") // 1.5 KiB sent, 18 KiB stored
	_, err := Decode([]byte(body("increment", `"metadata":{"a":[`+n+`]}`)), testNow)
	var ve *apperr.ValidationError
	if !errors.As(err, &ve) || len(ve.Faults) != 1 || ve.Faults[0].Param != "event_metrics[0].metadata" ||
		!strings.Contains(ve.Faults[0].Message, "18607 bytes") {
		t.Fatalf("got %v, want metadata refused at 18607 bytes", err)
	}
	small := strings.TrimSuffix(strings.Repeat("1e60,", 200), ",") // 12.4 KiB stored
	if _, err := Decode([]byte(body("increment", `"metadata":{"a":[`+small+`]}`)), testNow); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedNumbersAreNotWrittenOut: refusing 1e-99999 or 1e131000 costs about what
// reading their bytes costs. Before, the decoder accepted 1e-99999 after building and
// hashing a 100,000-character string per value: 19 MB per call for this 7 KB body. Now a
// call allocates about 50 KB (the metric table and twenty faults); the bound leaves room
// for -race.
func TestRefusedNumbersAreNotWrittenOut(t *testing.T) {
	for _, n := range []string{"1e-99999", "1e131000", "-1.5e-999999"} {
		parts := make([]string, 20)
		for i := range parts {
			parts[i] = n
		}
		// Twenty metrics with the same metadata: each is refused at its first number.
		var metrics []string
		for range 20 {
			metrics = append(metrics, metricWith(`"metadata":{"a":[`+strings.Join(parts, ",")+`]}`))
		}
		data := []byte(batchOf(metrics...))
		const runs = 10
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			if _, err := Decode(data, testNow); !strings.Contains(apperr.Summary(err), jsonnum.Code) {
				t.Fatalf("%s: %v", n, err)
			}
		}
		runtime.ReadMemStats(&after)
		if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 256<<10 {
			t.Errorf("%s: Decode allocated %d bytes per call for a %d-byte body", n, per, len(data))
		}
	}
}

// TestStringFaultMatchesReference: the escape walk of textcheck.JSONString and the regular
// expression of the reference agree on every short escape sequence that matters.
func TestStringFaultMatchesReference(t *testing.T) {
	atoms := []string{`\u0000`, `\ud800`, `\udbff`, `\udc00`, `\udfff`, `\u0041`, `\\`, `\n`, `a`, `\\u0000`, "\xff", "é", `\ud83d\ude00`}
	for _, a := range atoms {
		for _, b := range atoms {
			for _, c := range atoms {
				content := a + b + c
				got := textcheck.JSONString([]byte(content), strings.Contains(content, `\`))
				want := refStringFault([]byte(`"` + content + `"`))
				if !errors.Is(got, want) || (got == nil) != (want == nil) {
					t.Errorf("%q: stringFault %v, reference %v", content, got, want)
				}
			}
		}
	}
	if err := textcheck.JSONString([]byte(`\u0000`), true); !errors.Is(err, textcheck.ErrNUL) {
		t.Fatalf("\\u0000: %v", err)
	}
}
