package secretbox

// Test-only helpers, compiled into this package's tests alone.

import "strings"

// SealedWith is the id of the key a sealed value names ("", false: not sealed).
func SealedWith(v string) (string, bool) {
	if !IsSealed(v) {
		return "", false
	}
	id, _, ok := strings.Cut(v[len(Prefix):], ":")
	return id, ok
}
