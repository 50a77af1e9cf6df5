package secretbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FileName is the key file `revops dev` keeps in its data dir.
const FileName = "encryption.key"

// LoadFile reads a key file (a REVOPS_ENCRYPTION_KEYS list); a missing file is no
// keyring (nil, nil).
func LoadFile(path string) (*Keyring, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read encryption key file: %w", err)
	}
	kr, err := Parse(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return kr, nil
}

// EnsureFile loads the key file at path, first writing one with a new key (mode 0600)
// when there is none: the key `revops dev` keeps across restarts.
func EnsureFile(path string) (*Keyring, error) {
	kr, err := LoadFile(path)
	if err != nil || kr != nil {
		return kr, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	// O_EXCL: two processes starting at once keep one key (the loser reads the winner's).
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("create encryption key file: %w", err)
	}
	_, err = f.WriteString(Generate() + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("write encryption key file: %w", err)
	}
	return LoadFile(path)
}
