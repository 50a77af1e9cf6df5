package e2e

import (
	"math"
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
// every kind of phase), by each PostgreSQL backend connected to the rig's database (not
// the server's shared background processes, nor other databases' backends), and the
// machine's busy and total time, all read from the kernel. A phase's difference tells
// where a change's CPU goes, including PostgreSQL's share, which a Go profile cannot see.
type cpuSample struct {
	proc        time.Duration
	backends    map[backend]time.Duration // CPU so far of each backend
	busy, total time.Duration
}

// backend identifies a process across samples: a pid may be reused.
type backend struct {
	pid   int
	start int64 // since boot, in clock ticks
}

// cpuUse is what a phase used.
type cpuUse struct {
	proc, pg, busy, total time.Duration
	// backends is how many of the rig's PostgreSQL backends lived through the phase;
	// 0 means PostgreSQL's share could not be seen (then pg is not a measurement).
	backends int
}

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

func cpuNow(database string) cpuSample {
	s := cpuSample{backends: map[backend]time.Duration{}}
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
		// pid (comm) state … utime(14) stime(15) … starttime(22), counted from 1.
		line := string(raw)
		open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
		if open < 0 || end < open || line[open+1:end] != "postgres" {
			continue
		}
		// A backend's title: "postgres: <cluster>: <user> <database> <client> <state>".
		title, err := os.ReadFile(filepath.Join(filepath.Dir(f), "cmdline"))
		if err != nil || !strings.Contains(string(title), " "+database+" ") {
			continue
		}
		fields := strings.Fields(line[end+1:]) // from field 3 (state) on
		if len(fields) < 20 {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(line[:open]))
		ut, _ := strconv.ParseInt(fields[11], 10, 64)
		st, _ := strconv.ParseInt(fields[12], 10, 64)
		start, _ := strconv.ParseInt(fields[19], 10, 64)
		s.backends[backend{pid, start}] = time.Duration(ut+st) * clockTick
	}
	if raw, err := os.ReadFile("/proc/stat"); err == nil {
		// cpu user nice system idle iowait irq softirq steal guest guest_nice: guest time
		// is already in user and nice; steal is time the hypervisor gave others, idle for us.
		line, _, _ := strings.Cut(string(raw), "\n")
		for i, f := range strings.Fields(line)[1:] {
			if i >= 8 {
				break
			}
			v, _ := strconv.ParseInt(f, 10, 64)
			s.total += time.Duration(v) * clockTick
			if i != 3 && i != 4 && i != 7 { // idle, iowait, steal
				s.busy += time.Duration(v) * clockTick
			}
		}
	}
	return s
}

// since is what was used from o to s. PostgreSQL's share counts the backends seen in
// both samples only: one that started or ended in between would add or remove its whole
// lifetime's CPU (the rig's pools keep theirs open, so this rarely leaves any out).
func (s cpuSample) since(o cpuSample) cpuUse {
	u := cpuUse{proc: s.proc - o.proc, busy: s.busy - o.busy, total: s.total - o.total}
	for b, now := range s.backends {
		if then, ok := o.backends[b]; ok {
			u.pg += now - then
			u.backends++
		}
	}
	return u
}

func (u cpuUse) add(o cpuUse) cpuUse {
	return cpuUse{proc: u.proc + o.proc, pg: u.pg + o.pg, busy: u.busy + o.busy, total: u.total + o.total,
		backends: min(u.backends, o.backends)}
}

// perChange is the CPU milliseconds per change of this process and of PostgreSQL (NaN
// when no backend could be seen), and the share of the machine's CPU time that was busy
// (any process).
func (u cpuUse) perChange(n int) (proc, pg, busyPct float64) {
	if n == 0 || u.total == 0 {
		return 0, 0, 0
	}
	pg = ms(u.pg) / float64(n)
	if u.backends == 0 {
		pg = math.NaN()
	}
	return ms(u.proc) / float64(n), pg, 100 * float64(u.busy) / float64(u.total)
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
