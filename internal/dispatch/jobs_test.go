package dispatch_test

import (
	"context"
	"time"

	"github.com/revops/revops/internal/store"
)

// jobRows stands for the rows of every kind of tenant job (store.UnstartedJobs,
// MarkJobStarted): those of the kinds' own table fakes that are set, none of the others.
type jobRows struct {
	backfills *backfillRows
	purges    *purgeRows
	deletions *deletionRows
}

func (r jobRows) UnstartedJobs(ctx context.Context, kind store.JobKind, before time.Time, limit int) ([]store.Job, error) {
	var out []store.Job
	switch {
	case kind == store.JobMeterBackfill && r.backfills != nil:
		ms, _ := r.backfills.UnstartedBackfills(ctx, before, limit)
		for _, m := range ms {
			out = append(out, store.BackfillOf(m))
		}
	case kind == store.JobMeterPurge && r.purges != nil:
		ps, _ := r.purges.UnstartedPurges(ctx, before, limit)
		for _, p := range ps {
			out = append(out, store.PurgeOf(p))
		}
	case kind == store.JobEndpointDeletion && r.deletions != nil:
		ds, _ := r.deletions.UnstartedEndpointDeletions(ctx, before, limit)
		for _, d := range ds {
			out = append(out, store.DeletionOf(d))
		}
	}
	return out, nil
}

func (r jobRows) MarkJobStarted(ctx context.Context, j store.Job, at time.Time) error {
	switch {
	case j.Kind == store.JobMeterBackfill && r.backfills != nil:
		return r.backfills.MarkBackfillStarted(ctx, j.ID, at)
	case j.Kind == store.JobMeterPurge && r.purges != nil:
		return r.purges.MarkPurgeStarted(ctx, j.ID, at)
	case j.Kind == store.JobEndpointDeletion && r.deletions != nil:
		return r.deletions.MarkEndpointDeletionStarted(ctx, j.ID, at)
	}
	return nil
}
