// Package apikey creates and recognises Revops API keys:
// {pk|sk}_{live|sandbox}_ followed by 32 random base62 characters.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
)

const (
	randomLen = 32
	alphabet  = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// Key is a freshly generated key. Plain is shown once and never stored.
type Key struct {
	Plain  string
	Prefix string // "sk_live_"
	Last4  string
	Hash   string
	Type   string // "public" or "secret"
	Env    string // "live" or "sandbox"
}

// Generate makes a new key of the given type ("public"|"secret") and environment ("live"|"sandbox").
func Generate(keyType, env string) (Key, error) {
	prefix, err := Prefix(keyType, env)
	if err != nil {
		return Key{}, err
	}
	var b strings.Builder
	b.WriteString(prefix)
	max := big.NewInt(int64(len(alphabet)))
	for range randomLen {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return Key{}, fmt.Errorf("generate api key: %w", err)
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	plain := b.String()
	return Key{Plain: plain, Prefix: prefix, Last4: plain[len(plain)-4:], Hash: Hash(plain), Type: keyType, Env: env}, nil
}

// Prefix returns the key prefix for a type and environment.
func Prefix(keyType, env string) (string, error) {
	var t string
	switch keyType {
	case "public":
		t = "pk"
	case "secret":
		t = "sk"
	default:
		return "", fmt.Errorf("key type %q: want public or secret", keyType)
	}
	if env != "live" && env != "sandbox" {
		return "", fmt.Errorf("environment %q: want live or sandbox", env)
	}
	return t + "_" + env + "_", nil
}

// prefixed names the first prefix of pairs (a prefix, then its name) that s starts with,
// and gives what follows it in s.
func prefixed(s string, pairs ...string) (name, rest string, ok bool) {
	for i := 0; i+1 < len(pairs); i += 2 {
		if rest, ok := strings.CutPrefix(s, pairs[i]); ok {
			return pairs[i+1], rest, true
		}
	}
	return "", "", false
}

// Parse checks the shape of a presented key and tells its type and environment.
// It does not say whether the key exists.
func Parse(s string) (keyType, env string, ok bool) {
	keyType, rest, ok := prefixed(s, "pk_", "public", "sk_", "secret")
	if !ok {
		return "", "", false
	}
	if env, rest, ok = prefixed(rest, "live_", "live", "sandbox_", "sandbox"); !ok {
		return "", "", false
	}
	if len(rest) != randomLen {
		return "", "", false
	}
	for i := 0; i < len(rest); i++ {
		if !strings.ContainsRune(alphabet, rune(rest[i])) {
			return "", "", false
		}
	}
	return keyType, env, true
}

// Hash is the stored form of a key.
func Hash(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// Mask renders a key for listings: prefix and last four characters.
func Mask(prefix, last4 string) string {
	return prefix + "…" + last4
}
