package meterbench

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// cpuMeter reads, from /proc, the CPU time used by this process (client, API and
// consumer together) and by the PostgreSQL backends serving the benchmark's database.
// On two shared cores CPU time is a steadier figure than wall time: it does not count
// the time spent waiting for a core. Backends are listed at every sample, since
// database/sql may close and open connections; a backend that ends between two samples
// loses what it used since the earlier one. PostgreSQL's background processes (WAL
// writer, checkpointer, autovacuum) serve every database of the server and are left out.
type cpuMeter struct {
	pool  *pgxpool.Pool
	self0 time.Duration
	base  map[int]time.Duration // each backend's CPU when first seen (0 if born after the start)
	last  map[int]time.Duration
	first bool
}

func newCPUMeter(pool *pgxpool.Pool) *cpuMeter {
	m := &cpuMeter{pool: pool, base: map[int]time.Duration{}, last: map[int]time.Duration{}, first: true}
	m.self0, _ = procCPU("self")
	m.sample()
	m.first = false
	return m
}

// sample reads the CPU time of every backend of the database now.
func (m *cpuMeter) sample() {
	rows, err := m.pool.Query(context.Background(), `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`)
	if err != nil {
		return
	}
	var pids []int
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			pids = append(pids, pid)
		}
	}
	rows.Close()
	for _, pid := range pids {
		t, ok := procCPU(strconv.Itoa(pid))
		if !ok {
			continue
		}
		if _, seen := m.base[pid]; !seen {
			m.base[pid] = 0
			if m.first {
				m.base[pid] = t
			}
		}
		m.last[pid] = t
	}
}

// used is the CPU time used since the meter was made, by the process and by the backends.
func (m *cpuMeter) used() (self, pg time.Duration) {
	m.sample()
	s, _ := procCPU("self")
	for pid, t := range m.last {
		pg += t - m.base[pid]
	}
	return s - m.self0, pg
}

// procCPU is utime+stime of /proc/<pid>/stat, in clock ticks of 10 ms (USER_HZ is 100 on
// Linux).
func procCPU(pid string) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // the name may hold spaces
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	k, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+k) * 10 * time.Millisecond, true
}
