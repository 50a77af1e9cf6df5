package webhook_test

import (
	"testing"
	"time"

	"github.com/revops/revops/internal/webhook"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour: "1h", 90 * time.Second: "1m30s", 150 * time.Minute: "2h30m", time.Second: "1s",
		1500 * time.Millisecond: "1.5s", 24 * time.Hour: "24h", time.Hour + time.Second: "1h0m1s", 5 * time.Minute: "5m",
	} {
		if got := webhook.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(webhook.FormatDuration(d)); err != nil || back != d {
			t.Errorf("%q does not parse back to %v: %v %v", webhook.FormatDuration(d), d, back, err)
		}
	}
}
