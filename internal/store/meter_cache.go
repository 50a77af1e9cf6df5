package store

import (
	"sync"

	"github.com/revops/revops/models"
)

// figureCache keeps, per environment, the meter figures this process's last consumer or
// backfill transaction left, so that the next one reads only the figures it has not
// seen: a consumer transaction rewrites the same hours, days, weeks and months again and
// again, and reading them back was a fifth of its database time.
//
// The cache is as of the environment's usage_cursors.writes, which every transaction
// that writes figures raises under the environment's lock. A transaction whose lock
// shows another value (another process wrote since, or this one failed to commit) starts
// from an empty cache, so what it reads is always what the database holds.
type figureCache struct {
	mu   sync.Mutex
	envs map[string]*envFigures
}

// maxCachedFigures bounds one environment's cache: past it, the cache starts again
// empty (the figures of past windows would otherwise stay for good).
const maxCachedFigures = 200_000

type envFigures struct {
	writes int64
	figs   map[figureID]models.MeterFigure
}

// figureID is a figure's key usable as a map key (the window start by its instant).
type figureID struct {
	meterID, kind, accountID, groups string
	start                            int64
}

func idOf(meterID string, k FigureKey) figureID {
	return figureID{meterID, k.Kind, k.AccountID, k.Groups, k.WindowStart.UnixNano()}
}

// view returns the environment's cached figures if they are as of writes, nil otherwise.
// Only the transaction holding the environment's lock (which read writes) uses the map,
// until it commits; so committed may then change it in place.
func (c *figureCache) view(envID string, writes int64) map[figureID]models.MeterFigure {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.envs[envID]; e != nil && e.writes == writes {
		return e.figs
	}
	return nil
}

// committed records that a transaction which found the environment as of writes (and the
// cache's view of it, nil when none) and wrote figures committed: the environment is now
// as of writes+1, and holds the view plus what it wrote.
func (c *figureCache) committed(envID string, writes int64, view, wrote map[figureID]models.MeterFigure) {
	if c == nil {
		return
	}
	if view == nil || len(view)+len(wrote) > maxCachedFigures {
		view = make(map[figureID]models.MeterFigure, len(wrote))
	}
	for id, f := range wrote {
		view[id] = f
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.envs == nil {
		c.envs = map[string]*envFigures{}
	}
	c.envs[envID] = &envFigures{writes: writes + 1, figs: view}
}
