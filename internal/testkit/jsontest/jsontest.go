// Package jsontest builds values from JSON in tests the way the API's handlers do
// (encoding/json into the input type), so a rules test starts from what a client sends.
package jsontest

import (
	"encoding/json"
	"testing"
)

// Decode unmarshals body into a T, failing the test if it is not valid JSON for T.
func Decode[T any](t testing.TB, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}
