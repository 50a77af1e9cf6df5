package meters

import "time"

// BackfillPageWithin is BackfillPage with pages within a budget, for tests that watch a
// backfill page by page or on small budgets.
var BackfillPageWithin = backfillPage

// SetReadBudget lowers a values page's read budget for t (restored after it), so that
// tests page through little data as they would through 50,000 figures.
func SetReadBudget(t interface{ Cleanup(func()) }, n int) {
	old := readBudget
	readBudget = n
	t.Cleanup(func() { readBudget = old })
}

// GroupsText is the kept key of a group: the JSON array of its values in group_by order.
var GroupsText = groupsText

// SetClock has c set environments aside by now's clock instead of the wall clock's, so
// that a test moves past a backoff without waiting it out.
func (c *Consumer) SetClock(now func() time.Time) { c.now = now }
