package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/secretbox"
)

// REVOPS_ENCRYPTION_KEYS is read into a keyring; neither an invalid list's error nor a
// printed Config shows a key (CONTRACT §25).
func TestEncryptionKeys(t *testing.T) {
	key := secretbox.Generate()
	t.Setenv(EncryptionKeysEnv, key)
	c, err := load(t, "api")
	if err != nil {
		t.Fatal(err)
	}
	if c.Keyring == nil || len(c.Keyring.IDs()) != 1 {
		t.Fatalf("keyring = %v", c.Keyring.IDs())
	}
	if printed := fmt.Sprintf("%+v %#v", c, c); strings.Contains(printed, key) {
		t.Error("a printed Config shows the key")
	}
	bad := key[:20]
	t.Setenv(EncryptionKeysEnv, key+","+bad)
	_, err = load(t, "api")
	if err == nil || !strings.Contains(err.Error(), EncryptionKeysEnv) || strings.Contains(err.Error(), bad) {
		t.Errorf("invalid list: %v", err)
	}
	t.Setenv(EncryptionKeysEnv, "")
	if c, err := load(t, "api"); err != nil || c.Keyring != nil {
		t.Errorf("unset: %v, %v", c.Keyring, err)
	}
}
