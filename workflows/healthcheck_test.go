package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// A run of the health check takes passes until one comes back short, and stops after
// healthPassesPerRun however much is due: the rest waits for the next minute (§21).
func TestHealthCheckPassesAreBounded(t *testing.T) {
	for _, tt := range []struct {
		due, wantPasses, wantChecked int
	}{
		{0, 1, 0},
		{2*HealthCheckBatch + 5, 3, 2*HealthCheckBatch + 5},
		{100 * HealthCheckBatch, healthPassesPerRun, healthPassesPerRun * HealthCheckBatch},
	} {
		env := jobEnv(HealthCheck, wire.HealthCheckWorkflowName)
		left, passes := tt.due, 0
		var h *activities.Health
		env.OnActivity(h.CheckHealth, mock.Anything, mock.Anything).Return(
			func(_ context.Context, in activities.HealthCheckPass) (activities.HealthCheckResult, error) {
				passes++
				n := min(in.Limit, left)
				left -= n
				return activities.HealthCheckResult{Endpoints: n}, nil
			})
		env.ExecuteWorkflow(wire.HealthCheckWorkflowName, wire.HealthCheckInput{})
		var checked int
		if err := env.GetWorkflowResult(&checked); err != nil {
			t.Fatal(err)
		}
		if passes != tt.wantPasses || checked != tt.wantChecked {
			t.Errorf("%d due: %d passes, %d checked; want %d, %d", tt.due, passes, checked, tt.wantPasses, tt.wantChecked)
		}
	}
}
