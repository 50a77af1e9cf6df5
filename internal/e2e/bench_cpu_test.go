package e2e

import (
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuSample is the CPU time used so far by this process (the API, the embedded
// Temporal server and worker, the receivers and the benchmark's clients: the same for
// every kind of phase) and by the PostgreSQL backends connected to the rig's database
// (not the server's shared background processes, nor other databases' backends, which
// come and go), and the machine's busy and total time, all read from the kernel. A phase's difference tells where a change's
// CPU goes, including PostgreSQL's share, which a Go profile cannot see.
type cpuSample struct {
	proc, pg, busy, total time.Duration
}

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

func cpuNow(database string) cpuSample {
	var s cpuSample
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.proc = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue // the process ended meanwhile
		}
		// pid (comm) state … utime stime: fields 14 and 15, counted after the comm.
		line := string(raw)
		open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
		if open < 0 || end < open || line[open+1:end] != "postgres" {
			continue
		}
		// A backend's title: "postgres: <user> <database> <client> <state>".
		title, err := os.ReadFile(filepath.Join(filepath.Dir(f), "cmdline"))
		if err != nil || !strings.Contains(string(title), " "+database+" ") {
			continue
		}
		fields := strings.Fields(line[end+1:])
		if len(fields) < 13 {
			continue
		}
		ut, _ := strconv.ParseInt(fields[11], 10, 64)
		st, _ := strconv.ParseInt(fields[12], 10, 64)
		s.pg += time.Duration(ut+st) * clockTick
	}
	if raw, err := os.ReadFile("/proc/stat"); err == nil {
		// cpu user nice system idle iowait irq softirq steal …
		line, _, _ := strings.Cut(string(raw), "\n")
		for i, f := range strings.Fields(line)[1:] {
			v, _ := strconv.ParseInt(f, 10, 64)
			s.total += time.Duration(v) * clockTick
			if i != 3 && i != 4 { // idle, iowait
				s.busy += time.Duration(v) * clockTick
			}
		}
	}
	return s
}

func (s cpuSample) sub(o cpuSample) cpuSample {
	return cpuSample{proc: s.proc - o.proc, pg: s.pg - o.pg, busy: s.busy - o.busy, total: s.total - o.total}
}

func (s cpuSample) add(o cpuSample) cpuSample {
	return cpuSample{proc: s.proc + o.proc, pg: s.pg + o.pg, busy: s.busy + o.busy, total: s.total + o.total}
}

// perChange is the CPU milliseconds per change of this process and of PostgreSQL, and
// the share of the machine's CPU time that was busy (any process).
func (s cpuSample) perChange(n int) (proc, pg, busyPct float64) {
	if n == 0 || s.total == 0 {
		return 0, 0, 0
	}
	return ms(s.proc) / float64(n), ms(s.pg) / float64(n), 100 * float64(s.busy) / float64(s.total)
}

// profilePhase writes a CPU profile of one phase to $REVOPS_BENCH_PROFILE_DIR/<phase>.cpu
// when that is set (without -cpuprofile: one profile at a time), so that ours and its
// floors can be compared function by function; it returns the stop.
func profilePhase(b *testing.B, phase string) func() {
	dir := os.Getenv("REVOPS_BENCH_PROFILE_DIR")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, phase+".cpu"))
	if err != nil {
		b.Fatalf("profile %s: %v", phase, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatalf("profile %s: %v", phase, err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
