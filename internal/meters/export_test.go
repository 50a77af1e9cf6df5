package meters

// BackfillPageWithin is BackfillPage with pages of about maxRows rows, for tests that
// watch a backfill page by page.
var BackfillPageWithin = backfillPage
