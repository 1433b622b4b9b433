package cmd_test

// Microsoft Teams in a whole gateway: the real cmd.Main with the teams
// platform configured against teamstest (as Microsoft) and agenttest (as
// the model), activities POSTed to the inbound listener's /api/messages.

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/teams/teamstest"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/hooks"
)

// teamsGateway is a gateway with the teams platform.
type teamsGateway struct {
	t    *testing.T
	fake *teamstest.Server
	g    *cmdtest.Gateway
	url  string // the activity endpoint
	ctx  context.Context
}

// startTeams starts a gateway whose teams platform talks to a new fake,
// with extra config.yaml text before the platforms block and teamsExtra
// inside platforms.teams, and waits until teams is connected.
func startTeams(t *testing.T, model *agenttest.Server, extra, teamsExtra string, plugins ...hooks.Plugin) *teamsGateway {
	t.Helper()
	fake := teamstest.New(teamstest.Options{})
	t.Cleanup(fake.Close)
	home := t.TempDir()
	cfg := extra + "inbound:\n  listen: 127.0.0.1:0\nplatforms:\n  teams:\n" +
		"    openid_metadata_url: " + fake.OpenIDMetadataURL() + "\n    token_url: " + fake.TokenURL() + "\n" + teamsExtra
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := modelEnv(model)
	env["MICROSOFT_APP_ID"] = fake.AppID()
	env["MICROSOFT_APP_PASSWORD"] = fake.AppPassword()
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: env, Plugins: plugins})
	b, err := os.ReadFile(filepath.Join(home, "inbound.addr"))
	if err != nil {
		t.Fatalf("no inbound listener: %v\n%s", err, g.Log())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	waitHealth(t, g, ctx, "teams")
	return &teamsGateway{t: t, fake: fake, g: g, ctx: ctx, url: "http://" + strings.TrimSpace(string(b)) + "/api/messages"}
}

// post sends an activity signed as sg and returns the HTTP status.
func (tg *teamsGateway) post(act map[string]any, sg teamstest.Signing) int {
	tg.t.Helper()
	code, _, err := tg.fake.Post(tg.ctx, tg.url, act, sg)
	if err != nil {
		tg.t.Fatal(err)
	}
	return code
}

func (tg *teamsGateway) send(act map[string]any) {
	tg.t.Helper()
	if code := tg.post(act, teamstest.Signing{}); code != http.StatusOK {
		tg.t.Fatalf("activity %v answered %d\n%s", act["id"], code, tg.g.Log())
	}
}

// waitText waits for a message from the bot that reads substr (replies
// are streamed: posted, then updated).
func (tg *teamsGateway) waitText(substr string) teamstest.Activity {
	tg.t.Helper()
	a, err := tg.fake.WaitText(tg.ctx, substr)
	if err != nil {
		tg.t.Fatalf("no message reads %q: %v: %+v\n%s", substr, err, tg.fake.Sent(), tg.g.Log())
	}
	return a
}

// TestTeamsGateway: a personal chat reaches the model and its answer
// arrives; bad tokens are refused and start no turn; an unknown user
// gets a pairing code; a pre_gateway_dispatch skip sends nothing; a
// channel message is answered only when it mentions the bot; lifecycle
// events name the platform "teams"; the app password is not logged.
func TestTeamsGateway(t *testing.T) {
	var mu sync.Mutex
	platforms := map[string][]string{}
	rec := hooks.Plugin{Name: "teams-recorder", Register: func(pc *hooks.PluginContext) error {
		for _, p := range []string{hooks.SessionStartEv, hooks.AgentStartEv, hooks.AgentEndEv} {
			pc.RegisterHook(p, func(ctx context.Context, ev hooks.Event) (any, error) {
				var name string
				switch v := ev.Payload.(type) {
				case *hooks.SessionStart:
					name = v.Platform
				case *hooks.AgentStart:
					name = v.Platform
				case *hooks.AgentEnd:
					name = v.Platform
				}
				mu.Lock()
				platforms[p] = append(platforms[p], name)
				mu.Unlock()
				return nil, nil
			})
		}
		pc.RegisterHook(hooks.PreGatewayDispatchHook, func(ctx context.Context, ev hooks.Event) (any, error) {
			if d, ok := ev.Payload.(*hooks.Dispatch); ok && strings.Contains(d.Message.Text, "secret") {
				return &hooks.DispatchDecision{Action: "skip", Reason: "test"}, nil
			}
			return nil, nil
		})
		return nil
	}}
	model := agenttest.New(t)
	model.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		return agenttest.Reply{Content: "model says: " + req.UserText()}
	}}
	tg := startTeams(t, model, "", "    allowed_users: [aad-ann]\n    unauthorized_dm: pair\n", rec)
	ann := teamstest.User{ID: "29:ann", AAD: "aad-ann", Name: "Ann"}

	// bad tokens: 401, and the model is never asked
	for name, sg := range map[string]teamstest.Signing{
		"bad signature": {WrongKey: true}, "expired": {Expired: true}, "wrong audience": {Audience: "other-app"},
	} {
		if code := tg.post(tg.fake.DM("bad-"+strings.ReplaceAll(name, " ", "-"), ann, "forged "+name), sg); code != http.StatusUnauthorized {
			t.Errorf("%s: answered %d, want 401", name, code)
		}
	}

	// a personal chat: the skip first (nothing sent), then a real turn
	tg.send(tg.fake.DM("act-1", ann, "a secret"))
	tg.send(tg.fake.DM("act-2", ann, "hello from teams"))
	if s := tg.waitText("model says: hello from teams"); s.Conversation != "a:29:ann" || !strings.Contains(s.Text, "model says: hello from teams") {
		t.Fatalf("reply = %+v", s)
	}
	for _, r := range model.Requests() {
		if u := r.UserText(); strings.Contains(u, "forged") || strings.Contains(u, "a secret") {
			t.Errorf("the model was asked %q", u)
		}
	}

	// a stranger gets a pairing code
	tg.send(tg.fake.DM("act-3", teamstest.User{ID: "29:eve", AAD: "aad-eve", Name: "Eve"}, "let me in"))
	if s := tg.waitText("herald pairing approve teams"); s.Conversation != "a:29:eve" {
		t.Fatalf("pairing reply = %+v", s)
	}

	// a channel: unmentioned is ignored, mentioned is answered in its
	// thread
	const channel = "19:general@thread.tacv2"
	tg.send(tg.fake.ChannelMessage("act-4", channel, "act-4", ann, "just chatting", false))
	tg.send(tg.fake.ChannelMessage("act-5", channel, "act-5", ann, "what time is it", true))
	if s := tg.waitText("model says: what time is it"); s.Conversation != channel+";messageid=act-5" {
		t.Fatalf("channel reply = %+v", s)
	}
	if n := len(tg.fake.Sent()); n != 3 {
		t.Errorf("%d messages, want 3: %+v", n, tg.fake.Sent())
	}
	if n := tg.fake.TokenRequests(); n != 1 {
		t.Errorf("%d token requests, want 1 (cached)", n)
	}

	mu.Lock()
	for _, p := range []string{hooks.SessionStartEv, hooks.AgentStartEv, hooks.AgentEndEv} {
		if len(platforms[p]) == 0 {
			t.Errorf("no %s event", p)
		}
		for _, name := range platforms[p] {
			if name != "teams" {
				t.Errorf("%s named platform %q", p, name)
			}
		}
	}
	mu.Unlock()
	if strings.Contains(tg.g.Log(), tg.fake.AppPassword()) {
		t.Error("the app password is in gateway.log")
	}
}

// TestTeamsApprovalButtons: a dangerous command's approval prompt is an
// Adaptive Card with the approval buttons; pressing Approve once (an
// Action.Submit) runs the command once and the card is updated to show
// the decision with its buttons gone.
func TestTeamsApprovalButtons(t *testing.T) {
	work := t.TempDir()
	model := cleaningModel(t)
	tg := startTeams(t, model, "agent:\n  workdir: "+work+"\n", "    allowed_users: [\"*\"]\n")
	ann := teamstest.User{ID: "29:ann", AAD: "aad-ann", Name: "Ann"}
	tg.send(tg.fake.DM("act-1", ann, "please clean a"))
	var prompt teamstest.Activity
	if _, err := tg.fake.WaitFor(tg.ctx, func(sent []teamstest.Activity) bool {
		for _, s := range sent {
			if len(s.Cards()) > 0 {
				prompt = s
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("no card: %v: %+v\n%s", err, tg.fake.Sent(), tg.g.Log())
	}
	var data string
	for _, a := range prompt.Cards()[0].Actions {
		if a.Title == "Approve once" {
			data = a.Data["herald_button"]
		}
	}
	if data == "" {
		t.Fatalf("no Approve once button: %+v", prompt.Cards())
	}
	tg.send(tg.fake.Submit("act-2", "a:29:ann", ann, prompt.ActivityID, map[string]string{"herald_button": data}))
	if u := tg.waitText("Approved once by Ann"); u.ActivityID != prompt.ActivityID || len(u.Attachments) != 0 {
		t.Errorf("closed prompt = %+v", u)
	}
	tg.waitText(`result: {"output":"cleaned-a`)
	data2, _ := os.ReadFile(filepath.Join(work, "ran.log"))
	if got := strings.Fields(string(data2)); len(got) != 1 || got[0] != "a" {
		t.Errorf("ran.log = %q, want the command run once", data2)
	}
}
