package activities

import (
	"context"
	"fmt"

	"github.com/revops/revops/internal/domain/meters"
)

// MeterPurgeStore is what purging a deleted meter's figures needs of the database (the
// jobs' pool, CONTRACT §21).
type MeterPurgeStore interface {
	PurgeMeterPage(ctx context.Context, meterID string, maxRows int) (int, error)
	EndMeterPurge(ctx context.Context, meterID string) error
}

// MeterPurge holds the meter purge activities' dependencies.
type MeterPurge struct {
	Store MeterPurgeStore
	// Rows bounds a page (0: meters.PurgeRows); tests make it small so that a purge takes
	// many pages.
	Rows int
}

// MeterPurgeInput names the deleted meter.
type MeterPurgeInput struct {
	MeterID string
}

// MeterPurgePageOutput is what a page deleted. Only counts: the workflow history never
// holds usage data.
type MeterPurgePageOutput struct {
	Rows int  // figure rows deleted
	Done bool // nothing of the meter's figures is left
}

// PurgeMeterPage deletes the next page of a deleted meter's figures (store.
// PurgeMeterPage). The page is decided in the database: an attempt cut anywhere is simply
// run again and deletes what is left. A panic ends the page alone (ErrTypePanic).
func (p *MeterPurge) PurgeMeterPage(ctx context.Context, in MeterPurgeInput) (MeterPurgePageOutput, error) {
	return guardedPage(ctx, "meter_purge_page", func() (MeterPurgePageOutput, error) { return p.purgePage(ctx, in) },
		"meter_id", in.MeterID)
}

func (p *MeterPurge) purgePage(ctx context.Context, in MeterPurgeInput) (MeterPurgePageOutput, error) {
	limit := p.Rows
	if limit <= 0 {
		limit = meters.PurgeRows
	}
	rows, err := p.Store.PurgeMeterPage(ctx, in.MeterID, limit)
	if err != nil {
		return MeterPurgePageOutput{}, fmt.Errorf("purge meter page: %w", err)
	}
	return MeterPurgePageOutput{Rows: rows, Done: rows < limit}, nil
}

// EndMeterPurge removes the purge's row once every figure is gone: the deleted meter no
// longer counts toward its environment's 32 (CONTRACT §21).
func (p *MeterPurge) EndMeterPurge(ctx context.Context, in MeterPurgeInput) error {
	return p.Store.EndMeterPurge(ctx, in.MeterID)
}
