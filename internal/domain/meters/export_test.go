package meters

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
