package revops

import "iter"

// listAll walks a list paged by starting_after: fetch is called with "" first (the
// caller's own starting_after, if any, applies), then with the id of each page's last
// item while the answer says has_more. It is pageAll with that id as the cursor.
func listAll[T any](fetch func(after string) ([]T, bool, error), id func(*T) string) iter.Seq2[*T, error] {
	return pageAll(func(after string) ([]T, string, error) {
		items, more, err := fetch(after)
		next := ""
		if more && len(items) > 0 {
			next = id(&items[len(items)-1])
		}
		return items, next, err
	})
}

// pageAll walks a list paged by an opaque cursor (meter values: page / next_page).
func pageAll[T any](fetch func(page string) ([]T, string, error)) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		page := ""
		for {
			items, next, err := fetch(page)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range items {
				if !yield(&items[i], nil) {
					return
				}
			}
			if next == "" || next == page {
				return
			}
			page = next
		}
	}
}

// failedSeq yields err once: an iterator called with bad arguments.
func failedSeq[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}
