package usage

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/jsonnum"
	"github.com/revops/revops/internal/platform/textcheck"
)

// FuzzDecode: Decode never panics, fails only with the two client error types, and
// whatever it accepts satisfies every rule of CONTRACT §5, checked here independently.
// Run: go test ./internal/domain/usage -run '^$' -fuzz FuzzDecode -fuzztime 60s
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		body("increment"), body("set", `"metric_value":-1`), body("increment", `"metadata":{"a":[1,{"b":null}]}`),
		body("set", `"timestamp":"2025-03-12T15:00:00Z"`), body("set", `"metric_value":1e400`),
		`{"transaction_id":"t","mode":"set","event_metrics":[]}`, `{}`, `[]`, `"x"`, `{"a":1,"a":2}`,
		body("increment", `"account_id":"\u00e9\ud800"`), body("increment", `"metric_value":-0.0e-5`),
		body("increment", `"metadata":{"a":1e131000,"b":[1e-99999]}`), body("increment", `"metadata":{"a":1e63,"b":0e-62,"c":1e-16384}`),
		body("increment", `"metadata":{"k":"\u0000","\ud800":"\ud83d\ude00"}`), body("set", `"metric_value":1e64`),
		body("set", `"product":"a\tb"`), body("increment", `"metadata":{"n":1e99999999999999999999}`),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decode(data, testNow)
		if err != nil {
			var verr *apperr.ValidationError
			var ierr *apperr.InvalidError
			if !errors.As(err, &verr) && !errors.As(err, &ierr) {
				t.Fatalf("unexpected error type %T", err)
			}
			if verr != nil && len(verr.Faults) == 0 {
				t.Fatal("validation error without faults")
			}
			return
		}
		checkAccepted(t, b, data)
	})
}

func checkAccepted(t *testing.T, b Batch, data []byte) {
	if !json.Valid(data) {
		t.Fatal("accepted invalid JSON")
	}
	checkID(t, b.TransactionID)
	if b.Mode != ModeIncrement && b.Mode != ModeSet {
		t.Fatalf("accepted mode %q", b.Mode)
	}
	if len(b.Metrics) < 1 || len(b.Metrics) > MaxMetrics {
		t.Fatalf("accepted %d metrics", len(b.Metrics))
	}
	for _, m := range b.Metrics {
		checkID(t, m.AccountID)
		checkID(t, m.Product)
		checkID(t, m.MetricName)
		if !ValidResolution(m.Resolution) {
			t.Fatalf("accepted resolution %q", m.Resolution)
		}
		v, err := strconv.ParseFloat(m.Value.String(), 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			t.Fatalf("accepted value %s", m.Value.String())
		}
		if b.Mode == ModeSet && m.Value.Sign() < 0 {
			t.Fatal("accepted a negative value in set mode")
		}
		var meta any
		if err := json.Unmarshal(m.Metadata, &meta); err != nil || len(m.Metadata) > MaxMetadataBytes {
			t.Fatalf("accepted metadata %q", m.Metadata)
		}
		if p, _, msg, grow := refMetaCheck(m.Metadata, "metadata"); p != "" || len(m.Metadata)+grow > MaxMetadataBytes {
			t.Fatalf("accepted metadata %q: %s (%d bytes stored)", m.Metadata, msg, len(m.Metadata)+grow)
		}
		if len(m.Value.String()) > jsonnum.MaxText {
			t.Fatalf("accepted value %s", m.Value.String())
		}
		if _, ok := meta.(map[string]any); !ok {
			t.Fatalf("accepted non-object metadata %q", m.Metadata)
		}
		if m.Timestamp.Before(testNow.Add(-MaxPast)) || m.Timestamp.After(testNow.Add(MaxFuture)) {
			t.Fatalf("accepted timestamp %s", m.Timestamp)
		}
	}
	if b.Hash() != b.Hash() {
		t.Fatal("hash is not deterministic")
	}
}

func checkID(t *testing.T, s string) {
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxIDLength || !utf8.ValidString(s) {
		t.Fatalf("accepted id %q", s)
	}
	if err := textcheck.Line(s); err != nil {
		t.Fatalf("accepted id %q: %v", s, err)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			t.Fatalf("accepted id with unprintable %q", r)
		}
	}
}
