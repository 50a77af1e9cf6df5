package prodlike_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revops/revops/internal/platform/localca"
	"github.com/revops/revops/internal/testkit/prodlike"
)

// The client libraries (CONTRACT §20) are tested as their users run them: each suite in
// its own toolchain (the Go module's `go test`, the TypeScript package's `npm test`, the
// Python package's `python -m unittest` in a new venv it was installed into) against a
// real `revops dev`, with its webhooks delivered over HTTPS to a receiver the suite
// serves; the README examples are extracted and run unchanged; and a program that
// requires only the Go client builds without the server's dependencies.
func TestClientsAgainstDev(t *testing.T) {
	prodlike.Require(t)
	root := repoRoot(t)
	// A low per-key rate limit lets the suites meet a real 429 with a small burst.
	dev := prodlike.StartDev(t, "REVOPS_RATE_LIMIT=20")
	env := append(receiverEnv(t, dev.DataDir), "REVOPS_BASE_URL="+dev.URL, "REVOPS_API_KEY="+dev.Key,
		"REVOPS_DATA_DIR="+dev.DataDir) // the TypeScript suite issues its receiver's certificate from dev's CA

	t.Run("go", func(t *testing.T) {
		noSkips(t, run(t, filepath.Join(root, "clients", "go"), env, "go", "test", "-race", "-count=1", "-v", "./..."))
	})
	t.Run("go README", func(t *testing.T) {
		mod := goProgram(t, root, firstBlock(t, filepath.Join(root, "clients", "go", "README.md"), "go"))
		run(t, mod, env, "go", "run", ".")
		mods := run(t, mod, nil, "go", "list", "-m", "all")
		if strings.Contains(mods, "go.temporal.io/server") || strings.Count(strings.TrimSpace(mods), "\n") != 1 {
			t.Errorf("a program requiring only the Go client needs more modules:\n%s", mods)
		}
	})
	t.Run("typescript", func(t *testing.T) {
		dir := filepath.Join(root, "clients", "typescript")
		if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
			t.Fatalf("clients/typescript has no node_modules: run `npm ci` there (./scripts/test does)")
		}
		noSkips(t, run(t, dir, env, "npm", "test"))
	})
	t.Run("python", func(t *testing.T) {
		testPythonClient(t, root, env)
	})
}

// testPythonClient does what clients/python/README.md tells a user: a new venv, the
// package installed from its folder with no package index (pip's isolated build needs
// none: the package names its own standard-library backend), then pyright in strict mode
// (pinned by package-lock.json) and the suite under `python -W error`, integration tests
// and the README's first example included.
func testPythonClient(t *testing.T, root string, env []string) {
	dir := filepath.Join(root, "clients", "python")
	pyright := filepath.Join(dir, "node_modules", ".bin", "pyright")
	if _, err := os.Stat(pyright); err != nil {
		t.Fatalf("clients/python has no pyright: run `npm ci` there (./scripts/test does)")
	}
	venv := filepath.Join(t.TempDir(), "venv")
	run(t, dir, nil, "python3", "-m", "venv", venv)
	python := filepath.Join(venv, "bin", "python")
	run(t, root, []string{"PIP_NO_INDEX=1", "PIP_DISABLE_PIP_VERSION_CHECK=1"}, python, "-m", "pip", "install", "./clients/python")
	if out := run(t, dir, nil, pyright); !strings.Contains(out, "0 errors, 0 warnings") {
		t.Errorf("pyright reports:\n%s", out)
	}
	out := run(t, dir, env, python, "-W", "error", "-m", "unittest", "-v")
	noSkips(t, out)
	// A warning raised where it cannot propagate (a ResourceWarning in a finalizer) is
	// printed, not failed: under -W error the suite must print none.
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "Exception ignored") || strings.Contains(line, "Warning:") {
			t.Errorf("the Python suite warned: %s", strings.TrimSpace(line))
		}
	}
}

// noSkips fails the test when a suite skipped any test: here every variable the
// integration tests ask for is set, so a skip would be a test that silently never ran.
func noSkips(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		// go test -v: "--- SKIP"; node --test, TAP: "# SKIP", "# skipped 2"; spec: "ℹ skipped 2";
		// python -m unittest -v: "... skipped 'why'", "OK (skipped=2)".
		if strings.Contains(line, "--- SKIP") || strings.Contains(line, "# SKIP") || regexp.MustCompile(`\bskipped [1-9]|\.\.\. skipped |\(skipped=`).MatchString(line) {
			t.Errorf("a client test was skipped: %s", strings.TrimSpace(line))
		}
	}
}

// The Go client against the production shape's HTTPS API: two api replicas behind their
// own CA (trusted through SSL_CERT_FILE, as a user's system roots would be) and two
// workers delivering to the suite's receiver.
func TestGoClientAgainstHTTPSStack(t *testing.T) {
	prodlike.Require(t)
	root := repoRoot(t)
	caDir := t.TempDir()
	recv := receiverEnv(t, caDir)
	s := prodlike.Start(t, prodlike.Options{RetryInterval: 2 * time.Second, Env: []string{
		"REVOPS_WEBHOOK_CA_FILE=" + localca.CertPath(caDir),
		"REVOPS_WEBHOOK_ALLOW_PRIVATE=true", // the suite's receiver is on loopback
		"REVOPS_RATE_LIMIT=20",
	}})
	key := secretKey(t, s)
	api := s.StartAPI("api-1")
	s.StartWorker("worker-1")
	env := append(recv, "REVOPS_BASE_URL="+api.URL, "REVOPS_API_KEY="+key, "SSL_CERT_FILE="+filepath.Join(s.Dir, "ca", "ca.pem"))
	noSkips(t, run(t, filepath.Join(root, "clients", "go"), env, "go", "test", "-count=1", "-v", "./..."))
	assertSecretsSealed(t, s, api.URL, key)
}

// assertSecretsSealed creates an endpoint and rotates its secret through the api process
// (the client suite deletes its own), with a custom header, each with an
// Idempotency-Key, then searches the tables that hold or once held signing secrets and
// header values, every row cast to text, for one in clear (CONTRACT §25).
func assertSecretsSealed(t *testing.T, s *prodlike.Stack, apiURL, key string) {
	t.Helper()
	ctx := context.Background()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: s.ClientTLS()}}
	post := func(path, body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, apiURL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", path+"-sealed")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: %d %v (%v)", path, resp.StatusCode, out, err)
		}
		return out
	}
	ep := post("/v1/webhook_endpoints", `{"url":"https://127.0.0.1:9/sealed","event_types":["account-created"],"headers":{"X-Api-Key":"prodlikehdr123"}}`)
	post("/v1/webhook_endpoints/"+ep["id"].(string)+"/rotate_secret", `{}`)
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var clear, sealed int
	if err := conn.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM webhook_endpoints t WHERE t::text ~ 'wh(sec|sk)_|prodlikehdr123')
		+ (SELECT count(*) FROM idempotency_keys t WHERE t::text ~ 'wh(sec|sk)_|prodlikehdr123'),
		(SELECT count(*) FROM webhook_endpoints WHERE secret LIKE 'enc:v1:%' AND headers LIKE 'enc:v1:%')`).Scan(&clear, &sealed); err != nil {
		t.Fatal(err)
	}
	if clear != 0 || sealed == 0 {
		t.Errorf("%d rows hold a secret in clear, %d endpoints a sealed one", clear, sealed)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := prodlike.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// receiverEnv issues a certificate for 127.0.0.1 from the local CA in dir (the one the
// server trusts for webhook TLS) and names its files for the suites' HTTPS receivers.
func receiverEnv(t *testing.T, dir string) []string {
	t.Helper()
	ca, err := localca.Ensure(dir)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	var chain []byte
	for _, der := range cert.Certificate {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	keyDER, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	crt, key := filepath.Join(out, "receiver.crt"), filepath.Join(out, "receiver.key")
	if err := os.WriteFile(crt, chain, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"REVOPS_TEST_RECEIVER_CERT=" + crt, "REVOPS_TEST_RECEIVER_KEY=" + key}
}

// run runs a command in dir with env added to this process's, and fails the test with
// its output when it fails; it returns the output.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	err := cmd.Run()
	if err != nil {
		t.Fatalf("%s %s in %s: %v after %s\n%s", name, strings.Join(args, " "), dir, err, since(began), out.String())
	}
	t.Logf("%s %s: passed in %s", name, strings.Join(args, " "), since(began))
	return out.String()
}

// firstBlock is the first fenced code block of a Markdown file in the language.
func firstBlock(t *testing.T, path, lang string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)\n```").FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no ```%s block", path, lang)
	}
	return string(m[1])
}

// goProgram writes src as the main package of a new module that requires only the Go
// client (replaced by its directory here, as a user's go get would fetch it).
func goProgram(t *testing.T, root, src string) string {
	t.Helper()
	dir := t.TempDir()
	gomod := "module example.com/try\n\ngo 1.24\n\nrequire github.com/revops/revops/clients/go v0.0.0\n\n" +
		"replace github.com/revops/revops/clients/go => " + filepath.Join(root, "clients", "go") + "\n"
	for name, body := range map[string]string{"go.mod": gomod, "main.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
