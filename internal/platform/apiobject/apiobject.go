// Package apiobject holds the small pieces the API objects of several domain packages
// share: the answer of a hard delete, and null for an unset string. Each domain package
// makes its own objects (meters.Object, webhook.EndpointObject…), so that a write can
// keep its answer in its own transaction (CONTRACT §14); what they have in common is here.
package apiobject

// Deleted is the answer of a hard delete (CONTRACT §13): the object is gone, so the
// answer is a stub saying so.
type Deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// DeletedOf is the stub of the object of type object and id id, deleted.
func DeletedOf(object, id string) Deleted {
	return Deleted{ID: id, Object: object, Deleted: true}
}

// NonEmpty is s, or null when s is "": an unset string member reads null.
func NonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
