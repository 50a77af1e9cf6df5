package apikey

import (
	"strings"
	"testing"
)

func TestGenerateAndParse(t *testing.T) {
	for _, tc := range []struct{ typ, env, prefix string }{
		{"public", "live", "pk_live_"},
		{"secret", "live", "sk_live_"},
		{"public", "sandbox", "pk_sandbox_"},
		{"secret", "sandbox", "sk_sandbox_"},
	} {
		k, err := Generate(tc.typ, tc.env)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(k.Plain, tc.prefix) || len(k.Plain) != len(tc.prefix)+32 {
			t.Errorf("%s/%s: bad key %q", tc.typ, tc.env, k.Plain)
		}
		typ, env, ok := Parse(k.Plain)
		if !ok || typ != tc.typ || env != tc.env {
			t.Errorf("Parse(%q) = %q %q %v", k.Plain, typ, env, ok)
		}
		if k.Hash != Hash(k.Plain) || k.Hash == k.Plain || len(k.Hash) != 64 {
			t.Errorf("hash %q", k.Hash)
		}
		if k.Last4 != k.Plain[len(k.Plain)-4:] {
			t.Errorf("last4 %q", k.Last4)
		}
	}
	a, _ := Generate("secret", "live")
	b, _ := Generate("secret", "live")
	if a.Plain == b.Plain {
		t.Error("two keys are equal")
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{
		"", "sk_live_", "sk_test_0123456789abcdef0123456789abcdef",
		"xk_live_0123456789abcdef0123456789abcdef",
		"sk_live_0123456789abcdef0123456789abcde",   // 31
		"sk_live_0123456789abcdef0123456789abcdef0", // 33
		"sk_live_0123456789abcdef0123456789abcde!",
		"SK_live_0123456789abcdef0123456789abcdef",
	} {
		if _, _, ok := Parse(s); ok {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

func TestPrefixRejects(t *testing.T) {
	if _, err := Prefix("admin", "live"); err == nil {
		t.Error("type admin accepted")
	}
	if _, err := Prefix("secret", "prod"); err == nil {
		t.Error("env prod accepted")
	}
}
