package store

import (
	"container/list"
	"sync"

	"github.com/revops/revops/models"
)

// figureCache keeps, per environment, the meter figures this process's last consumer or
// backfill transaction left, so that the next one reads only the figures it has not
// seen: a consumer transaction rewrites the same hours and days (and, for unique_count,
// weeks and months) again and again, and reading them back was a fifth of its database time.
//
// The cache is as of the environment's usage_cursors.writes, which every transaction
// that writes figures raises under the environment's lock. A transaction whose lock
// shows another value (another process wrote since, or this one failed to commit) starts
// from an empty cache, so what it reads is always what the database holds.
//
// It is bounded for the whole process, not per environment (CONTRACT §21): past
// maxCacheBytes the environments used least recently are dropped, so many tenants with
// many series cost the process a fixed amount of memory, and one tenant's figures can
// push out only what was used longer ago.
type figureCache struct {
	mu    sync.Mutex
	envs  map[string]*list.Element // of *envFigures, most recently used at the front
	order list.List
	bytes int
	max   int // 0: maxCacheBytes
}

// maxCacheBytes bounds the figures the cache keeps, by their estimated size.
const maxCacheBytes = 64 << 20

type envFigures struct {
	envID  string
	writes int64
	figs   map[figureID]models.MeterFigure
	bytes  int
}

// figureID is a figure's key usable as a map key (the window start by its instant).
type figureID struct {
	meterID, kind, accountID, groups string
	start                            int64
}

func idOf(meterID string, k FigureKey) figureID {
	return figureID{meterID, k.Kind, k.AccountID, k.Groups, k.WindowStart.UnixNano()}
}

// figureBytes estimates what a kept figure costs: its texts, twice for the key, and
// the fixed parts of the struct and the map's entry.
func figureBytes(f *models.MeterFigure) int {
	return 2*(len(f.MeterID)+len(f.Kind)+len(f.AccountID)+len(f.Groups)) + len(f.Value) + len(f.Slots) + len(f.LatestID) + 256
}

func (c *figureCache) limit() int {
	if c.max > 0 {
		return c.max
	}
	return maxCacheBytes
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
	if el := c.envs[envID]; el != nil {
		if e := el.Value.(*envFigures); e.writes == writes {
			c.order.MoveToFront(el)
			return e.figs
		}
	}
	return nil
}

// committed records that a transaction which found the environment as of writes (and the
// cache's view of it, nil when none) and wrote figures committed: the environment is now
// as of writes+1, and holds the view plus what it wrote, as far as the bound allows.
func (c *figureCache) committed(envID string, writes int64, view, wrote map[figureID]models.MeterFigure) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.envs == nil {
		c.envs = map[string]*list.Element{}
	}
	size := 0
	if el := c.envs[envID]; el != nil {
		old := el.Value.(*envFigures)
		// The view given out as of writes is the entry's own map (view hands out only
		// the entry as of the cursor's count, which only the lock holder raises).
		if view == nil || old.writes != writes {
			view = nil
		} else {
			size = old.bytes
		}
		c.bytes -= old.bytes
		c.order.Remove(el)
		delete(c.envs, envID)
	} else {
		view = nil
	}
	if view == nil {
		view, size = make(map[figureID]models.MeterFigure, len(wrote)), 0
	}
	for id, f := range wrote {
		if old, ok := view[id]; ok {
			size -= figureBytes(&old)
		}
		view[id] = f
		size += figureBytes(&f)
	}
	if size > c.limit() { // one environment's figures larger than the whole cache: keep none
		return
	}
	c.envs[envID] = c.order.PushFront(&envFigures{envID: envID, writes: writes + 1, figs: view, bytes: size})
	c.bytes += size
	for c.bytes > c.limit() {
		last := c.order.Back()
		e := last.Value.(*envFigures)
		c.order.Remove(last)
		delete(c.envs, e.envID)
		c.bytes -= e.bytes
	}
}
