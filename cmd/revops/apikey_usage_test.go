package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The usage text that -h or a mistyped flag prints never shows $REVOPS_API_KEY, a secret
// key: flag prints a flag's default, so the key is read after parsing instead.
func TestAPIKeyNotInUsage(t *testing.T) {
	const secret = "sk_test_do_not_print_me"
	t.Setenv("REVOPS_API_KEY", secret)
	for name, run := range map[string]func(context.Context, []string) error{"listen": runListen, "trigger": runTrigger} {
		f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		saved := os.Stderr
		os.Stderr = f
		err = run(context.Background(), []string{"--bogus"})
		os.Stderr = saved
		_ = f.Close()
		if err == nil {
			t.Errorf("%s: --bogus accepted", name)
		}
		out, _ := os.ReadFile(f.Name())
		if !strings.Contains(string(out), "-api-key") {
			t.Errorf("%s: no usage text printed:\n%s", name, out)
		}
		if strings.Contains(string(out), secret) {
			t.Errorf("%s: usage shows the key:\n%s", name, out)
		}
	}
}
