package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/revops/revops"

// pkg is what `go list -json` says of one package of the module.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// listed is the module's packages, listed once for all the tests of a run.
var listed struct {
	once sync.Once
	pkgs map[string]*pkg
	err  error
}

// modulePackages lists the module's packages (clients/ is a module of its own).
func modulePackages(t *testing.T) map[string]*pkg {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root := moduleRoot(t)
	listed.once.Do(func() { listed.pkgs, listed.err = goList(goBin, root) })
	if listed.err != nil {
		t.Fatal(listed.err)
	}
	return listed.pkgs
}

// goList is `go list -json ./...` in root, by import path.
func goList(goBin, root string) (map[string]*pkg, error) {
	cmd := exec.Command(goBin, "list", "-json", "./...")
	cmd.Dir = root
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]*pkg{}
	for dec := json.NewDecoder(&out); dec.More(); {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs[p.ImportPath] = &p
	}
	return pkgs, readInputs(root, pkgs)
}

// readInputs reads what `go list` read for the graph — every package's Go files, and the
// folders from the root down to each package — so that go test's cache, which sees only
// what the test process opens, runs the tests again when an import, a package or a
// folder changes.
func readInputs(root string, pkgs map[string]*pkg) error {
	dirs := map[string]bool{}
	for _, p := range pkgs {
		for _, name := range p.GoFiles {
			if _, err := os.ReadFile(filepath.Join(p.Dir, name)); err != nil {
				return err
			}
		}
		for dir := p.Dir; !dirs[dir] && strings.HasPrefix(dir, root); dir = filepath.Dir(dir) {
			dirs[dir] = true
			if _, err := os.ReadDir(dir); err != nil {
				return err
			}
		}
	}
	return nil
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// rel is a module package's path without the module's.
func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

// edge is an import, importer first, both relative to the module.
type edge struct{ from, to string }

// paths finds, for the package from, a chain of imports to each package of targets it
// depends on (production imports only, as `go list -deps` counts them), skipping the
// edges in skip.
func paths(pkgs map[string]*pkg, from string, targets []string, skip map[edge]bool) map[string][]string {
	found := map[string][]string{}
	via := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		p := pkgs[module+"/"+cur]
		if p == nil {
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			next := rel(imp)
			if _, seen := via[next]; seen || skip[edge{cur, next}] {
				continue
			}
			via[next] = cur
			queue = append(queue, next)
			if slices.Contains(targets, next) {
				var chain []string
				for at := next; at != ""; at = via[at] {
					chain = append([]string{at}, chain...)
				}
				found[next] = chain
			}
		}
	}
	return found
}

// TestAPIImportsNoWorkerPackage: the HTTP edge stands on the domain, never on the
// worker's packages (issue 42: api declares the small interfaces it needs).
func TestAPIImportsNoWorkerPackage(t *testing.T) {
	pkgs := modulePackages(t)
	worker := []string{"internal/dispatch", "workflows", "activities"}
	for path := range pkgs {
		if p := rel(path); p == "api" || strings.HasPrefix(p, "api/") {
			for target, chain := range paths(pkgs, p, worker, nil) {
				t.Errorf("%s imports %s: %s", p, target, strings.Join(chain, " → "))
			}
		}
	}
}

// TestStoreImportsNoFanOut: the store stores what it is given; who receives an event is
// decided by the webhook domain (issue 42, point 1).
func TestStoreImportsNoFanOut(t *testing.T) {
	pkgs := modulePackages(t)
	for target, chain := range paths(pkgs, "internal/store", []string{"internal/platform/webhookfilter", "internal/platform/catalog"}, nil) {
		t.Errorf("internal/store imports %s: %s", target, strings.Join(chain, " → "))
	}
}

// TestWireImportsOnlyModels: the names and inputs starters and workers share sit on
// models alone, so that importing them brings no workflow code.
func TestWireImportsOnlyModels(t *testing.T) {
	pkgs := modulePackages(t)
	p := pkgs[module+"/workflows/wire"]
	if p == nil {
		t.Fatal("workflows/wire is not in the module")
	}
	for _, imp := range p.Imports {
		if strings.HasPrefix(imp, module+"/") && imp != module+"/models" {
			t.Errorf("workflows/wire imports %s", rel(imp))
		}
	}
}

// domainEdges are the imports from one domain package to another, each with its reason.
// Every domain may import idempotency (the reply a write keeps, CONTRACT §14), and a
// package's test helper (meterstest) its package.
var domainEdges = map[edge]string{
	{"internal/domain/deals", "internal/domain/accounts"}:           "a deal's customer is an account: locked, activated and emitted by its rules (§7)",
	{"internal/domain/replay", "internal/domain/events"}:            "a replay answers with the event object (§9)",
	{"internal/domain/replay", "internal/domain/webhook"}:           "a replay requeues deliveries: their status changes and new deliveries are the webhook domain's (§13)",
	{"internal/domain/webhook/webhooktest", "internal/domain/orgs"}: "the test kit seeds an organization as sign-up does",
	{"internal/domain/meters", "internal/domain/usage"}:             "meters count usage rows: usage's identifier rule and metadata reader (§18)",
	{"internal/domain/meters/meterstest", "internal/domain/usage"}:  "the test kit feeds the meters usage batches as POST /v1/usage/events stores them",
}

// foundationNames are names that would mean a domain borrows time windows or decimals
// from another: those live in internal/platform/period and internal/platform/decimal.
var foundationNames = regexp.MustCompile(`(?i)decimal|canonical|parsestored|significant|period|window|resolution|^(minute|hour|day|week|month)$`)

// TestDomainsBorrowNoFoundation: no domain package imports another but for the reasons
// in domainEdges, and none uses from another a time window or a decimal (issue 42).
func TestDomainsBorrowNoFoundation(t *testing.T) {
	pkgs := modulePackages(t)
	const domain = "internal/domain/"
	for path, p := range pkgs {
		from := rel(path)
		if !strings.HasPrefix(from, domain) {
			continue
		}
		for _, imp := range p.Imports {
			to := rel(imp)
			if !strings.HasPrefix(imp, module+"/") || !strings.HasPrefix(to, domain) ||
				to == domain+"idempotency" || strings.HasPrefix(from, to+"/") {
				continue
			}
			if _, ok := domainEdges[edge{from, to}]; !ok {
				t.Errorf("%s imports %s, which domainEdges does not give a reason for", from, to)
			}
			for _, name := range namesUsed(t, p, imp) {
				if foundationNames.MatchString(name) {
					t.Errorf("%s uses %s.%s: time windows and decimals come from internal/platform", from, filepath.Base(to), name)
				}
			}
		}
	}
}
