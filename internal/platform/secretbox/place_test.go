package secretbox

import (
	"strings"
	"testing"
)

// CONTRACT §25: a value sealed in the bound form opens at its own place only; moved to
// another row, column or table it is refused, and the error shows neither the value nor
// the key. The unbound form of the release before opens anywhere, as it did.
func TestBoundValueOpensAtItsPlaceOnly(t *testing.T) {
	key := Generate()
	kr, err := Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := kr.Seal("whsec_tenantB", here)
	if err != nil {
		t.Fatal(err)
	}
	if !IsBound(sealed) || !strings.HasPrefix(sealed, Prefix+kr.Current()+":"+BoundMark) || strings.Contains(sealed, "tenantB") {
		t.Fatalf("sealed = %q", sealed)
	}
	if got, err := kr.Open(sealed, here); err != nil || got != "whsec_tenantB" {
		t.Fatalf("open at its place = %q, %v", got, err)
	}
	for _, elsewhere := range []Place{
		{Table: here.Table, Column: here.Column, Row: "ep_2"},
		{Table: here.Table, Column: "previous_secret", Row: here.Row},
		{Table: "other_table", Column: here.Column, Row: here.Row},
		// Parts are delimited: moving text from one part to the next is another place.
		{Table: here.Table, Column: "secre", Row: "t" + here.Row},
	} {
		got, err := kr.Open(sealed, elsewhere)
		if err == nil || got != "" {
			t.Fatalf("opened at %s: %q", elsewhere, got)
		}
		if msg := err.Error(); !strings.Contains(msg, "another row or column") || strings.Contains(msg, "tenantB") ||
			strings.Contains(msg, sealed[len(Prefix)+IDLen+1+len(BoundMark):]) || strings.Contains(msg, key) {
			t.Errorf("refusal at %s: %v", elsewhere, err)
		}
	}
	if _, err := kr.Open(sealed, Place{Table: here.Table, Column: here.Column}); err == nil || !strings.Contains(err.Error(), "row id") {
		t.Errorf("opened without its row's id: %v", err)
	}
	if _, err := kr.Seal("x", Place{Table: here.Table, Column: here.Column}); err == nil {
		t.Error("sealed without a row id")
	}

	unbound, err := kr.SealUnbound("whsec_old")
	if err != nil || IsBound(unbound) || !strings.HasPrefix(unbound, Prefix+kr.Current()+":") {
		t.Fatalf("unbound = %q, %v", unbound, err)
	}
	for _, anywhere := range []Place{here, {Table: "x", Column: "y", Row: "z"}, {}} {
		if got, err := kr.Open(unbound, anywhere); err != nil || got != "whsec_old" {
			t.Errorf("unbound value at %s = %q, %v", anywhere, got, err)
		}
	}
	if IsBound("whsec_clear") || IsBound("") {
		t.Error("a clear value is bound")
	}
}
