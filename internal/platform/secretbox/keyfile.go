package secretbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// FileName is the key file `revops dev` keeps in its data dir.
const FileName = "encryption.key"

// LoadFile reads a key file (a REVOPS_ENCRYPTION_KEYS list); a missing file is no
// keyring (nil, nil). A file that group or others may access is refused (checkMode).
func LoadFile(path string) (*Keyring, error) {
	b, err := readPrivate(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
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

// readPrivate reads the file at path after checking, on the open file (so that the file
// checked is the file read), that only its owner may access it.
func readPrivate(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("read encryption key file: %w", err)
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read encryption key file: %w", err)
	}
	if err := checkMode(path, info.Mode()); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read encryption key file: %w", err)
	}
	return b, nil
}

// checkMode refuses a key file that group or others may read or write, as OpenSSH
// refuses such a private key: it opens every secret in the database (CONTRACT §25).
// Windows has no such mode bits; its ACLs are the user profile's.
func checkMode(path string, mode fs.FileMode) error {
	if runtime.GOOS == "windows" || mode.Perm()&0o077 == 0 {
		return nil
	}
	return fmt.Errorf("%s can be read or written by group or others (mode %04o): it holds the key to every secret stored in the database, so only its owner may have access; run `chmod 600 %s`",
		path, mode.Perm(), path)
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
