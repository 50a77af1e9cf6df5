package prodlike

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

// toolsModule is the small module that builds the Temporal server and temporal-sql-tool:
// the main module does not carry their command-line dependencies. It requires every
// module the binaries share with the main module at the main module's version
// (scripts/prodlike/temporal/align), so their packages come from the build cache.
const toolsModule = "scripts/prodlike/temporal"

// Binaries are the programs a stack runs.
type Binaries struct {
	TemporalServer string   // go.temporal.io/server/cmd/server
	SQLTool        string   // go.temporal.io/server/cmd/tools/sql (temporal-sql-tool)
	Revops         string   // ./cmd/revops
	ServerVersion  string   // the go.temporal.io/server version both Temporal binaries come from
	Built          []string // what this call built, with how long each took
}

// RepoRoot is the directory of the main module's go.mod, found from the working
// directory up (tests run in their package's directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module github.com/revops/revops\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of github.com/revops/revops above the working directory")
		}
		dir = parent
	}
}

var serverRequire = regexp.MustCompile(`(?m)^\s*(?:require\s+)?go\.temporal\.io/server\s+(v\S+)`)

// ServerVersions reads the go.temporal.io/server version the main module pins and the
// one the tools module builds; they must be the same release.
func ServerVersions(root string) (main, tools string, err error) {
	read := func(path string) (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		m := serverRequire.FindSubmatch(b)
		if m == nil {
			return "", fmt.Errorf("%s does not require go.temporal.io/server", path)
		}
		return string(m[1]), nil
	}
	if main, err = read(filepath.Join(root, "go.mod")); err != nil {
		return "", "", err
	}
	if tools, err = read(filepath.Join(root, toolsModule, "go.mod")); err != nil {
		return "", "", err
	}
	return main, tools, nil
}

// Build builds what a stack runs: the two Temporal binaries once per server version
// (cached under <root>/.revops/prodlike-bin/<version>, which git ignores: linking the
// server takes a minute on two busy cores), and revops into dir every time (the Go build
// cache makes that a cached link). None is built with -race: the test binary has it, the spawned processes
// are what is under test, not the detector's 5-10× slowdown.
func Build(ctx context.Context, root, dir string) (Binaries, error) {
	return build(ctx, root, dir, "")
}

// build is Build with revops given (not built) when revops is not empty.
func build(ctx context.Context, root, dir, revops string) (Binaries, error) {
	mainV, toolsV, err := ServerVersions(root)
	if err != nil {
		return Binaries{}, err
	}
	if mainV != toolsV {
		return Binaries{}, fmt.Errorf("go.mod pins go.temporal.io/server %s but %s/go.mod builds %s: run `go get -tool go.temporal.io/server/cmd/server@%s go.temporal.io/server/cmd/tools/sql@%s` there",
			mainV, toolsModule, toolsV, mainV, mainV)
	}
	cache := filepath.Join(root, ".revops", "prodlike-bin", mainV)
	if d := os.Getenv("REVOPS_PRODLIKE_BIN_CACHE"); d != "" {
		cache = filepath.Join(d, mainV)
	}
	b := Binaries{
		TemporalServer: filepath.Join(cache, "temporal-server"),
		SQLTool:        filepath.Join(cache, "temporal-sql-tool"),
		Revops:         filepath.Join(dir, "revops"),
		ServerVersion:  mainV,
	}
	tools := filepath.Join(root, toolsModule)
	for out, pkg := range map[string]string{
		b.SQLTool:        "go.temporal.io/server/cmd/tools/sql",
		b.TemporalServer: "go.temporal.io/server/cmd/server",
	} {
		if _, err := os.Stat(out); err == nil {
			continue
		}
		took, err := goBuild(ctx, tools, out, pkg)
		if err != nil {
			return Binaries{}, err
		}
		b.Built = append(b.Built, fmt.Sprintf("%s (cold, cached from now on) %s", filepath.Base(out), took))
	}
	if revops != "" {
		b.Revops = revops
		return b, nil
	}
	took, err := goBuild(ctx, root, b.Revops, "./cmd/revops")
	if err != nil {
		return Binaries{}, err
	}
	b.Built = append(b.Built, fmt.Sprintf("revops %s", took))
	return b, nil
}

// goBuild builds pkg in module dir modDir into out, through a temporary name so that a
// build killed half way never leaves a broken binary in the cache. No -trimpath: the
// compiled packages are then the ones `go test` already has in the build cache.
func goBuild(ctx context.Context, modDir, out, pkg string) (time.Duration, error) {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return 0, err
	}
	tmp := fmt.Sprintf("%s.tmp%d", out, os.Getpid())
	defer os.Remove(tmp)
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, pkg)
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // dies with a timed-out test
	if o, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build %s (in %s): %w\n%s", pkg, modDir, err, o)
	}
	return time.Since(start).Round(time.Second), os.Rename(tmp, out)
}
