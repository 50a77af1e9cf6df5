package dashboard

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// fifoGate is the hash gate this release replaced, kept here as the baseline: one
// process-wide semaphore, served first come first served (a Go channel's waiters).
type fifoGate chan struct{}

func (g fifoGate) enter(ctx context.Context, wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case g <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// BenchmarkOwnerBehindHammer (issue 41 finding 7) measures how long the owner's login
// waits for a password hash slot while 64 logins hammer the gate — 32 at once from one
// client and one from each of 32 others — each running a real bcrypt comparison: with the
// fair gate (the owner's known browser), with the FIFO gate it replaced, and the owner
// alone. The baseline, measured in the same run, is one bcrypt comparison: the fair gate
// should keep the owner's wait near one hash (a slot freed by whoever holds it), whatever
// the hammer. Figures: the median and worst wait of 20 owner logins, the ratio of the
// median to the baseline, and how many the 3 s wait refused.
func BenchmarkOwnerBehindHammer(b *testing.B) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.DefaultCost)
	if err != nil {
		b.Fatal(err)
	}
	work := func() { _ = bcrypt.CompareHashAndPassword(hash, []byte("guess")) }
	slots := defaultHashSlots()
	owner := gateSeat{share: "device:owner", trusted: true}
	for b.Loop() {
		fair := func(hammer bool) ownerWaits {
			g := newHashGate(slots, hashWait)
			return measureOwner(hammer, func(s gateSeat) bool { return g.enter(context.Background(), s) },
				g.leave, owner, work)
		}
		fifo := func(hammer bool) ownerWaits {
			g := make(fifoGate, slots)
			return measureOwner(hammer, func(gateSeat) bool { return g.enter(context.Background(), hashWait) },
				func(gateSeat) { <-g }, owner, work)
		}
		var hashes ownerWaits
		for range 20 {
			began := time.Now()
			work()
			hashes.waits = append(hashes.waits, time.Since(began))
		}
		alone, fairHammered, fifoHammered := fair(false), fair(true), fifo(true)
		b.Logf("hash slots %d; one bcrypt comparison (baseline): median %v", slots, hashes.median())
		b.Logf("owner's wait for a slot over 20 logins (median / worst, refused):")
		b.Logf("  alone:                       %v / %v", alone.median(), alone.worst())
		for _, r := range []struct {
			name string
			w    ownerWaits
		}{{"fair gate, 64 hammering:", fairHammered}, {"FIFO gate, 64 hammering:", fifoHammered}} {
			b.Logf("  %-28s %v / %v, %d refused; median %.1f× the baseline", r.name, r.w.median(), r.w.worst(), r.w.refused,
				float64(r.w.median())/float64(hashes.median()))
		}
		b.ReportMetric(float64(fairHammered.median().Microseconds())/1000, "fair-owner-wait-ms")
		b.ReportMetric(float64(fifoHammered.median().Microseconds())/1000, "fifo-owner-wait-ms")
	}
}

type ownerWaits struct {
	waits   []time.Duration
	refused int
}

func (w ownerWaits) median() time.Duration {
	s := slices.Clone(w.waits)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func (w ownerWaits) worst() time.Duration {
	if len(w.waits) == 0 {
		return 0
	}
	return slices.Max(w.waits)
}

// measureOwner runs 20 owner logins one after another through enter/leave, with the
// hammer going on meanwhile when hammer is set, and returns the owner's waits for a slot.
func measureOwner(hammer bool, enter func(gateSeat) bool, leave func(gateSeat), owner gateSeat, work func()) ownerWaits {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if hammer {
		var seats []gateSeat
		for i := range 32 {
			seats = append(seats, gateSeat{share: "ip:2001:db8:66::/48"}, gateSeat{share: fmt.Sprintf("ip:198.51.100.%d", i)})
		}
		for _, s := range seats {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if enter(s) {
						work()
						leave(s)
					}
				}
			})
		}
		time.Sleep(200 * time.Millisecond) // the hammer's logins queue up first
	}
	var out ownerWaits
	for range 20 {
		began := time.Now()
		if !enter(owner) {
			out.refused++
			continue
		}
		out.waits = append(out.waits, time.Since(began))
		work()
		leave(owner)
	}
	close(stop)
	wg.Wait()
	return out
}
