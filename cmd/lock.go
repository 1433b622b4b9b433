package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// gatewayLock holds $HERALD_HOME/gateway.lock for the life of a gateway:
// an exclusive flock (released by the kernel if the process dies) with the
// pid written inside for the message a second gateway prints.
type gatewayLock struct{ f *os.File }

func lockGateway(home string) (*gatewayLock, error) {
	p := filepath.Join(home, "gateway.lock")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(p)
		f.Close()
		pid := strings.TrimSpace(string(b))
		if pid == "" {
			pid = "unknown"
		}
		return nil, &exitError{code: 1, msg: fmt.Sprintf("a herald gateway is already running for %s (pid %s); stop it first or use another --home", home, pid)}
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &gatewayLock{f: f}, nil
}

func (l *gatewayLock) release() {
	l.f.Truncate(0)
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}

// runningGateway returns the pid of the gateway running for home, or 0.
func runningGateway(home string) int {
	p := filepath.Join(home, "gateway.lock")
	f, err := os.OpenFile(p, os.O_RDWR, 0o600)
	if err != nil {
		return 0
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return 0
	}
	b, _ := os.ReadFile(p)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 {
		pid = -1
	}
	return pid
}
