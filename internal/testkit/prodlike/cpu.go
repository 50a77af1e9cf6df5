package prodlike

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procStat is what a measurement reads of /proc/<pid>/stat.
type procStat struct {
	ppid           int
	utime, stime   int64 // this process's, in clock ticks
	cutime, cstime int64 // its children's that it has waited for
	comm           string
}

func readStat(pid int) (procStat, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(string(raw))
}

// parseStat reads "pid (comm) state ppid … utime(14) stime(15) cutime(16) cstime(17) …"
// (fields counted from 1); comm may hold spaces and parentheses, hence the last ')'.
func parseStat(line string) (procStat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("unreadable stat line %q", line)
	}
	f := strings.Fields(line[end+1:]) // from field 3 (state) on
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("short stat line %q", line)
	}
	num := func(i int) int64 { v, _ := strconv.ParseInt(f[i-3], 10, 64); return v }
	return procStat{ppid: int(num(4)), utime: num(14), stime: num(15), cutime: num(16), cstime: num(17), comm: line[open+1 : end]}, nil
}

// ProcessCPU is the CPU time (user and system) process pid has used so far, with that
// of the children it has waited for.
func ProcessCPU(pid int) (time.Duration, error) {
	st, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return time.Duration(st.utime+st.stime+st.cutime+st.cstime) * clockTick, nil
}

// Pid is the postmaster's process id (the first line of postmaster.pid).
func (pg *Postgres) Pid() (int, error) {
	raw, err := os.ReadFile(filepath.Join(pg.dir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

// CPU is the CPU time the whole cluster has used so far: the postmaster's own, that of
// its children alive now (backends, background writer, checkpointer, WAL writer,
// autovacuum, …), and that of the children that have ended, which the kernel adds to the
// postmaster's cutime and cstime when it reaps them. The sum only grows as processes come
// and go, so the difference of two readings is what the cluster used in between, backends
// that lived only in between included.
func (pg *Postgres) CPU() (time.Duration, error) {
	pm, err := pg.Pid()
	if err != nil {
		return 0, err
	}
	// A child reaped while the children are read would be counted nowhere (or, the other
	// way round, twice): read again until the postmaster reaped nothing meanwhile.
	for try := 0; ; try++ {
		before, err := readStat(pm)
		if err != nil {
			return 0, fmt.Errorf("postmaster %d: %w", pm, err)
		}
		children := int64(0)
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, f := range stats {
			raw, err := os.ReadFile(f)
			if err != nil {
				continue // reaped meanwhile: seen below
			}
			st, err := parseStat(string(raw))
			if err != nil || st.ppid != pm {
				continue
			}
			children += st.utime + st.stime + st.cutime + st.cstime
		}
		after, err := readStat(pm)
		if err != nil {
			return 0, fmt.Errorf("postmaster %d: %w", pm, err)
		}
		if after.cutime+after.cstime == before.cutime+before.cstime || try == 9 {
			return time.Duration(after.utime+after.stime+after.cutime+after.cstime+children) * clockTick, nil
		}
	}
}
