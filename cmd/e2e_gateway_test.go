package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

func TestGatewayEchoReply(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{Home: t.TempDir()})
	r := g.Say(t, "c1", "hi")
	if r.Status != "done" || len(r.Replies) != 1 || !strings.Contains(r.Replies[0].Text, "hi") || !strings.Contains(r.Replies[0].Text, "echo") {
		t.Fatalf("reply = %+v", r)
	}
	if r.SessionID == "" {
		t.Fatal("no session id")
	}
	if !strings.Contains(g.Stdout.String(), "listening on http://"+g.Addr) || !strings.Contains(g.Stdout.String(), "local.token") {
		t.Fatalf("startup output does not say where it listens and where the token is:\n%s", g.Stdout)
	}
	if !strings.Contains(g.Stderr.String(), "offline echo model") {
		t.Fatalf("no offline warning:\n%s", g.Stderr)
	}
	res, err := http.Get("http://" + g.Addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Status    string            `json:"status"`
		Platforms map[string]string `json:"platforms"`
	}
	json.NewDecoder(res.Body).Decode(&h)
	res.Body.Close()
	if h.Status != "ok" || h.Platforms["local"] != "connected" {
		t.Fatalf("healthz = %+v", h)
	}
	if code := g.Stop(); code != 0 {
		t.Fatalf("exit status after shutdown = %d", code)
	}
	if b, _ := os.ReadFile(filepath.Join(g.Home, "logs", "gateway.log")); !strings.Contains(string(b), "gateway started") {
		t.Fatalf("gateway.log lacks the start line:\n%s", b)
	}
}

func TestGatewayBadInput(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{Home: t.TempDir()})
	for _, tc := range []struct {
		name   string
		body   string
		hdr    map[string]string
		status int
		errHas string
	}{
		{"bad json", `{"chat_id":`, nil, 400, "not valid JSON"},
		{"no chat", `{"text":"x"}`, nil, 400, "chat_id"},
		{"no token", `{"chat_id":"c","text":"x"}`, map[string]string{"Authorization": ""}, 401, "token"},
		{"wrong token", `{"chat_id":"c","text":"x"}`, map[string]string{"Authorization": "Bearer nope"}, 401, "token"},
		{"too big", `{"chat_id":"c","text":"` + strings.Repeat("x", 1<<20+10) + `"}`, nil, 413, "over"},
		{"rebinding host", `{"chat_id":"c","text":"x"}`, map[string]string{"Host": "attacker.example:8642"}, 403, "not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, r := g.Post(t, tc.body, tc.hdr)
			if code != tc.status || !strings.Contains(r.Error, tc.errHas) {
				t.Fatalf("got %d %q, want %d containing %q", code, r.Error, tc.status, tc.errHas)
			}
		})
	}
	// the gateway still serves after all that
	if r := g.Say(t, "c2", "still there?"); r.Status != "done" {
		t.Fatalf("after bad input: %+v", r)
	}
}

func TestConfigErrorsExit2(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"malformed", "platforms: [\n", "config.yaml:"},
		{"wrong type", "agent:\n  max_iterations: many\n", "config.yaml:2:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			os.WriteFile(filepath.Join(home, "config.yaml"), []byte(tc.yaml), 0o600)
			var out, errw bytes.Buffer
			code := cmd.Main(context.Background(), []string{"--home", home, "gateway"}, cmd.WithStdio(strings.NewReader(""), &out, &errw), cmd.WithGetenv(func(string) string { return "" }))
			if code != 2 || !strings.Contains(errw.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q", code, errw.String())
			}
		})
	}
}

func TestSecondGatewayNamesTheFirst(t *testing.T) {
	home := t.TempDir()
	cmdtest.Start(t, cmdtest.Options{Home: home})
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), []string{"gateway"}, cmd.WithStdio(strings.NewReader(""), &out, &errw),
		cmd.WithGetenv(func(k string) string {
			return map[string]string{"HERALD_HOME": home, "HERALD_LOCAL_LISTEN": "127.0.0.1:0"}[k]
		}))
	if code != 1 || !strings.Contains(errw.String(), "already running") || !strings.Contains(errw.String(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second gateway: exit %d, %q", code, errw.String())
	}
}

// fakeModel is an OpenAI-compatible chat-completions server on 127.0.0.1.
// A user message containing "slow" is held until release is closed.
type fakeModel struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []map[string]any
	auth    []string
	release chan struct{}
}

func newFakeModel(t *testing.T) *fakeModel {
	f := &fakeModel{release: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		msgs, _ := req["messages"].([]any)
		last, _ := msgs[len(msgs)-1].(map[string]any)
		text, _ := last["content"].(string)
		if strings.Contains(text, "slow") {
			select {
			case <-f.release:
			case <-r.Context().Done():
				return
			}
		}
		answer := fmt.Sprintf("model saw %d messages; last: %s", len(msgs), text)
		if req["stream"] == true {
			// the local platform streams replies, as OpenAI's servers do
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fake\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%q},\"finish_reason\":\"stop\"}]}\n\n", answer)
			fmt.Fprint(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fake\",\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"fake","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, answer)
	}))
	t.Cleanup(func() {
		select {
		case <-f.release:
		default:
			close(f.release)
		}
		f.srv.Close()
	})
	return f
}

func (f *fakeModel) env() map[string]string {
	return map[string]string{"OPENAI_BASE_URL": f.srv.URL + "/v1", "OPENAI_API_KEY": "sk-test-key-0123456789abcdef", "HERALD_MODEL": "fake-model"}
}

func TestGatewayModelPathAndHistoryAcrossRestart(t *testing.T) {
	fm := newFakeModel(t)
	home := t.TempDir()
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: fm.env()})
	r := g.Say(t, "c1", "first message")
	if len(r.Replies) != 1 || !strings.Contains(r.Replies[0].Text, "model saw 1 messages") {
		t.Fatalf("first reply = %+v", r)
	}
	g.Stop()

	g2 := cmdtest.Start(t, cmdtest.Options{Home: home, Env: fm.env()})
	r2 := g2.Say(t, "c1", "second message")
	if r2.SessionID != r.SessionID {
		t.Fatalf("session changed across restart: %s → %s", r.SessionID, r2.SessionID)
	}
	// history: first user message, first reply, second user message
	if len(r2.Replies) != 1 || !strings.Contains(r2.Replies[0].Text, "model saw 3 messages") {
		t.Fatalf("second reply = %+v", r2)
	}
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if fm.auth[0] != "Bearer sk-test-key-0123456789abcdef" {
		t.Fatalf("Authorization = %q", fm.auth[0])
	}
	if fm.reqs[0]["model"] != "fake-model" {
		t.Fatalf("model = %v", fm.reqs[0]["model"])
	}
	// the API key never reaches the log
	b, _ := os.ReadFile(filepath.Join(home, "logs", "gateway.log"))
	if strings.Contains(string(b), "sk-test-key-0123456789abcdef") {
		t.Fatal("the API key is in gateway.log")
	}
}

func TestSlowChatDoesNotBlockOthers(t *testing.T) {
	fm := newFakeModel(t)
	g := cmdtest.Start(t, cmdtest.Options{Home: t.TempDir(), Env: fm.env()})
	b, _ := json.Marshal(map[string]string{"chat_id": "slowchat", "user_id": "u1", "text": "please be slow"})
	slow := g.PostAsync(string(b), nil)
	// wait until the slow request reached the model
	deadline := time.Now().Add(10 * time.Second)
	for {
		fm.mu.Lock()
		n := len(fm.reqs)
		fm.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("slow request never reached the model")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	for i := 0; i < 5; i++ {
		if r := g.Say(t, fmt.Sprintf("fast%d", i), "quick"); r.Status != "done" {
			t.Fatalf("fast chat: %+v", r)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("other chats waited %s behind the slow one", d)
	}
	select {
	case <-slow.Done():
		_, r := slow.Wait(t)
		t.Fatalf("slow chat finished before release: %+v", r)
	default:
	}
	close(fm.release)
	if _, r := slow.Wait(t); r.Status != "done" {
		t.Fatalf("slow chat: %+v", r)
	}
}
