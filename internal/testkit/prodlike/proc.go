package prodlike

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is one process of the stack, its output in a log file.
type Proc struct {
	Name string
	Log  string // path of its combined stdout and stderr

	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	err  error // from Wait, once done is closed
}

// startProc starts bin with args and exactly env (nothing inherited: a REVOPS_* of the
// test's own environment must not leak into the stack).
func startProc(name, logPath string, env []string, cred *syscall.Credential, bin string, args ...string) (*Proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group: a signal to the test's group (Ctrl-C) reaches only the test,
	// which then stops the stack in order. Pdeathsig: a test binary killed by its timeout
	// runs no cleanup, and must not leave servers behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{Name: name, Log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Exited tells whether the process has ended, and how.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.err
	default:
		return false, nil
	}
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Freeze stops the process (SIGSTOP) where it is: it answers nothing until Thaw or Kill.
func (p *Proc) Freeze() { _ = p.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw resumes a frozen process (SIGCONT).
func (p *Proc) Thaw() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }

// Stop sends SIGTERM and waits up to grace, then kills.
func (p *Proc) Stop(grace time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.Kill()
	}
}

// Tail is the end of the process's log.
func (p *Proc) Tail(lines int) string { return tailFile(p.Log, lines) }

func tailFile(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	all := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return string(bytes.Join(all, []byte("\n")))
}

// logHas tells whether the log holds s.
func (p *Proc) logHas(s string) bool {
	b, _ := os.ReadFile(p.Log)
	return strings.Contains(string(b), s)
}

// run runs a command to completion and returns its combined output.
func run(env []string, cred *syscall.Credential, dir, bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Dir = dir
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", bin, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
