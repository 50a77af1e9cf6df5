package meters

// BackfillPageWithin is BackfillPage with pages within a budget, for tests that watch a
// backfill page by page or on small budgets.
var BackfillPageWithin = backfillPage
