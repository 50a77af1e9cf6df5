package activities

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/revops/revops/internal/platform/temporalsetup"
	"github.com/revops/revops/models"
)

// PacingStore is what the reconcile of paced endpoints reads: all of them, by pages.
type PacingStore interface {
	PacedEndpointsAfter(ctx context.Context, after string, limit int) ([]models.WebhookEndpoint, error)
}

// Pacing keeps the paced queue's weight overrides equal to the paced endpoints' rates
// (CONTRACT §27). Every write that changes a rate pushes it after its commit
// (dispatch.Pacer); the minute check of §23 runs Reconcile to catch what a push missed
// (Temporal away, a process killed after the commit): overrides added, changed, and
// removed for endpoints unpaced or deleted.
type Pacing struct {
	Store PacingStore
	Queue temporalsetup.PacedQueue
	// KeyRate is the queue's default per-key rate (wire.PacedKeyRate), set again if it
	// is not.
	KeyRate float32
	Log     *slog.Logger
}

// PacingPage is how many paced endpoints one read of the reconcile takes.
const PacingPage = 500

// PacingResult counts what a reconcile changed.
type PacingResult struct {
	Endpoints, Set, Unset int
}

// Reconcile brings the overrides to the database's rates, in bounded pages: one read of
// the queue's config, the paced endpoints PacingPage at a time, and the differences in
// requests of at most temporalsetup.MaxOverridesPerUpdate keys. The overrides are read
// first: an endpoint paced after that read has its own push, and one paced before it
// committed before it, so the pages find it (none is unset wrongly).
func (p *Pacing) Reconcile(ctx context.Context) (PacingResult, error) {
	var res PacingResult
	defaultRate, have, err := p.Queue.Config(ctx)
	if err != nil {
		return res, err
	}
	if p.KeyRate > 0 && (defaultRate == nil || *defaultRate != p.KeyRate) {
		if _, err := p.Queue.EnsureDefaultRate(ctx, p.KeyRate); err != nil {
			return res, err
		}
	}
	set := map[string]float32{}
	for after := ""; ; {
		page, err := p.Store.PacedEndpointsAfter(ctx, after, PacingPage)
		if err != nil {
			return res, fmt.Errorf("paced endpoints: %w", err)
		}
		for _, ep := range page {
			want := temporalsetup.Weight(ep.PacedRate())
			if w, ok := have[ep.ID]; !ok || w != want {
				set[ep.ID] = want
			}
			delete(have, ep.ID)
		}
		res.Endpoints += len(page)
		if len(page) < PacingPage {
			break
		}
		after = page[len(page)-1].ID
	}
	unset := make([]string, 0, len(have))
	for id := range have {
		unset = append(unset, id)
	}
	res.Set, res.Unset = len(set), len(unset)
	if len(set) == 0 && len(unset) == 0 {
		return res, nil
	}
	if err := p.Queue.SetWeights(ctx, set, unset); err != nil {
		return res, err
	}
	if p.Log != nil {
		p.Log.Info("paced endpoints reconciled with Temporal", "endpoints", res.Endpoints, "set", res.Set, "unset", res.Unset)
	}
	return res, nil
}
