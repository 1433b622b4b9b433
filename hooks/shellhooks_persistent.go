package hooks

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
// serving one request at a time. Run owns the processes; Call hands a
// payload to an idle one.
type Persistent struct {
	spec   ShellSpec
	runner *ShellRunner
	log    *slog.Logger

	idle chan *persistentProc
	all  []*persistentProc
	wg   sync.WaitGroup
	mu   sync.Mutex
	done bool
}

type persistentProc struct {
	p      *Persistent
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // stdout, one line each; closed when the process ends
	exits  int         // consecutive deaths, for the backoff
	missed int         // consecutive timeouts (owned by the caller holding pp)
	next   time.Time   // not restarted before
	seq    uint64
}

// NewPersistent prepares a persistent hook with n processes (at least 1).
// Nothing is started before the first call.
func NewPersistent(r *ShellRunner, s ShellSpec, n int) *Persistent {
	if n < 1 {
		n = 1
	}
	p := &Persistent{spec: s, runner: r, log: r.log().With("hook", s.Command, "persistent", true), idle: make(chan *persistentProc, n)}
	for i := 0; i < n; i++ {
		pp := &persistentProc{p: p}
		p.all = append(p.all, pp)
		p.idle <- pp
	}
	return p
}

// Call sends payload (already encoded for the spec's dialect) and waits
// for the matching answer line, at most the spec's timeout. A process that
// does not answer in time is killed and restarted on the next call.
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
	if _, err := stdin.Write(append(line, '\n')); err != nil {
		pp.kill()
		return nil, fmt.Errorf("%w (%v)", errProcGone, err)
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

// ensure starts the process if it is not running, waiting out the backoff
// after a death (at most until ctx ends).
func (pp *persistentProc) ensure(ctx context.Context) (started bool, err error) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.cmd != nil {
		return false, nil
	}
	pp.p.mu.Lock()
	closed := pp.p.done
	pp.p.mu.Unlock()
	if closed {
		return false, errors.New("persistent hook stopped")
	}
	if wait := time.Until(pp.next); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		}
	}
	return true, pp.start()
}

// start spawns the process and its stdout reader (pp.mu held).
func (pp *persistentProc) start() error {
	argv, err := SplitCommand(pp.p.spec.Command)
	if err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = pp.p.runner.environ(&pp.p.spec)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	errb := &capBuffer{max: 64 << 10}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		pp.died()
		return fmt.Errorf("start persistent hook: %w", err)
	}
	lines := make(chan []byte, 16)
	pp.cmd, pp.stdin, pp.lines = cmd, stdin, lines
	pp.p.wg.Add(1)
	go func() {
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
		if pp.cmd == cmd {
			pp.cmd = nil
			pp.died()
			pp.p.log.Warn("persistent hook exited; it is restarted on the next call", "exit", cmd.ProcessState.ExitCode(), "stderr", clip400(errb.String()))
		}
		pp.mu.Unlock()
	}()
	return nil
}

// died counts a death and sets the earliest restart (pp.mu held).
func (pp *persistentProc) died() {
	i := min(pp.exits, len(persistentBackoff)-1)
	pp.exits++
	pp.next = time.Now().Add(persistentBackoff[i])
}

// kill ends the process group; the reader goroutine reaps it.
func (pp *persistentProc) kill() {
	pp.mu.Lock()
	cmd := pp.cmd
	pp.cmd = nil
	if cmd != nil {
		pp.died()
	}
	pp.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		pid := cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		time.AfterFunc(killGrace, func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	}
}

// Close stops every process and waits for them.
func (p *Persistent) Close() {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
	for _, pp := range p.all {
		pp.mu.Lock()
		cmd, stdin := pp.cmd, pp.stdin
		pp.cmd = nil
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

func clip400(s string) string {
	if len(s) > 400 {
		return s[:400]
	}
	return s
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
		return p.runner.settle(&s, ev, p.Call(ctx, in))
	}
}
