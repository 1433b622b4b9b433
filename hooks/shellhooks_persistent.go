package hooks

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Persistent shell hooks: the command is started once and speaks one JSON
// line per request on stdin, one JSON line per answer on stdout. A request
// is the hook's usual payload with an "id" key added; the answer is the
// usual answer object with the same "id". An answer whose id is not the
// one awaited (a late answer to a request that timed out) is dropped.

// persistentBackoff bounds the wait before restarting a dead process.
var persistentBackoff = []time.Duration{0, 100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second, 5 * time.Second}

// Persistent runs one persistent shell hook: Concurrency processes, each
// serving one request at a time. A Call takes an idle one (starting its
// process if need be) and hands it back; Close stops them all.
type Persistent struct {
	spec   ShellSpec
	runner *ShellRunner
	log    *slog.Logger

	idle chan *persistentProc
	all  []*persistentProc
	wg   sync.WaitGroup // the stdout readers
	mu   sync.Mutex
	done bool
	stop chan struct{} // closed by Close: ends a restart backoff
}

// persistentProc is one process slot. The Call that took it from idle
// owns it (missed, seq, and starting or killing the process); mu guards
// what the stdout reader and Close also touch, and is never held across
// a spawn, a write or a wait.
type persistentProc struct {
	p      *Persistent
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  *os.File    // a pipe: writes take a deadline
	lines  chan []byte // stdout, one line each; closed when the process ends
	exits  int         // consecutive deaths, for the backoff
	next   time.Time   // not restarted before
	missed int         // consecutive timeouts (owned by the caller holding pp)
	seq    uint64      // request ids (owned by the caller holding pp)
}

// NewPersistent prepares a persistent hook with n processes (at least 1).
// Nothing is started before the first call.
func NewPersistent(r *ShellRunner, s ShellSpec, n int) *Persistent {
	if n < 1 {
		n = 1
	}
	p := &Persistent{spec: s, runner: r, log: r.log().With("hook", s.Command, "persistent", true), idle: make(chan *persistentProc, n), stop: make(chan struct{})}
	for i := 0; i < n; i++ {
		pp := &persistentProc{p: p}
		p.all = append(p.all, pp)
		p.idle <- pp
	}
	return p
}

// Call sends payload (already encoded for the spec's dialect) and waits
// for the matching answer line, at most the spec's timeout and never past
// ctx. A process that cannot take the whole request in time is killed at
// once (its input would be a torn line); one that misses two answers in a
// row is killed too. Either is restarted on the next call.
func (p *Persistent) Call(ctx context.Context, payload []byte) *ShellRun {
	res := &ShellRun{Stdin: payload, Exit: 0}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, p.spec.Timeout)
	defer cancel()
	var pp *persistentProc
	select {
	case pp = <-p.idle:
	case <-ctx.Done():
		res.TimedOut = true
		res.Elapsed = time.Since(start)
		return res
	}
	defer func() { p.idle <- pp }()
	out, fresh, err := pp.roundTrip(ctx, payload)
	if errors.Is(err, errProcGone) && !fresh && ctx.Err() == nil {
		out, _, err = pp.roundTrip(ctx, payload) // it died between calls: once more, on a fresh one
	}
	res.Elapsed = time.Since(start)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		res.TimedOut = true
		// A late answer is dropped by its id; a process that misses two
		// in a row has stopped answering and is replaced.
		if pp.missed++; pp.missed >= 2 {
			pp.p.log.Warn("persistent hook stopped answering; restarting it")
			pp.kill()
			pp.missed = 0
		}
	case err != nil:
		res.SpawnErr = err
	default:
		pp.missed = 0
		res.Stdout = out
	}
	return res
}

var errProcGone = errors.New("persistent hook exited without answering")

// roundTrip sends one request and waits for its answer; fresh says the
// process was started for it.
func (pp *persistentProc) roundTrip(ctx context.Context, payload []byte) (_ []byte, fresh bool, _ error) {
	fresh, err := pp.ensure(ctx)
	if err != nil {
		return nil, fresh, err
	}
	out, err := pp.exchange(ctx, payload)
	return out, fresh, err
}

func (pp *persistentProc) exchange(ctx context.Context, payload []byte) ([]byte, error) {
	pp.seq++
	id := fmt.Sprintf("%d", pp.seq)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(payload, &obj); err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	obj["id"], _ = json.Marshal(id)
	line, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	pp.mu.Lock()
	stdin, lines := pp.stdin, pp.lines
	pp.mu.Unlock()
	if stdin == nil {
		return nil, errProcGone
	}
	if err := pp.write(ctx, stdin, append(line, '\n')); err != nil {
		return nil, err
	}
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return nil, errProcGone
			}
			var ans map[string]json.RawMessage
			if err := json.Unmarshal(l, &ans); err != nil {
				return l, nil // let the parser name the garbage
			}
			var got string
			if raw, ok := ans["id"]; ok {
				if json.Unmarshal(raw, &got) != nil {
					got = string(raw) // a number echoed as a number
				}
			}
			if got != id {
				pp.p.log.Debug("dropping a persistent hook answer for another request", "id", got, "want", id)
				continue
			}
			delete(ans, "id")
			b, _ := json.Marshal(ans)
			pp.mu.Lock()
			pp.exits = 0
			pp.mu.Unlock()
			return b, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// write hands the request line to the process, giving up when ctx ends:
// a hook that does not read its input fills the pipe (64 KiB) and would
// block the write for good. A write that did not finish, or that ctx cut
// short, leaves a torn line behind, so the process is killed.
func (pp *persistentProc) write(ctx context.Context, stdin *os.File, line []byte) error {
	if err := stdin.SetWriteDeadline(time.Time{}); err != nil {
		pp.kill()
		return fmt.Errorf("%w (%v)", errProcGone, err)
	}
	abort := context.AfterFunc(ctx, func() { _ = stdin.SetWriteDeadline(time.Unix(1, 0)) })
	_, err := stdin.Write(line)
	if !abort() && err == nil {
		err = ctx.Err() // the deadline may have been set: this file is spoilt
	}
	if err == nil {
		return nil
	}
	pp.kill()
	if cerr := ctx.Err(); cerr != nil {
		pp.p.log.Warn("persistent hook did not take its request in time; restarting it", "err", cerr)
		return cerr
	}
	return fmt.Errorf("%w (%v)", errProcGone, err)
}

// ensure starts the process if it is not running, waiting out the backoff
// after a death (at most until ctx ends or Close). No lock is held while
// it waits or spawns: only the caller holding pp starts its process.
func (pp *persistentProc) ensure(ctx context.Context) (started bool, err error) {
	pp.mu.Lock()
	running, wait := pp.cmd != nil, time.Until(pp.next)
	pp.mu.Unlock()
	if running {
		return false, nil
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-pp.p.stop:
			t.Stop()
		}
	}
	return true, pp.start()
}

var errPersistentStopped = errors.New("persistent hook stopped")

// start spawns the process and its stdout reader.
func (pp *persistentProc) start() error {
	argv, err := pp.p.spec.Argv()
	if err != nil {
		return err
	}
	p := pp.p
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return errPersistentStopped
	}
	p.wg.Add(1) // before Close can wait: Close sets done under p.mu
	p.mu.Unlock()
	cmd, stdin, stdout, errb, err := spawnPersistent(argv, p.runner.environ(&p.spec), p.spec.ProjectDir)
	if err != nil {
		p.wg.Done()
		pp.mu.Lock()
		pp.died()
		pp.mu.Unlock()
		return fmt.Errorf("start persistent hook: %w", err)
	}
	lines := make(chan []byte, 16)
	pp.mu.Lock()
	pp.cmd, pp.stdin, pp.lines = cmd, stdin, lines
	pp.mu.Unlock()
	go pp.read(cmd, stdout, errb, lines)
	p.mu.Lock()
	closed := p.done
	p.mu.Unlock()
	if closed { // Close ran while it was spawning and may not have seen it
		pp.kill()
		return errPersistentStopped
	}
	return nil
}

// spawnPersistent starts argv in its own process group with a pollable
// pipe on stdin (so writes take a deadline) and stdout as a pipe.
func spawnPersistent(argv, env []string, dir string) (*exec.Cmd, *os.File, io.ReadCloser, *capBuffer, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, stdin, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	cmd.Stdin = in
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		in.Close()
		stdin.Close()
		return nil, nil, nil, nil, err
	}
	errb := &capBuffer{max: 64 << 10}
	cmd.Stderr = errb
	err = cmd.Start()
	in.Close() // the child has its copy
	if err != nil {
		stdin.Close()
		return nil, nil, nil, nil, err
	}
	return cmd, stdin, stdout, errb, nil
}

// read hands the process's stdout over line by line, then reaps it.
func (pp *persistentProc) read(cmd *exec.Cmd, stdout io.Reader, errb *capBuffer, lines chan []byte) {
	defer pp.p.wg.Done()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), ShellOutputCap)
	for sc.Scan() {
		l := append([]byte(nil), sc.Bytes()...)
		select {
		case lines <- l:
		default:
			pp.p.log.Warn("persistent hook wrote an answer nobody awaits; dropped")
		}
	}
	_ = cmd.Wait()
	close(lines)
	pp.mu.Lock()
	mine := pp.cmd == cmd
	if mine {
		pp.cmd = nil
		pp.stdin.Close()
		pp.stdin = nil
		pp.died()
	}
	pp.mu.Unlock()
	if mine {
		pp.p.log.Warn("persistent hook exited; it is restarted on the next call", "exit", cmd.ProcessState.ExitCode(), "stderr", clip400(errb.String()))
	}
}

// died counts a death and sets the earliest restart (pp.mu held).
func (pp *persistentProc) died() {
	i := min(pp.exits, len(persistentBackoff)-1)
	pp.exits++
	pp.next = time.Now().Add(persistentBackoff[i])
}

// kill ends the process group (SIGTERM, then SIGKILL after killGrace);
// the reader goroutine reaps it.
func (pp *persistentProc) kill() {
	pp.mu.Lock()
	cmd, stdin := pp.cmd, pp.stdin
	pp.cmd, pp.stdin = nil, nil
	if cmd != nil {
		pp.died()
	}
	pp.mu.Unlock()
	if cmd == nil {
		return
	}
	stdin.Close()
	pid := cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	time.AfterFunc(killGrace, func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
}

// Close stops every process and waits for them; a call waiting out a
// restart backoff gives up.
func (p *Persistent) Close() {
	p.mu.Lock()
	if !p.done {
		p.done = true
		close(p.stop)
	}
	p.mu.Unlock()
	for _, pp := range p.all {
		pp.mu.Lock()
		cmd, stdin := pp.cmd, pp.stdin
		pp.cmd, pp.stdin = nil, nil
		pp.mu.Unlock()
		if cmd != nil {
			stdin.Close() // a well-behaved hook exits at end of input
			pid := cmd.Process.Pid
			t := time.AfterFunc(killGrace, func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
			defer t.Stop()
		}
	}
	p.wg.Wait()
}

// Handler returns the registry handler for the persistent hook: the same
// decisions, failures and warnings as a spawned one.
func (p *Persistent) Handler() Handler {
	s := p.spec
	return func(ctx context.Context, ev Event) (any, error) {
		in, err := s.Payload(ev.Name, ev.Payload)
		if err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		return p.runner.settle(&s, ev, p.Call(ctx, RedactJSON(p.runner.Redactor, in)))
	}
}
