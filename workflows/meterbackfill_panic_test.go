package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// poisonedMeter is the backfill activity's store: its environment's data panics on the
// first pages, then the meter is found deleted.
type poisonedMeter struct {
	meters.Store
	panics, calls int
}

func (p *poisonedMeter) MeterByID(context.Context, string) (models.Meter, error) {
	p.calls++
	if p.calls > p.panics {
		return models.Meter{}, apperr.ErrNotFound
	}
	return models.Meter{ID: "meter-1", EnvironmentID: "env-1"}, nil
}

func (p *poisonedMeter) InTx(context.Context, models.Env, func(*store.Tx) error) ([]models.Event, error) {
	var s []int
	_ = s[p.calls] // index out of range on the environment's data
	return nil, nil
}

// CONTRACT §21: a backfill page that panics is retried under the page's RetryPolicy —
// after 1 s, then 2 s, 4 s … — not at once and not in a loop; the run goes on once the
// page stops panicking (here the meter is deleted meanwhile: the run ends successfully).
func TestMeterBackfillPanickingPageBacksOff(t *testing.T) {
	env := jobEnv(MeterBackfill, wire.MeterBackfillWorkflowName)
	st := &poisonedMeter{panics: 3}
	env.RegisterActivity(&activities.MeterBackfill{Store: st})
	began := env.Now()
	env.ExecuteWorkflow(MeterBackfill, meterIn)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res wire.MeterBackfillResult
	if err := env.GetWorkflowResult(&res); err != nil || !res.Deleted {
		t.Fatalf("result %+v, %v: want the run ended on the deleted meter", res, err)
	}
	if st.calls != 4 {
		t.Fatalf("%d pages run, want 3 that panicked and the one that found the meter gone", st.calls)
	}
	// The retries waited 1 + 2 + 4 s of the run's clock.
	if waited := env.Now().Sub(began); waited < 7*time.Second {
		t.Fatalf("3 panicking pages retried within %v of the run's clock: no backoff", waited)
	}
}
