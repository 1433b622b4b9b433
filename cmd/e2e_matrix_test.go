package cmd_test

// Matrix in a whole gateway: the real cmd.Main with the matrix platform
// configured against matrixtest (as the homeserver) and agenttest (as the
// model). Every proof the other platforms give, plus Matrix's own:
// mentions in rooms, threads, streamed edits by m.replace, the notice in
// an encrypted room, joining on an allowed user's invite, and a restart
// that resumes from the stored since token.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/matrix"
	"github.com/heraldgw/herald/adapters/matrix/matrixtest"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/hooks"
)

const (
	mxAnn      = "@ann:localhost"
	mxBob      = "@bob:localhost"
	mxEve      = "@eve:localhost"
	mxDM       = "!anndm:localhost"
	mxGroup    = "!team:localhost"
	mxEveDM    = "!evedm:localhost"
	mxSecret   = "!secret:localhost"
	mxInvited  = "!invited:localhost"
	mxStreamed = "streamed answer in several pieces"
)

// mxLongText is a 40,000-byte reply of numbered words.
func mxLongText() string {
	var b strings.Builder
	for i := 1; b.Len() < 40000; i++ {
		fmt.Fprintf(&b, "w%05d ", i)
	}
	return strings.TrimSpace(b.String()[:40000])
}

func TestMatrixThroughGateway(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	var fake *matrixtest.Server
	model := agenttest.New(t)
	model.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		switch text := req.UserText(); text {
		case "hello matrix":
			// answer once the typing indicator reached the homeserver:
			// it shows while the turn runs (a turn that ended first
			// would have taken it down before it was ever sent)
			for deadline := time.Now().Add(20 * time.Second); len(fake.Typings()) == 0 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			return agenttest.Reply{Content: "echo: " + text}
		case "long":
			return agenttest.Reply{Content: mxLongText()}
		case "stream this":
			return agenttest.Reply{Content: mxStreamed, Pieces: 6}
		default:
			return agenttest.Reply{Content: "echo: " + text}
		}
	}}
	fake = matrixtest.New(matrixtest.Options{})
	t.Cleanup(fake.Close)
	fake.Room(mxDM, map[string]string{mxAnn: "Ann"})
	fake.Room(mxGroup, map[string]string{mxAnn: "Ann", mxBob: "Bob"})
	fake.Room(mxEveDM, map[string]string{mxEve: "Eve"})
	fake.Room(mxSecret, map[string]string{mxAnn: "Ann"})
	fake.Say(mxDM, mxAnn, matrixtest.Text("said before herald ever started"))

	cfg := "agent:\n  workdir: " + work + "\nplatforms:\n  matrix:\n    homeserver: " + fake.URL() +
		"\n    allowed_users: [\"" + mxAnn + "\", \"" + mxBob + "\"]\n    unauthorized_dm: pair\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := modelEnv(model)
	env["MATRIX_ACCESS_TOKEN"] = fake.Token()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	plugins := []hooks.Plugin{{Name: "matrix-test", Register: func(c *hooks.PluginContext) error {
		c.RegisterHook(hooks.PreGatewayDispatchHook, hooks.Func(func(ctx context.Context, d *hooks.Dispatch) *hooks.DispatchDecision {
			if strings.HasPrefix(d.Message.Text, "secret") {
				return &hooks.DispatchDecision{Action: "skip", Reason: "secret"}
			}
			return nil
		}))
		// the streamed answer's final text differs from every preview:
		// once a preview is shown, the answer must be an edit of it
		c.RegisterHook(hooks.TransformLLMOutputHook, hooks.Func(func(ctx context.Context, p *hooks.LLMOutput) string {
			if p.ResponseText != mxStreamed {
				return ""
			}
			wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
			defer wcancel()
			fake.WaitFor(wctx, func(sent []matrixtest.Sent) bool {
				for _, s := range sent {
					if s.Room == mxDM && strings.HasPrefix(mxStreamed, s.Body) && s.Body != "" {
						return true
					}
				}
				return false
			})
			return p.ResponseText + " (checked)"
		}))
		return nil
	}}}
	start := func() *cmdtest.Gateway {
		g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: env, Plugins: plugins})
		waitHealth(t, g, ctx, "matrix")
		return g
	}
	g := start()
	events := g.Events(t)

	visible := func(room string) []matrixtest.Shown { return matrixtest.Visible(fake.Sent(), room) }
	texts := func(room string) []string {
		var out []string
		for _, s := range visible(room) {
			out = append(out, s.Text)
		}
		return out
	}
	// waitText waits until room shows a message reading text.
	waitText := func(room, text string) matrixtest.Shown {
		t.Helper()
		var found matrixtest.Shown
		_, err := fake.WaitFor(ctx, func(sent []matrixtest.Sent) bool {
			for _, s := range matrixtest.Visible(sent, room) {
				if s.Text == text {
					found = s
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Fatalf("%s never showed %q: it shows %q\n%s", room, text, texts(room), g.Log())
		}
		return found
	}

	t.Run("a DM reaches the agent and the reply arrives", func(t *testing.T) {
		fake.Say(mxDM, mxAnn, matrixtest.Text("hello matrix"))
		waitText(mxDM, "echo: hello matrix")
		if got := texts(mxDM); len(got) != 1 {
			t.Errorf("DM shows %q, want only the reply (the backlog is not answered)", got)
		}
		if ty := fake.Typings(); len(ty) == 0 || ty[0].Room != mxDM || !ty[0].Typing {
			t.Errorf("typing notifications %+v", ty)
		}
	})

	t.Run("lifecycle events name matrix", func(t *testing.T) {
		if e := cmdtest.WaitFor(t, events, "agent:start", 10*time.Second); e.Context["platform"] != "matrix" || e.Context["message"] != "hello matrix" {
			t.Errorf("agent:start %v", e.Context)
		}
		if e := cmdtest.WaitFor(t, events, "agent:end", 10*time.Second); e.Context["platform"] != "matrix" {
			t.Errorf("agent:end %v", e.Context)
		}
	})

	t.Run("a long reply arrives in order in 3 parts", func(t *testing.T) {
		want := gateway.Split(mxLongText(), matrix.New(matrix.Config{}).Limits())
		if len(want) != 3 {
			t.Fatalf("Split made %d parts of 40000 bytes, want 3", len(want))
		}
		n := len(visible(mxDM))
		fake.Say(mxDM, mxAnn, matrixtest.Text("long"))
		waitText(mxDM, want[2])
		got := texts(mxDM)[n:]
		if len(got) != 3 {
			t.Fatalf("%d messages, want 3", len(got))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("part %d out of order or changed: starts %q", i+1, got[i][:min(20, len(got[i]))])
			}
		}
	})

	t.Run("a 429 then success delivers once", func(t *testing.T) {
		rejected := fake.Rejected()
		fake.RateLimit(1, 300*time.Millisecond)
		fake.Say(mxDM, mxAnn, matrixtest.Text("rate limited"))
		waitText(mxDM, "echo: rate limited")
		fake.Say(mxDM, mxAnn, matrixtest.Text("after the limit"))
		waitText(mxDM, "echo: after the limit") // anything late would land before this
		if got := texts(mxDM); count(got, "echo: rate limited") != 1 || fake.Rejected() != rejected+1 {
			t.Errorf("replies %q, rejected %d", got, fake.Rejected()-rejected)
		}
	})

	t.Run("pre_gateway_dispatch skip sends nothing", func(t *testing.T) {
		n := len(visible(mxDM))
		fake.Say(mxDM, mxAnn, matrixtest.Text("secret plans"))
		fake.Say(mxDM, mxAnn, matrixtest.Text("after the secret"))
		waitText(mxDM, "echo: after the secret")
		if got := texts(mxDM)[n:]; len(got) != 1 {
			t.Errorf("replies %q, want only the one after the skipped message", got)
		}
	})

	t.Run("an unknown user gets a pairing code", func(t *testing.T) {
		fake.Say(mxEveDM, mxEve, matrixtest.Text("let me in"))
		if _, err := fake.WaitFor(ctx, func(sent []matrixtest.Sent) bool { return len(matrixtest.Visible(sent, mxEveDM)) > 0 }); err != nil {
			t.Fatal(err)
		}
		if got := texts(mxEveDM); len(got) != 1 || !strings.Contains(got[0], "pairing code") || strings.Contains(got[0], "let me in") {
			t.Errorf("replies to the stranger %q", got)
		}
	})

	t.Run("a room needs a mention, and a thread reply lands in the thread", func(t *testing.T) {
		fake.Say(mxGroup, mxBob, matrixtest.Text("just talking among ourselves"))
		root := fake.Say(mxGroup, mxBob, matrixtest.Mention("Herald: are you there", fake.UserID()))
		waitText(mxGroup, "echo: are you there")
		fake.Say(mxGroup, mxBob, map[string]any{"msgtype": "m.text", "body": "Herald: and in the thread",
			"m.mentions":   map[string]any{"user_ids": []string{fake.UserID()}},
			"m.relates_to": map[string]any{"rel_type": "m.thread", "event_id": root, "is_falling_back": true, "m.in_reply_to": map[string]any{"event_id": root}}})
		s := waitText(mxGroup, "echo: and in the thread")
		if s.ThreadRoot != root {
			t.Errorf("the thread reply %+v is not in the thread of %s", s, root)
		}
		if got := texts(mxGroup); count(got, "echo: just talking among ourselves") != 0 || len(got) != 2 {
			t.Errorf("room shows %q, want answers to the two mentions only", got)
		}
	})

	t.Run("a streamed reply is edited by m.replace", func(t *testing.T) {
		fake.Say(mxDM, mxAnn, matrixtest.Text("stream this"))
		s := waitText(mxDM, mxStreamed+" (checked)")
		if s.Edits == 0 {
			t.Fatalf("the streamed answer was not an edit of its preview: %+v", s)
		}
		for _, e := range fake.Sent() {
			if e.Replaces == s.EventID && (e.NewBody == "" || !strings.HasPrefix(e.Body, "* ")) {
				t.Errorf("edit %+v lacks m.new_content or its fallback body", e)
			}
		}
	})

	t.Run("an encrypted room gets one notice and no turn", func(t *testing.T) {
		turns := len(model.Requests())
		fake.Post(mxSecret, mxAnn, "m.room.encrypted", matrixtest.Encrypted())
		fake.Post(mxSecret, mxAnn, "m.room.encrypted", matrixtest.Encrypted())
		fake.Say(mxDM, mxAnn, matrixtest.Text("after the encrypted ones"))
		waitText(mxDM, "echo: after the encrypted ones")
		got := visible(mxSecret)
		if len(got) != 1 || got[0].MsgType != "m.notice" || !strings.Contains(got[0].Text, "does not support end-to-end encryption") {
			t.Errorf("encrypted room shows %+v, want one notice", got)
		}
		if n := len(model.Requests()); n != turns+1 {
			t.Errorf("%d model calls, want only the DM's", n-turns)
		}
	})

	t.Run("an allowed user's invite is joined", func(t *testing.T) {
		fake.Invite(mxInvited, mxAnn, "Ann", false)
		if err := fake.WaitJoined(ctx, mxInvited); err != nil {
			t.Fatal(err)
		}
		fake.Say(mxInvited, mxAnn, matrixtest.Text("hello in the new room"))
		waitText(mxInvited, "echo: hello in the new room")
	})

	t.Run("a restart neither replays nor loses", func(t *testing.T) {
		if code := g.Stop(); code != 0 {
			t.Fatalf("gateway exited %d", code)
		}
		fake.Say(mxDM, mxAnn, matrixtest.Text("said while herald was down"))
		g = start()
		waitText(mxDM, "echo: said while herald was down")
		fake.Say(mxDM, mxAnn, matrixtest.Text("after the restart"))
		waitText(mxDM, "echo: after the restart")
		got := texts(mxDM)
		for _, once := range []string{"echo: hello matrix", "echo: rate limited", "echo: said while herald was down"} {
			if count(got, once) != 1 {
				t.Errorf("%q shown %d times", once, count(got, once))
			}
		}
		if count(got, "echo: said before herald ever started") != 0 {
			t.Error("the backlog from before the first start was answered")
		}
	})

	if log := g.Log(); strings.Contains(log, fake.Token()) {
		t.Error("the Matrix access token is in gateway.log")
	}
}
