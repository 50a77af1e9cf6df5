package meterstest

import (
	"context"
	"errors"
	"fmt"

	"github.com/revops/revops/internal/domain/meters"
)

// waitingEnvironments is how many environments with waiting batches Consume looks at in
// one round (meters.Consumer's line takes as many).
const waitingEnvironments = 100

// Consume counts every environment's waiting usage batches into its meters until none
// waits (or, for environments another transaction holds, until they are left to it), in
// turns, and says how many rows it read: the consumer of tests and benchmarks, which run
// it alone (production runs meters.Consumer). A failing environment is skipped for the
// round and its error returned after it (its batches stay waiting: nothing is lost).
func Consume(ctx context.Context, st meters.Store) (int, error) {
	total := 0
	for ctx.Err() == nil {
		envs, err := st.WaitingUsageEnvironments(ctx, nil, waitingEnvironments)
		if err != nil {
			return total, err
		}
		progressed := false
		var errs []error
		for _, env := range envs {
			for more := true; more && ctx.Err() == nil; {
				var ran bool
				var n int
				ran, n, more, err = meters.Turn(ctx, st, env, meters.DefaultBudget)
				if err != nil {
					errs = append(errs, fmt.Errorf("environment %s: %w", env, err))
					break
				}
				if !ran {
					break
				}
				progressed, total = true, total+n
			}
		}
		if len(errs) > 0 || !progressed {
			return total, errors.Join(errs...)
		}
	}
	return total, ctx.Err()
}
