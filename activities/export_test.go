package activities

import (
	"context"
	"time"
)

// HoldWith makes b's pacing call f with each hold instead of waiting it out.
func (b *BulkReplay) HoldWith(f func(ctx context.Context, d time.Duration)) { b.hold = f }
