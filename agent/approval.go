package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/heraldgw/herald/hooks"
)

// Choice is a person's answer to an approval prompt, in Hermes' words.
type Choice string

const (
	ChoiceOnce    Choice = "once"
	ChoiceSession Choice = "session"
	ChoiceAlways  Choice = "always"
	ChoiceDeny    Choice = "deny"
	ChoiceTimeout Choice = "timeout"
)

// Allowed reports whether the choice lets the command run.
func (c Choice) Allowed() bool { return c == ChoiceOnce || c == ChoiceSession || c == ChoiceAlways }

// ApprovalRequest is what a person is asked about.
type ApprovalRequest struct {
	Turn        *Turn
	Command     string
	Description string
	PatternKey  string
	PatternKeys []string
}

// Approver asks a person whether a dangerous command may run. The gateway
// implements it for chats (a prompt answered by /approve or /deny), herald
// chat with a y/N prompt on the terminal (TerminalApprover). Where nobody
// can answer (BOOT.md, cron) there is no Approver and the answer is deny.
//
// Approve may block until the person answers; ctx carries the approval
// timeout (approvals.timeout, 5 minutes by default) and the turn's
// cancellation. An Approver should return ChoiceTimeout (or ctx.Err())
// when ctx ends.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Choice, error)
}

// ApprovalMemory remembers "always" answers per pattern key across
// restarts. sessions.Store implements it over state.db.
type ApprovalMemory interface {
	ApprovedPattern(ctx context.Context, pattern string) (bool, error)
	RememberApproval(ctx context.Context, pattern, command string) error
}

// Approval modes (approvals.mode).
const (
	ModeAsk  = "ask"
	ModeOff  = "off"
	ModeYolo = "yolo"
)

// DefaultApprovalTimeout is how long a person has to answer.
const DefaultApprovalTimeout = 5 * time.Minute

// ErrDenied is wrapped by every refusal of a dangerous command.
var ErrDenied = errors.New("command denied")

// sessionApprovals holds "session" answers: session key → pattern keys.
type sessionApprovals struct {
	mu sync.Mutex
	m  map[string]map[string]bool
}

func (s *sessionApprovals) has(session string, keys []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.m[session]
	for _, k := range keys {
		if !got[k] {
			return false
		}
	}
	return len(keys) > 0
}

func (s *sessionApprovals) add(session string, keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]map[string]bool{}
	}
	if s.m[session] == nil {
		s.m[session] = map[string]bool{}
	}
	for _, k := range keys {
		s.m[session][k] = true
	}
}

// approve decides whether a flagged command may run in this turn. It
// returns nil to go ahead, an error wrapping ErrDenied for a refusal (its
// text is for the model), or the context's error when the turn ended.
func (r *runState) approve(ctx context.Context, command, description string, keys []string) error {
	a := r.agent
	log := a.logger()
	switch strings.ToLower(a.ApprovalMode) {
	case ModeYolo:
		return nil
	case ModeOff:
		return fmt.Errorf("%w: %s (%s); approvals are off, so dangerous commands are never run", ErrDenied, description, strings.Join(keys, ", "))
	}
	sk := r.turn.SessionKey
	if sk == "" {
		sk = r.turn.SessionID
	}
	if a.sessionOK.has(sk, keys) {
		return nil
	}
	if mem := a.ApprovalMemory; mem != nil && len(keys) > 0 {
		all := true
		for _, k := range keys {
			ok, err := mem.ApprovedPattern(ctx, k)
			if err != nil {
				log.Warn("approval memory unavailable", "pattern", k, "err", err)
			}
			if !ok {
				all = false
				break
			}
		}
		if all {
			return nil
		}
	}
	if r.opts.Approver == nil {
		log.Info("dangerous command denied: nobody can approve it here", "session_id", r.turn.SessionID, "patterns", strings.Join(keys, ","))
		return fmt.Errorf("%w: %s needs a person's approval and nobody can answer here", ErrDenied, description)
	}
	surface := r.turn.Surface
	if surface == "" {
		surface = "gateway"
	}
	primary := ""
	if len(keys) > 0 {
		primary = keys[0]
	}
	pre := &hooks.Approval{Command: command, Description: description, PatternKey: primary, PatternKeys: append([]string{}, keys...), SessionKey: sk, Surface: surface}
	a.hooks().Emit(hooks.PreApprovalRequestHook, pre)
	timeout := a.ApprovalTimeout
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	choice, err := r.askApprover(actx, ApprovalRequest{Turn: &r.turn, Command: command, Description: description, PatternKey: primary, PatternKeys: pre.PatternKeys})
	timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
	cancel()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	switch {
	case choice.Allowed() && err == nil:
	case choice == ChoiceTimeout || timedOut:
		choice = ChoiceTimeout
	default:
		if err != nil {
			log.Warn("approval prompt failed; treated as deny", "err", err)
		}
		choice = ChoiceDeny
	}
	post := *pre
	post.PatternKeys = append([]string{}, keys...)
	post.Choice = string(choice)
	a.hooks().Emit(hooks.PostApprovalResponseHook, &post)
	switch choice {
	case ChoiceSession:
		a.sessionOK.add(sk, keys)
	case ChoiceAlways:
		a.sessionOK.add(sk, keys)
		if mem := a.ApprovalMemory; mem != nil {
			for _, k := range keys {
				if err := mem.RememberApproval(context.WithoutCancel(ctx), k, command); err != nil {
					log.Warn("could not remember the approval", "pattern", k, "err", err)
				}
			}
		}
	case ChoiceTimeout:
		return fmt.Errorf("%w: %s; nobody answered the approval prompt within %s", ErrDenied, description, timeout)
	case ChoiceDeny:
		return fmt.Errorf("%w: %s; the user denied it", ErrDenied, description)
	}
	return nil
}

// askApprover calls the Approver behind a recover boundary: it is code
// from another package talking to a person.
func (r *runState) askApprover(ctx context.Context, req ApprovalRequest) (c Choice, err error) {
	defer func() {
		if p := recover(); p != nil {
			c, err = ChoiceDeny, fmt.Errorf("approver panicked: %v", p)
		}
	}()
	return r.opts.Approver.Approve(ctx, req)
}

// TerminalApprover asks on a terminal: it prints the command and the
// reason to Out and reads one line from In: y (once), s (session),
// a (always); anything else, or no line, is a deny. When ctx ends before
// a line arrives the answer is timeout; the pending read is kept and its
// line answers the next prompt, so one reader goroutine at most is ever
// waiting on In, and it ends with In.
type TerminalApprover struct {
	In  io.Reader
	Out io.Writer

	mu      sync.Mutex
	br      *bufio.Reader
	pending chan lineResult
}

type lineResult struct {
	line string
	err  error
}

var _ Approver = (*TerminalApprover)(nil)

func (t *TerminalApprover) Approve(ctx context.Context, req ApprovalRequest) (Choice, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.Out, "\n⚠ herald wants to run a dangerous command:\n    %s\n  reason: %s\nAllow it? [y]es once, [s]ession, [a]lways, [N]o: ", req.Command, req.Description)
	if t.br == nil {
		t.br = bufio.NewReader(t.In)
	}
	if t.pending == nil {
		ch := make(chan lineResult, 1)
		t.pending = ch
		br := t.br
		go func() {
			line, err := br.ReadString('\n')
			ch <- lineResult{line, err}
		}()
	}
	select {
	case res := <-t.pending:
		t.pending = nil
		if res.err != nil && res.line == "" {
			fmt.Fprintln(t.Out)
			return ChoiceDeny, nil
		}
		switch strings.ToLower(strings.TrimSpace(res.line)) {
		case "y", "yes", "once":
			return ChoiceOnce, nil
		case "s", "session":
			return ChoiceSession, nil
		case "a", "always":
			return ChoiceAlways, nil
		}
		return ChoiceDeny, nil
	case <-ctx.Done():
		fmt.Fprintln(t.Out, "\n(no answer: denied)")
		return ChoiceTimeout, nil
	}
}
