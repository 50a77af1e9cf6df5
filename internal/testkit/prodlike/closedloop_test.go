package prodlike_test

import (
	"context"
	"sync"
)

// closedLoop runs items 0..n-1 on conc closed-loop clients: each takes the next item as
// soon as it is done with one, and client i always acts as i. The first error stops every
// client (ctx, as item sees it, is cancelled) and is returned once all have stopped.
func closedLoop(ctx context.Context, conc, n int, item func(ctx context.Context, client, k int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		next     int
		firstErr error
		wg       sync.WaitGroup
	)
	for cl := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				mu.Unlock()
				if k >= n {
					return
				}
				if err := item(ctx, cl, k); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					next = n
					mu.Unlock()
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}
