package config

import (
	"strings"
	"testing"
	"time"
)

// REVOPS_RETENTION defaults to 720h; anything under the longest retry schedule (168h) is
// refused, naming the variable, in every mode.
func TestRetention(t *testing.T) {
	c, err := load(t, "worker")
	if err != nil || c.Retention != 720*time.Hour {
		t.Fatalf("default retention %v, %v; want 720h", c.Retention, err)
	}
	for _, tc := range []struct {
		val  string
		want time.Duration
		ok   bool
	}{
		{"168h", 168 * time.Hour, true},
		{"2160h", 2160 * time.Hour, true},
		{"167h59m", 0, false},
		{"24h", 0, false},
		{"0", 0, false},
		{"-720h", 0, false},
		{"a month", 0, false},
	} {
		for _, mode := range []string{"api", "worker", "serve", "dev", "temporal-setup"} {
			t.Run(mode+"="+tc.val, func(t *testing.T) {
				t.Setenv("REVOPS_RETENTION", tc.val)
				c, err := load(t, mode)
				switch {
				case tc.ok && (err != nil || c.Retention != tc.want):
					t.Errorf("got %v, %v; want %v", c.Retention, err, tc.want)
				case !tc.ok && (err == nil || !strings.Contains(err.Error(), "REVOPS_RETENTION")):
					t.Errorf("err = %v, want a refusal naming REVOPS_RETENTION", err)
				}
			})
		}
	}
}
