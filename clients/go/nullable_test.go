package revops

import (
	"encoding/json"
	"testing"
)

func TestNullableMarshalsThreeStates(t *testing.T) {
	type body struct {
		Unset Nullable[string]    `json:"unset,omitzero"`
		Null  Nullable[string]    `json:"null,omitzero"`
		Value Nullable[string]    `json:"value,omitzero"`
		Empty Nullable[string]    `json:"empty,omitzero"` // "" is a value, sent
		Zero  Nullable[int64]     `json:"zero,omitzero"`  // 0 too
		Enum  Nullable[Precision] `json:"enum,omitzero"`
		Plain Nullable[string]    `json:"plain"` // without omitzero, unset is null
	}
	b, err := json.Marshal(body{
		Null:  Null[string](),
		Value: Value("v"),
		Empty: Value(""),
		Zero:  Value[int64](0),
		Enum:  Value(Precision2),
	})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"null":null,"value":"v","empty":"","zero":0,"enum":"2","plain":null}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

func TestNullableUnmarshal(t *testing.T) {
	var got struct {
		Absent Nullable[string] `json:"absent"`
		Null   Nullable[string] `json:"null"`
		Value  Nullable[string] `json:"value"`
		Number Nullable[int64]  `json:"number"`
	}
	if err := json.Unmarshal([]byte(`{"null": null, "value": "v", "number": 7}`), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Absent.IsZero() || got.Absent.IsNull() {
		t.Errorf("absent: %+v", got.Absent)
	}
	if got.Null.IsZero() || !got.Null.IsNull() {
		t.Errorf("null: %+v", got.Null)
	}
	if _, ok := got.Null.Get(); ok {
		t.Error("null has a value")
	}
	if v, ok := got.Value.Get(); !ok || v != "v" || got.Value.IsNull() || got.Value.IsZero() {
		t.Errorf("value: %q %v", v, ok)
	}
	if v, ok := got.Number.Get(); !ok || v != 7 {
		t.Errorf("number: %d %v", v, ok)
	}
	if err := json.Unmarshal([]byte(`{"number": "seven"}`), &got); err == nil {
		t.Error("a string was read into a Nullable[int64]")
	}
	// A round trip keeps the three states.
	type update struct {
		A Nullable[string] `json:"a,omitzero"`
		B Nullable[string] `json:"b,omitzero"`
		C Nullable[string] `json:"c,omitzero"`
	}
	in := update{A: Null[string](), B: Value("example.com")}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out update
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("round trip of %s: %+v", b, out)
	}
}

// An endpoint's PATCH (CONTRACT §25) can leave headers alone, remove them all with
// "headers": null, or set and remove single ones; and remove the filter with null.
func TestEndpointUpdateHeadersAndFilter(t *testing.T) {
	for _, c := range []struct {
		in   EndpointUpdate
		want string
	}{
		{EndpointUpdate{}, `{}`},
		{EndpointUpdate{Headers: Null[EndpointHeadersInput]()}, `{"headers":null}`},
		{EndpointUpdate{Headers: Value(EndpointHeadersInput{"X-Api-Key": Ptr("k"), "X-Old": nil})}, `{"headers":{"X-Api-Key":"k","X-Old":null}}`},
		{EndpointUpdate{Filter: json.RawMessage(`null`)}, `{"filter":null}`},
	} {
		b, err := json.Marshal(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("got %s, want %s", b, c.want)
		}
	}
}
