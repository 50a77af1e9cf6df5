package period

import (
	"testing"
	"time"
)

func TestStart(t *testing.T) {
	at := time.Date(2025, 3, 12, 15, 4, 5, 999, time.FixedZone("CET", 3600)) // a Wednesday, 14:04:05 UTC
	tests := []struct {
		res  string
		at   time.Time
		want string
	}{
		{Minute, at, "2025-03-12T14:04:00Z"},
		{Hour, at, "2025-03-12T14:00:00Z"},
		{Day, at, "2025-03-12T00:00:00Z"},
		{Week, at, "2025-03-10T00:00:00Z"},
		{Week, time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC), "2025-03-10T00:00:00Z"},   // Monday itself
		{Week, time.Date(2025, 3, 16, 23, 59, 0, 0, time.UTC), "2025-03-10T00:00:00Z"}, // Sunday
		{Week, time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC), "2024-12-30T00:00:00Z"},   // across a year
		{Month, at, "2025-03-01T00:00:00Z"},
		{Day, time.Date(2025, 3, 1, 0, 30, 0, 0, time.FixedZone("X", 3600)), "2025-02-28T00:00:00Z"}, // UTC, not local
	}
	for _, tt := range tests {
		if got := Start(tt.at, tt.res).Format(time.RFC3339); got != tt.want {
			t.Errorf("%s of %s = %s, want %s", tt.res, tt.at, got, tt.want)
		}
	}
}
