package activities

import (
	"context"
	"testing"
	"time"
)

// The HTTP exchange gets the attempt's remaining time less a reserve of at most 1 s,
// kept for writing the record (CONTRACT §10).
func TestExchangeKeepsAReserveForTheRecord(t *testing.T) {
	tests := []struct {
		name      string
		remaining time.Duration // 0: no deadline
		reserve   time.Duration
	}{
		{"no deadline", 0, time.Second},
		{"a full attempt", 30 * time.Second, time.Second},
		{"ten seconds left", 10 * time.Second, time.Second},
		{"two seconds left", 2 * time.Second, 200 * time.Millisecond},
		{"deadline passed", -time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var deadline time.Time
			if tt.remaining != 0 {
				deadline = time.Now().Add(tt.remaining)
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, deadline)
				defer cancel()
			}
			reserve := recordReserve(ctx)
			// Time passes between the deadline and the call: allow the reserve to shrink a little.
			if reserve > tt.reserve || reserve < tt.reserve-tt.reserve/100 {
				t.Fatalf("reserve %v, want %v", reserve, tt.reserve)
			}
			sendCtx, cancel := withReserve(ctx, reserve)
			defer cancel()
			got, ok := sendCtx.Deadline()
			if ok != (tt.remaining != 0) || ok && !got.Equal(deadline.Add(-reserve)) {
				t.Fatalf("exchange deadline %v (set %v), want the attempt's less %v", got, ok, reserve)
			}
		})
	}
}
