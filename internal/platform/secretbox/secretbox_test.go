package secretbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var here = Place{Table: "webhook_endpoints", Column: "secret", Row: "ep_1"}

func TestSealOpenRotate(t *testing.T) {
	oldKey, newKey := Generate(), Generate()
	old, err := Parse(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := old.Seal("whsec_abc", here)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sealed, Prefix+old.Current()+":") || strings.Contains(sealed, "whsec_") {
		t.Fatalf("sealed = %q", sealed)
	}
	both, err := Parse(newKey + ", " + oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if both.Current() == old.Current() {
		t.Fatal("the first key listed does not seal")
	}
	if got, err := both.Open(sealed, here); err != nil || got != "whsec_abc" {
		t.Fatalf("open under the old key = %q, %v", got, err)
	}
	resealed, _ := both.Seal("whsec_abc", here)
	if id, _ := SealedWith(resealed); id != both.Current() {
		t.Errorf("sealed with %s, want the first key %s", id, both.Current())
	}
	onlyNew, _ := Parse(newKey)
	_, err = onlyNew.Open(sealed, here)
	if err == nil || !strings.Contains(err.Error(), old.Current()) || strings.Contains(err.Error(), oldKey) || strings.Contains(err.Error(), newKey) {
		t.Errorf("open under a dropped key: %v", err)
	}
	if got, err := onlyNew.Open("whsec_clear", here); err != nil || got != "whsec_clear" {
		t.Errorf("clear value = %q, %v", got, err)
	}
	if s, err := onlyNew.Seal("", here); err != nil || s != "" {
		t.Errorf(`Seal("") = %q, %v`, s, err)
	}
	var none *Keyring
	if _, err := none.Seal("x", here); err == nil {
		t.Error("sealed without keys")
	}
	tampered := sealed[:len(sealed)-4] + "AAA="
	if _, err := old.Open(tampered, here); err == nil {
		t.Error("an altered value opened")
	}
}

func TestParseRefusesWithoutShowingKeys(t *testing.T) {
	short := "c2hvcnQ=" // "short"
	for _, list := range []string{"not base64!", short, Generate() + "," + short} {
		_, err := Parse(list)
		if err == nil {
			t.Errorf("Parse(%q) accepted", list)
			continue
		}
		if strings.Contains(err.Error(), list) || strings.Contains(err.Error(), short) {
			t.Errorf("error shows the key: %v", err)
		}
	}
	k := Generate()
	if _, err := Parse(k + "," + k); err == nil {
		t.Error("a key listed twice accepted")
	}
	if kr, err := Parse("  "); kr != nil || err != nil {
		t.Errorf("empty list = %v, %v", kr, err)
	}
}

func TestEnsureFileKeepsOneKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dev", FileName)
	first, err := EnsureFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", info.Mode().Perm())
	}
	again, err := EnsureFile(path)
	if err != nil || again.Current() != first.Current() {
		t.Errorf("second start: key %v (%v), want %s", again.IDs(), err, first.Current())
	}
}

// The cost a sealed column adds to each read and write of an endpoint.
func BenchmarkSealOpen(b *testing.B) {
	kr, err := Parse(Generate())
	if err != nil {
		b.Fatal(err)
	}
	secret := "whsec_" + strings.Repeat("k", 44)
	for b.Loop() {
		sealed, err := kr.Seal(secret, here)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := kr.Open(sealed, here); err != nil {
			b.Fatal(err)
		}
	}
}

// A key file that exists but holds no key (a start killed between creating and writing
// it) is an error saying so, never "no keyring": dev would otherwise run without a key
// and fail on every endpoint it writes.
func TestEmptyKeyFileIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, load := range map[string]func(string) (*Keyring, error){"LoadFile": LoadFile, "EnsureFile": EnsureFile} {
		if kr, err := load(path); err == nil || kr != nil {
			t.Errorf("%s of an empty key file = %v, %v; want an error", name, kr, err)
		}
	}
}

// A digest is keyed (the same data under another key differs, so a guess cannot be
// checked without a key) and still matches under a key kept in the list after a rotation;
// a plain value kept before digests were keyed matches only itself.
func TestDigest(t *testing.T) {
	oldKey, newKey := Generate(), Generate()
	old, _ := Parse(oldKey)
	both, _ := Parse(newKey + "," + oldKey)
	onlyNew, _ := Parse(newKey)
	const fp = "3f1c0a"
	d := old.Digest(fp)
	if !strings.HasPrefix(d, DigestPrefix+old.Current()+":") || strings.Contains(d, fp) {
		t.Fatalf("digest = %q", d)
	}
	if d == both.Digest(fp) || d == old.Digest("3f1c0b") {
		t.Fatal("digests under another key, or of other data, are equal")
	}
	for name, c := range map[string]struct {
		kr         *Keyring
		kept, data string
		want       bool
	}{
		"same key":               {old, d, fp, true},
		"other data":             {old, d, "3f1c0b", false},
		"old key still listed":   {both, d, fp, true},
		"old key dropped":        {onlyNew, d, fp, false},
		"no keyring":             {nil, d, fp, false},
		"plain kept, same":       {both, fp, fp, true},
		"plain kept, other":      {both, fp, "3f1c0b", false},
		"altered digest":         {old, d[:len(d)-1] + "0", fp, d[len(d)-1] == '0'},
		"unknown key id":         {old, DigestPrefix + "00000000:" + d[len(DigestPrefix)+IDLen+1:], fp, false},
		"no keyring, plain kept": {nil, fp, fp, true},
	} {
		if got := c.kr.DigestMatches(c.kept, c.data); got != c.want {
			t.Errorf("%s: DigestMatches = %v, want %v", name, got, c.want)
		}
	}
	var none *Keyring
	if none.Digest(fp) != fp {
		t.Error("without keys the digest is not the data itself")
	}
}
