package models

// Page asks for one page of a list, newest first (CONTRACT §9): the API fills it, the
// store reads it. It lives here, below the store, so that the API names it without the
// store (store.Page is an alias).
type Page struct {
	Limit         int    // 1..100
	StartingAfter string // id of the last object of the previous page
}
