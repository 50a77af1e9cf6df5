package secretbox

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Issue 41 finding 8: the dev key file opens every stored secret, so one that group or
// others may access is refused, the error naming the file and the chmod to run; the file
// dev writes is its owner's alone, and the refusal ends once it is.
func TestKeyFileModeChecked(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mode bits")
	}
	path := filepath.Join(t.TempDir(), FileName)
	if _, err := EnsureFile(path); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620, 0o666} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		for name, load := range map[string]func(string) (*Keyring, error){"LoadFile": LoadFile, "EnsureFile": EnsureFile} {
			kr, err := load(path)
			if err == nil || kr != nil {
				t.Fatalf("%s of a %04o key file = %v, %v; want a refusal", name, mode, kr, err)
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "chmod 600 "+path) {
				t.Errorf("%s of a %04o key file: %q; want the file named and the chmod to run", name, mode, msg)
			}
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o400} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if kr, err := LoadFile(path); err != nil || kr == nil {
			t.Errorf("a %04o key file: %v, %v", mode, kr, err)
		}
	}
}
