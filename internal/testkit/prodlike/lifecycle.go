package prodlike

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// A stack's life after Start: restarts of its servers under the Revops processes, its
// stop at the end of the test, and the reaping of clusters an earlier run left behind.

// RestartPostgres crashes the cluster (immediate stop: no checkpoint, recovery from the
// WAL at start, as after a kill) and starts it again; it returns the downtime.
func (s *Stack) RestartPostgres() (time.Duration, error) {
	began := time.Now()
	if err := s.PG.Stop("immediate"); err != nil {
		return 0, err
	}
	err := s.PG.Start()
	return time.Since(began), err
}

// RestartTemporal restarts the Temporal server; it returns the downtime.
func (s *Stack) RestartTemporal(ctx context.Context) (time.Duration, error) {
	began := time.Now()
	err := s.Temporal.Restart(ctx)
	return time.Since(began), err
}

// stop ends every process, Revops first, then Temporal, then PostgreSQL; on failure it
// logs the end of each log and keeps the directory (REVOPS_PRODLIKE_KEEP=1 keeps it always).
func (s *Stack) stop() {
	s.mu.Lock()
	procs := s.procs
	s.mu.Unlock()
	for _, p := range procs {
		p.Stop(10 * time.Second)
	}
	if s.Temporal != nil {
		s.Temporal.Stop()
	}
	if s.PG != nil {
		if err := s.PG.Stop("fast"); err != nil {
			s.t.Logf("prodlike: stop PostgreSQL: %v", err)
		}
	}
	if s.t.Failed() || os.Getenv("REVOPS_PRODLIKE_KEEP") != "" {
		for _, p := range procs {
			s.t.Logf("--- %s (%s):\n%s", p.Name, p.Log, p.Tail(25))
		}
		if s.Temporal != nil {
			s.t.Logf("--- temporal:\n%s", s.Temporal.Log(25))
		}
		if s.PG != nil {
			s.t.Logf("--- postgres:\n%s", s.PG.Log(15))
		}
		s.t.Logf("prodlike: logs kept in %s", s.Dir)
		_ = os.Remove(filepath.Join(s.Dir, "owner.pid")) // stopped: nothing to reap
		return
	}
	_ = os.RemoveAll(s.Dir)
}

// reapStale stops the PostgreSQL clusters of earlier runs whose test process is gone (a
// test binary killed by its timeout runs no cleanup; the other servers die with it, but
// pg_ctl's server is a daemon) and removes their directories.
func reapStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "revops-prodlike-*"))
	binDir, err := PostgresBinDir()
	if err != nil {
		return
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue // a kept directory (REVOPS_PRODLIKE_KEEP) or not ours
		}
		pid, _ := strconv.Atoi(string(b))
		if pid <= 0 || syscall.Kill(pid, 0) == nil {
			continue // its test still runs
		}
		cred, err := postgresUser()
		if err != nil {
			continue
		}
		pg := &Postgres{bin: binDir, dir: filepath.Join(d, "pgdata"), env: []string{"PATH=/usr/bin:/bin"}, cred: cred}
		_ = pg.Stop("immediate")
		_ = os.RemoveAll(d)
	}
}
