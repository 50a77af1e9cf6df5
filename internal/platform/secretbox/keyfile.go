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
	if kr == nil {
		// A start killed while writing it: reading it as "no keys" would run without any.
		return nil, fmt.Errorf("%s holds no key: remove it (a new key is made at the next `revops dev`; secrets sealed under the lost key cannot be read)", path)
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
	// Written whole under a temporary name, then linked into place: the file is never
	// seen empty, and of two processes starting at once one key stays (the loser's link
	// fails, and it reads the winner's).
	f, err := os.CreateTemp(filepath.Dir(path), "."+FileName+".*")
	if err != nil {
		return nil, fmt.Errorf("create encryption key file: %w", err)
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
	_, err = f.WriteString(Generate() + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write encryption key file: %w", err)
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create encryption key file: %w", err)
	}
	return LoadFile(path)
}
