package signing

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSharedTableIsSignedByRevops checks clients/testdata/webhook-signatures.json, the
// signature cases the Go, TypeScript and Python clients all verify: every signature header
// it says Revops made (signed_by) is what Header makes of those keys today. The clients'
// suites thus verify Revops's own signatures, v1 and v1a, and a change to the signing
// fails here before it reaches a receiver.
func TestSharedTableIsSignedByRevops(t *testing.T) {
	b, err := os.ReadFile("../../../clients/testdata/webhook-signatures.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Cases []struct {
			Name     string         `json:"name"`
			Headers  map[string]any `json:"headers"`
			SignedBy *struct {
				Keys      []string `json:"keys"`
				ID        string   `json:"id"`
				Timestamp int64    `json:"timestamp"`
				Body      string   `json:"body"`
			} `json:"signed_by"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatal(err)
	}
	signed := 0
	for _, c := range table.Cases {
		if c.SignedBy == nil {
			continue // a header made by hand (garbage entries, split lines)
		}
		var header string
		for name, v := range c.Headers {
			if strings.EqualFold(name, "webhook-signature") {
				header, _ = v.(string)
			}
		}
		s := c.SignedBy
		if got := Header(s.Keys, s.ID, time.Unix(s.Timestamp, 0), []byte(s.Body)); got != header {
			t.Errorf("%s: Header = %q, the table has %q", c.Name, got, header)
		}
		signed++
	}
	if signed < 20 {
		t.Fatalf("only %d cases say how Revops signed them", signed)
	}
}
