package hooks

// The runners of directory hooks: a long-lived Python worker per
// handler.py hook (pyworker.py, embedded), and an executable run once per
// event.

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/heraldgw/herald"
)

//go:embed pyworker.py
var pyWorkerSource string

// maxAnswer bounds what a hook may print as its answer.
const maxAnswer = 1 << 20

// errWorkerGone is returned to calls in flight when a worker dies.
var errWorkerGone = errors.New("python worker exited before answering")

// pyWorker keeps one Python process running a Hermes handler.py: started
// at load, restarted with backoff if it dies, stopped when the hook is
// unloaded. Events are answered one at a time in the order they were
// sent, so module-level state sees them in order.
type pyWorker struct {
	hook   DirHook
	python string
	env    []string
	log    *slog.Logger
	red    *herald.Redactor
	// dir is the working directory ("": the gateway's).
	dir  string
	minB time.Duration
	maxB time.Duration

	mu      sync.Mutex
	proc    *pyProc       // the ready process, nil while (re)starting
	broken  string        // the import error while it persists ("" if none)
	changed chan struct{} // closed and replaced when proc or broken change

	stopCh   chan struct{}
	stopOnce sync.Once
	nextID   atomic.Uint64
	// starts counts processes started (tests read it).
	starts atomic.Int64
}

type pyProc struct {
	cmd     *exec.Cmd
	req     *os.File
	resp    *bufio.Reader
	wmu     sync.Mutex
	pmu     sync.Mutex
	pending map[uint64]chan pyReply
	exited  chan struct{}
	kill    func()
}

type pyReply struct {
	Type string `json:"type"`
	// Level, Logger and Message make a "log" record: one call of the
	// handler's Python logging.
	Level     int             `json:"level"`
	Logger    string          `json:"logger"`
	Message   string          `json:"message"`
	ID        *uint64         `json:"id"`
	OK        bool            `json:"ok"`
	Result    json.RawMessage `json:"result"`
	Error     string          `json:"error"`
	Phase     string          `json:"phase"`
	Traceback string          `json:"traceback"`
}

func newPyWorker(h DirHook, python string, env []string, log *slog.Logger, minB, maxB time.Duration) *pyWorker {
	return &pyWorker{hook: h, python: python, env: env, log: log.With("hook", h.Name), minB: minB, maxB: maxB,
		changed: make(chan struct{}), stopCh: make(chan struct{})}
}

func (w *pyWorker) setState(p *pyProc, broken string) {
	w.mu.Lock()
	w.proc, w.broken = p, broken
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

// stop ends the worker: its process gets EOF on its request pipe and is
// killed if it has not exited within two seconds.
func (w *pyWorker) stop() { w.stopOnce.Do(func() { close(w.stopCh) }) }

// run starts the process and restarts it when it dies, until stop or ctx.
func (w *pyWorker) run(ctx context.Context) {
	backoff := w.minB
	lastFatal := ""
	for {
		started := time.Now()
		fatal, err := w.runOnce(ctx)
		select {
		case <-w.stopCh:
			return
		case <-ctx.Done():
			return
		default:
		}
		switch {
		case fatal != "":
			if fatal != lastFatal {
				w.log.Error(fmt.Sprintf("[hooks] Error loading hook %s: %s", w.hook.Name, fatal), "dir", w.hook.Dir)
				lastFatal = fatal
			}
		default:
			if lastFatal != "" {
				lastFatal = ""
			}
			if time.Since(started) > 10*w.maxB {
				backoff = w.minB
			}
			w.log.Warn("[hooks] python worker exited; restarting", "err", err, "in", backoff)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-w.stopCh:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		}
		backoff = min(backoff*2, w.maxB)
	}
}

// runOnce runs one process until it exits. fatal is the handler's import
// error (the process then exits at once).
func (w *pyWorker) runOnce(ctx context.Context) (fatal string, err error) {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return "", err
	}
	respR, respW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return "", err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		respR.Close()
		respW.Close()
		return "", err
	}
	cmd := exec.Command(w.python, "-u", "-c", pyWorkerSource, w.hook.Handler, w.hook.Name, strconv.Itoa(w.pythonLevel()))
	cmd.Dir = w.dir
	cmd.Env = w.env
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = []*os.File{reqR, respW} // fd 3, fd 4
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	reqR.Close()
	respW.Close()
	outW.Close()
	if err != nil {
		reqW.Close()
		respR.Close()
		outR.Close()
		return "", fmt.Errorf("start %s: %w", w.python, err)
	}
	w.starts.Add(1)
	var logs sync.WaitGroup
	logs.Add(1)
	go func() {
		defer logs.Done()
		logLines(outR, w.log, "[hooks] hook output")
	}()
	p := &pyProc{cmd: cmd, req: reqW, resp: bufio.NewReaderSize(respR, 64<<10), pending: map[uint64]chan pyReply{}, exited: make(chan struct{})}
	var killOnce sync.Once
	p.kill = func() {
		killOnce.Do(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	// the stop watcher: EOF first, then a kill
	watchDone := make(chan struct{})
	go func() {
		select {
		case <-w.stopCh:
		case <-ctx.Done():
		case <-watchDone:
			return
		}
		p.wmu.Lock()
		p.req.Close()
		p.wmu.Unlock()
		t := time.NewTimer(2 * time.Second)
		defer t.Stop()
		select {
		case <-t.C:
			p.kill()
		case <-watchDone:
		}
	}()

	first, rerr := w.readReply(p.resp)
	switch {
	case rerr != nil:
		// died during import without a word (a crash of the interpreter)
	case first.Type == "fatal":
		fatal = first.Error
		if first.Phase == "handle" {
			fatal = "no 'handle' function found"
		}
		if first.Traceback != "" {
			w.log.Debug("[hooks] import traceback", "traceback", first.Traceback)
		}
	case first.Type == "ready":
		w.setState(p, "")
		for {
			rep, err := w.readReply(p.resp)
			if err != nil {
				break
			}
			if rep.ID == nil {
				continue
			}
			p.pmu.Lock()
			ch := p.pending[*rep.ID]
			delete(p.pending, *rep.ID)
			p.pmu.Unlock()
			if ch != nil {
				ch <- rep
			}
		}
		w.setState(nil, "")
	}
	if fatal != "" {
		w.setState(nil, fatal)
	}
	// the process is done talking; make sure it is gone
	var werr error
	select {
	case werr = <-waited:
	case <-time.After(2 * time.Second):
		p.kill()
		werr = <-waited
	}
	close(watchDone)
	p.wmu.Lock()
	p.req.Close()
	p.wmu.Unlock()
	respR.Close()
	close(p.exited)
	// a grandchild may hold the output pipe open; do not wait for it long
	logsDone := make(chan struct{})
	go func() { logs.Wait(); close(logsDone) }()
	select {
	case <-logsDone:
	case <-time.After(2 * time.Second):
		outR.Close()
		<-logsDone
	}
	outR.Close()
	if werr == nil {
		werr = errors.New("exited")
	}
	return fatal, werr
}

// readReply returns the next message of the worker that is not a log
// record; log records met on the way are logged.
func (w *pyWorker) readReply(r *bufio.Reader) (pyReply, error) {
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var rep pyReply
			if json.Unmarshal(line, &rep) == nil {
				if rep.Type != "log" {
					return rep, nil
				}
				w.log.Log(context.Background(), slogLevel(rep.Level), rep.Message, "logger", rep.Logger)
			}
		}
		if err != nil {
			return pyReply{}, err
		}
	}
}

// Python's logging levels (logging.DEBUG … logging.ERROR).
const (
	pyDebug   = 10
	pyInfo    = 20
	pyWarning = 30
	pyError   = 40
)

// slogLevel maps a Python logging level to herald's: a handler's
// logging.error is an error in herald's log, CRITICAL too.
func slogLevel(py int) slog.Level {
	switch {
	case py >= pyError:
		return slog.LevelError
	case py >= pyWarning:
		return slog.LevelWarn
	case py >= pyInfo:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// pythonLevel is the lowest Python logging level herald's log keeps, so
// the worker forwards no record that would be dropped (as Hermes sets its
// root logger to its configured level).
func (w *pyWorker) pythonLevel() int {
	ctx := context.Background()
	for _, l := range []struct {
		slog slog.Level
		py   int
	}{{slog.LevelDebug, pyDebug}, {slog.LevelInfo, pyInfo}, {slog.LevelWarn, pyWarning}} {
		if w.log.Enabled(ctx, l.slog) {
			return l.py
		}
	}
	return pyError
}

// handle is the worker's registry Handler.
func (w *pyWorker) handle(ctx context.Context, ev Event) (any, error) {
	var p *pyProc
	for {
		w.mu.Lock()
		var broken string
		var ch chan struct{}
		p, broken, ch = w.proc, w.broken, w.changed
		w.mu.Unlock()
		if p != nil {
			break
		}
		if broken != "" {
			// said once when it failed to load; silent until it loads
			return nil, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("python worker not ready: %w", ctx.Err())
		case <-w.stopCh:
			return nil, errWorkerGone
		}
	}
	env, err := GatewayEnvelope(ev.Name, ev.Payload)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.Name, err)
	}
	env = RedactJSON(w.red, env)
	id := w.nextID.Add(1)
	line := make([]byte, 0, len(env)+24)
	line = append(line, `{"id":`...)
	line = strconv.AppendUint(line, id, 10)
	line = append(line, ',')
	line = append(line, env[1:]...)
	line = append(line, '\n')
	ch := make(chan pyReply, 1)
	p.pmu.Lock()
	p.pending[id] = ch
	p.pmu.Unlock()
	defer func() {
		p.pmu.Lock()
		delete(p.pending, id)
		p.pmu.Unlock()
	}()
	p.wmu.Lock()
	if dl, ok := ctx.Deadline(); ok {
		p.req.SetWriteDeadline(dl)
	}
	_, err = p.req.Write(line)
	p.wmu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("send to python worker: %w", err)
	}
	select {
	case rep := <-ch:
		if !rep.OK {
			if rep.Traceback != "" {
				w.log.Debug("[hooks] handler traceback", "event", ev.Name, "traceback", rep.Traceback)
			}
			return nil, fmt.Errorf("handler raised %s", rep.Error)
		}
		return decodeResult(ev.Name, rep.Result)
	case <-p.exited:
		return nil, errWorkerGone
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// a handler stuck past its timeout would hold up every later
			// event: start a fresh worker (module state is lost; said so)
			w.log.Warn("[hooks] handler overran its timeout; restarting its python worker", "event", ev.Name, "timeout", w.hook.Timeout)
			p.kill()
		}
		return nil, ctx.Err()
	}
}

// decodeResult turns what handle() returned into a result: a dict is
// read with the shared wire parser, a string is a string (pre_llm_call
// and transform_* take one), anything else is no answer.
func decodeResult(event string, raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	switch raw[0] {
	case '{':
		return ParseAnswer(event, raw)
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, nil
}

// logLines logs each line a hook wrote to stdout or stderr.
func logLines(r io.Reader, log *slog.Logger, msg string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			log.Info(msg, "line", line)
		}
	}
	io.Copy(io.Discard, r)
}

// execHook runs an executable once per event, with the gateway-hook
// envelope on stdin; an interceptor's answer is its stdout.
type execHook struct {
	hook DirHook
	env  []string
	log  *slog.Logger
	red  *herald.Redactor
}

func (x *execHook) handle(ctx context.Context, ev Event) (any, error) {
	in, err := GatewayEnvelope(ev.Name, ev.Payload)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.Name, err)
	}
	in = RedactJSON(x.red, in)
	cmd := exec.CommandContext(ctx, x.hook.Argv[0], x.hook.Argv[1:]...)
	cmd.Dir = x.hook.Dir
	cmd.Env = x.env
	cmd.Stdin = bytes.NewReader(in)
	var out, errb limitedBuffer
	out.max, errb.max = maxAnswer, 64<<10
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	runErr := cmd.Run()
	log := x.log.With("hook", x.hook.Name, "event", ev.Name)
	if errb.Len() > 0 {
		logLines(bytes.NewReader(errb.Bytes()), log, "[hooks] hook stderr")
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %w", x.hook.Argv[0], ctx.Err())
	}
	var ee *exec.ExitError
	switch {
	case errors.As(runErr, &ee):
		// as for shell hooks, a non-zero exit is a warning and its stdout
		// still counts
		log.Warn("[hooks] hook exited with an error", "status", ee.ExitCode())
	case runErr != nil:
		return nil, fmt.Errorf("run %s: %w", x.hook.Argv[0], runErr)
	}
	if p, ok := Lookup(ev.Name); ok && p.Kind == Observer {
		return nil, nil
	}
	return ParseAnswer(ev.Name, out.Bytes())
}

// limitedBuffer keeps the first max bytes written and discards the rest.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}

// ReadFrom hides the embedded buffer's ReadFrom, which would bypass the
// limit (os/exec copies with io.Copy, which prefers ReadFrom).
func (b *limitedBuffer) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{b}, r)
}
