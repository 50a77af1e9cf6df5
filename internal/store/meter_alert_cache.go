package store

import (
	"sync"
	"time"
)

// firedCache keeps the firings this process knows are recorded (committed), so that a
// consumer turn does not read back, turn after turn, the firings of every series its
// figures touch: once a series crosses a threshold it stays crossed for the rest of the
// window, and every later turn writing it would otherwise read its firing again (the
// meters benchmark's alerted arm spent about as much as the consumer itself on that).
// A firing, once committed, is only ever removed with its alert (a deleted alert or
// meter fires no more), so a key found here is recorded; a key not found is looked for
// in the database. Bounded for the whole process (CONTRACT §21): past maxFiredKeys it
// starts again, empty.
type firedCache struct {
	mu   sync.Mutex
	keys map[firedKey]struct{}
}

// maxFiredKeys bounds the firings the cache keeps (about 150 bytes each).
const maxFiredKeys = 200_000

// firedKey is a FiringKey usable as a map key (the window start by its instant).
type firedKey struct {
	alertID, accountID, groups string
	start                      int64
}

func firedKeyOf(k FiringKey) firedKey {
	return firedKey{k.AlertID, k.AccountID, k.Groups, k.WindowStart.UnixNano()}
}

func (k firedKey) key() FiringKey {
	return FiringKey{AlertID: k.alertID, AccountID: k.accountID, Groups: k.groups, WindowStart: time.Unix(0, k.start).UTC()}
}

// has tells whether k is known recorded.
func (c *firedCache) has(k firedKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.keys[k]
	return ok
}

// known tells, for each of keys, whether it is known recorded (one lock for all).
func (c *firedCache) known(keys []FiringKey) []bool {
	out := make([]bool, len(keys))
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.keys) == 0 {
		return out
	}
	for i, k := range keys {
		_, out[i] = c.keys[firedKeyOf(k)]
	}
	return out
}

// add records that keys are recorded (committed).
func (c *firedCache) add(keys []firedKey) {
	if len(keys) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil || len(c.keys)+len(keys) > maxFiredKeys {
		c.keys = make(map[firedKey]struct{}, len(keys))
	}
	for _, k := range keys {
		c.keys[k] = struct{}{}
	}
}
