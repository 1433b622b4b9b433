package cmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
)

// cliAdapter is the terminal as a platform ("cli") for herald chat: the
// same dispatch, commands, sessions and hooks as any chat.
type cliAdapter struct {
	mu  sync.Mutex
	out io.Writer
	n   int
}

func (c *cliAdapter) Platform() herald.Platform { return herald.PlatformCLI }
func (c *cliAdapter) Limits() adapters.Limits   { return adapters.Limits{} }
func (c *cliAdapter) Run(ctx context.Context, _ adapters.Sink) error {
	<-ctx.Done()
	return nil
}
func (c *cliAdapter) Send(ctx context.Context, to herald.Target, m adapters.Outgoing) (adapters.Sent, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	fmt.Fprintf(c.out, "%s\n", m.Text)
	return adapters.Sent{MessageID: fmt.Sprint(c.n)}, nil
}

func (e *env) chat(ctx context.Context, args []string) error {
	fs := e.flags("chat")
	q := fs.String("q", "", "send one message, print the reply and exit")
	chatID := fs.String("chat", "terminal", "conversation name (a chat id on platform cli)")
	acceptHooks := fs.Bool("accept-hooks", false, "consent to every configured shell hook")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *acceptHooks {
		e.acceptHooks = true
	}
	tty := isTerminal(e.stdin)
	e.interactive = *q == "" && tty
	a, err := e.newApp(appOptions{quiet: true})
	if err != nil {
		return err
	}
	defer a.close()
	if a.endpoint.Offline {
		fmt.Fprintln(e.stderr, "herald: no model credentials set; the offline echo model will answer (set OPENAI_API_KEY to use a real one)")
	}
	cli := &cliAdapter{out: e.stdout}
	gc := gatewayConfig(a, []adapters.Adapter{cli})
	// a turn's end is said here (the reply on stdout, a failure on
	// stderr in one line), not by the gateway's turn log as well
	gc.TurnLog = slog.New(slog.DiscardHandler)
	// on a terminal, approvals are a y/N prompt; without one nobody can
	// answer, so a command that needs approval is denied at once
	noTTY := &noTerminalApprover{errw: e.stderr}
	var approver agent.Approver = noTTY
	if tty {
		approver = &agent.TerminalApprover{In: e.stdin, Out: e.stdout}
	}
	gc.Approvers = map[herald.Platform]agent.Approver{herald.PlatformCLI: approver}
	runner := gateway.New(gc)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runner.Run(runCtx) }()
	defer func() {
		cancel()
		<-done
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		a.closeHooks(dctx)
		dcancel()
	}()
	for _, gh := range chatHooks {
		stop, err := gh(runCtx, a, &gatewayParts{runner: runner})
		if err != nil {
			return err
		}
		if stop != nil {
			defer stop()
		}
	}

	userID, userName := "local", "you"
	if u, err := user.Current(); err == nil {
		userID, userName = u.Username, u.Username
	}
	send := func(text string) error {
		rec := runner.Receive(ctx, herald.Message{
			ID: fmt.Sprint(time.Now().UnixNano()), Text: text, Received: time.Now(),
			Source: herald.Source{Platform: herald.PlatformCLI, ChatID: *chatID, ChatType: herald.ChatDM, UserID: userID, UserName: userName},
		})
		select {
		case <-rec.Done():
			return rec.Outcome().Err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if *q != "" {
		if err := send(*q); err != nil {
			return &exitError{code: 1, msg: a.redactor.Redact(err.Error())}
		}
		return noTTY.err()
	}
	in := bufio.NewScanner(e.stdin)
	in.Buffer(make([]byte, 64*1024), 10<<20)
	if e.interactive {
		fmt.Fprintln(e.stdout, "herald chat — type a message, /help for commands, Ctrl-D to quit.")
	}
	for {
		if e.interactive {
			fmt.Fprint(e.stdout, "> ")
		}
		if !in.Scan() {
			break
		}
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		if line == "/exit" || line == "/quit" {
			break
		}
		if err := send(line); err != nil {
			if ctx.Err() != nil {
				break
			}
			fmt.Fprintf(e.stderr, "herald: %s\n", a.redactor.Redact(err.Error()))
		}
	}
	return noTTY.err()
}

// noTerminalApprover answers for herald chat without a terminal: nobody
// can be asked, so every command that needs approval is denied at once,
// said on stderr, and herald chat then exits 1.
type noTerminalApprover struct {
	errw   io.Writer
	denied atomic.Int32
}

func (n *noTerminalApprover) Approve(_ context.Context, req agent.ApprovalRequest) (agent.Choice, error) {
	n.denied.Add(1)
	fmt.Fprintf(n.errw, "herald: denied %q: it needs approval (%s) and there is no terminal to ask on (run herald chat on a terminal, or set approvals.mode)\n", req.Command, req.Description)
	return agent.ChoiceDeny, nil
}

func (n *noTerminalApprover) err() error {
	if c := n.denied.Load(); c > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%d command(s) needed approval and were denied: no terminal to ask on", c)}
	}
	return nil
}

// chatHooks are like gatewayHooks, for herald chat (shell hooks attach
// there too).
var chatHooks []gatewayHook

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
