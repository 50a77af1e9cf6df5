package api_test

import (
	"encoding/json"
	"testing"

	"github.com/revops/revops/internal/platform/buildinfo"
)

// /healthz names the build, so an operator sees which release each replica runs.
func TestHealthzNamesBuild(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/healthz", "", nil)
	if r.Status != 200 {
		t.Fatalf("healthz: %d %s", r.Status, r.Body)
	}
	var body struct {
		Status string         `json:"status"`
		Build  buildinfo.Info `json:"build"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("%s: %v", r.Body, err)
	}
	if body.Status != "ok" || body.Build != buildinfo.Read() {
		t.Errorf("healthz %s, want status ok and build %+v", r.Body, buildinfo.Read())
	}
	for _, key := range []string{"version", "revision", "modified", "temporal_server", "temporal_sdk"} {
		var raw map[string]map[string]any
		_ = json.Unmarshal(r.Body, &raw)
		if _, ok := raw["build"][key]; !ok {
			t.Errorf("healthz build lacks %q: %s", key, r.Body)
		}
	}
}
