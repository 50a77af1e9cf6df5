package wire

import (
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
)

// Every attribute the runs set is registered, with its type, by temporal-setup: the
// Keyword ones of §10 and the endpoints' KeywordList of §13.
func TestSearchAttributeTypesNameEveryAttribute(t *testing.T) {
	want := map[string]enumspb.IndexedValueType{AttrEndpointIDs: enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST}
	for _, n := range SearchAttributes {
		want[n] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	if len(SearchAttributeTypes) != len(want) {
		t.Errorf("SearchAttributeTypes has %d attributes, want %d", len(SearchAttributeTypes), len(want))
	}
	for n, typ := range want {
		if got, ok := SearchAttributeTypes[n]; !ok || got != typ {
			t.Errorf("search attribute %s registered as %v, want %v", n, got, typ)
		}
	}
}
