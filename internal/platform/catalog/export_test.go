package catalog

// Limits exposes the field limits the schemas copy, for catalog_test to compare with the
// input rules of internal/domain/accounts and internal/domain/deals (which catalog must not import:
// the store, which imports them, will use the catalog).
var Limits = map[string]int{
	"text": maxTextLen, "url": maxURLLen, "items": maxItems, "description": maxDescriptionLen,
	"properties": maxProperties, "property key": maxPropertyKeyLen, "property value": maxPropertyValLen,
}
