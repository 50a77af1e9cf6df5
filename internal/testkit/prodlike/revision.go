package prodlike

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// BuildRevopsAt builds ./cmd/revops as it is at commit rev of the repository at root, for
// measurements that compare commits in one sitting. The binary is cached by full commit
// hash under cacheDir/<hash>/revops, so a rerun does not build again. The commit's tree is
// exported with git archive (no worktree is registered in the repository) and built there;
// only the main module's packages compile again, its dependencies come from the Go build
// cache. It returns the binary, the full hash, and what it did ("cached" or the build's
// duration).
func BuildRevopsAt(ctx context.Context, root, rev, cacheDir string) (bin, hash, did string, err error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--verify", rev+"^{commit}").CombinedOutput()
	if err != nil {
		return "", "", "", fmt.Errorf("git rev-parse %s: %w\n%s", rev, err, out)
	}
	hash = strings.TrimSpace(string(out))
	dir := filepath.Join(cacheDir, hash)
	bin = filepath.Join(dir, "revops")
	if _, err := os.Stat(bin); err == nil {
		return bin, hash, "cached", nil
	}
	src := filepath.Join(dir, fmt.Sprintf("src.%d", os.Getpid()))
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", "", "", err
	}
	defer os.RemoveAll(src)
	began := time.Now()
	export := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", root, hash, src)
	if out, err := export.CombinedOutput(); err != nil {
		return "", "", "", fmt.Errorf("export %s: %w\n%s", hash, err, out)
	}
	if _, err := goBuild(ctx, src, bin, "./cmd/revops"); err != nil {
		return "", "", "", err
	}
	return bin, hash, "built in " + time.Since(began).Round(time.Second).String(), nil
}

// BuildRevops builds ./cmd/revops of the working tree at root (uncommitted changes
// included) into dir.
func BuildRevops(ctx context.Context, root, dir string) (bin, did string, err error) {
	bin = filepath.Join(dir, "revops")
	took, err := goBuild(ctx, root, bin, "./cmd/revops")
	return bin, "built in " + took.String(), err
}
