package revops

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"
)

// sharedCases is clients/testdata/webhook-signatures.json: the signature cases the Go,
// TypeScript and Python suites all verify, so that the three clients accept and refuse
// the same deliveries (its signatures are Revops's own: internal/platform/signing's test
// checks that its signing still makes them).
type sharedCases struct {
	Cases []struct {
		Name    string                     `json:"name"`
		Key     string                     `json:"key"`
		Now     int64                      `json:"now"`
		Headers map[string]json.RawMessage `json:"headers"`
		Body    string                     `json:"body"`
		Want    string                     `json:"want"`
	} `json:"cases"`
}

// wantErrors maps the table's reasons to this client's errors: it has one error for
// either side of the tolerance.
var wantErrors = map[string]error{
	"ok":                nil,
	"missing_headers":   ErrWebhookHeaders,
	"bad_signature":     ErrWebhookSignature,
	"timestamp_too_old": ErrWebhookTimestamp,
	"timestamp_too_new": ErrWebhookTimestamp,
}

func readTestdata(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("../testdata/" + name)
	if err != nil {
		t.Fatalf("%v: run the test from the repository", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func TestVerifySharedCases(t *testing.T) {
	var table sharedCases
	readTestdata(t, "webhook-signatures.json", &table)
	if len(table.Cases) < 30 {
		t.Fatalf("%d cases", len(table.Cases))
	}
	for _, c := range table.Cases {
		t.Run(c.Name, func(t *testing.T) {
			want, known := wantErrors[c.Want]
			if !known {
				t.Fatalf("unknown want %q", c.Want)
			}
			w, err := NewWebhooks(c.Key)
			if err != nil {
				t.Fatal(err)
			}
			w.now = func() time.Time { return time.Unix(c.Now, 0) }
			header := http.Header{}
			for name, raw := range c.Headers {
				// Set by hand, not with Set: the names keep the case the table gives.
				var lines []string
				if json.Unmarshal(raw, &lines) != nil {
					var one string
					if err := json.Unmarshal(raw, &one); err != nil {
						t.Fatal(err)
					}
					lines = []string{one}
				}
				header[name] = lines
			}
			ev, err := w.Verify(header, []byte(c.Body))
			if want == nil {
				if err != nil || ev.Event.ID != "msg_p5jXN8AQM9LWM0D4loKWxJek" {
					t.Fatalf("Verify = %+v, %v; want it verified", ev, err)
				}
				return
			}
			if !errors.Is(err, want) {
				t.Fatalf("Verify = %v, want %v (%s)", err, want, c.Want)
			}
		})
	}
}

// TestRFC8032VectorsFile checks the file the Python client's pure-Python ed25519 is tested
// against: crypto/ed25519 derives each vector's public key from its secret key and makes
// its signature (Ed25519 is deterministic), so the file holds RFC 8032's vectors.
func TestRFC8032VectorsFile(t *testing.T) {
	var file struct {
		Vectors []map[string]string `json:"vectors"`
	}
	readTestdata(t, "ed25519-rfc8032.json", &file)
	if len(file.Vectors) != 5 {
		t.Fatalf("%d vectors, want RFC 8032's 5", len(file.Vectors))
	}
	for _, v := range file.Vectors {
		var b [4][]byte
		for i, k := range []string{"secret_key", "public_key", "message", "signature"} {
			var err error
			if b[i], err = hex.DecodeString(v[k]); err != nil {
				t.Fatalf("%s %s: %v", v["name"], k, err)
			}
		}
		priv := ed25519.NewKeyFromSeed(b[0])
		if !bytes.Equal(priv.Public().(ed25519.PublicKey), b[1]) || !bytes.Equal(ed25519.Sign(priv, b[2]), b[3]) {
			t.Errorf("%s: not what crypto/ed25519 makes of its secret key", v["name"])
		}
	}
}
