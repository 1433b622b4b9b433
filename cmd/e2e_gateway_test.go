package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd"
)

// gatewayProc is a gateway started through cmd.Main in this process, with
// the real local adapter on 127.0.0.1.
type gatewayProc struct {
	t      *testing.T
	home   string
	addr   string
	token  string
	cancel context.CancelFunc
	done   chan int
	out    *syncBuf
	errw   *syncBuf
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func startGateway(t *testing.T, home string, env map[string]string) *gatewayProc {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	env["HERALD_HOME"] = home
	if env["HERALD_LOCAL_LISTEN"] == "" {
		env["HERALD_LOCAL_LISTEN"] = "127.0.0.1:0"
	}
	os.Remove(filepath.Join(home, "local.addr"))
	ctx, cancel := context.WithCancel(context.Background())
	g := &gatewayProc{t: t, home: home, cancel: cancel, done: make(chan int, 1), out: &syncBuf{}, errw: &syncBuf{}}
	go func() {
		g.done <- cmd.Main(ctx, []string{"gateway"}, cmd.WithStdio(strings.NewReader(""), g.out, g.errw), cmd.WithGetenv(func(k string) string { return env[k] }))
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(home, "local.addr"))
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			g.addr = strings.TrimSpace(string(b))
			break
		}
		select {
		case code := <-g.done:
			t.Fatalf("gateway exited with %d before listening:\n%s\n%s", code, g.out, g.errw)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not start:\n%s", g.errw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tok, err := os.ReadFile(filepath.Join(home, "local.token"))
	if err != nil {
		t.Fatal(err)
	}
	g.token = strings.TrimSpace(string(tok))
	t.Cleanup(func() { g.stop() })
	return g
}

func (g *gatewayProc) stop() int {
	if g.cancel == nil {
		return 0
	}
	g.cancel()
	g.cancel = nil
	select {
	case code := <-g.done:
		return code
	case <-time.After(30 * time.Second):
		g.t.Fatalf("gateway did not stop")
	}
	return -1
}

type msgResp struct {
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
	Replies   []struct {
		Text string `json:"text"`
	} `json:"replies"`
	Error string `json:"error"`
}

func (g *gatewayProc) post(t *testing.T, body string, hdr map[string]string) (int, msgResp) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+g.addr+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+g.token)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out msgResp
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("response %d is not JSON: %q", res.StatusCode, b)
	}
	return res.StatusCode, out
}

func (g *gatewayProc) say(t *testing.T, chat, text string) msgResp {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"chat_id": chat, "user_id": "u-" + chat, "user_name": "Ann", "chat_type": "dm", "text": text})
	code, r := g.post(t, string(b), nil)
	if code != 200 {
		t.Fatalf("POST /v1/messages = %d %+v", code, r)
	}
	return r
}

func TestGatewayEchoReply(t *testing.T) {
	g := startGateway(t, t.TempDir(), nil)
	r := g.say(t, "c1", "hi")
	if r.Status != "done" || len(r.Replies) != 1 || !strings.Contains(r.Replies[0].Text, "hi") || !strings.Contains(r.Replies[0].Text, "echo") {
		t.Fatalf("reply = %+v", r)
	}
	if r.SessionID == "" {
		t.Fatal("no session id")
	}
	if !strings.Contains(g.out.String(), "listening on http://"+g.addr) || !strings.Contains(g.out.String(), "local.token") {
		t.Fatalf("startup output does not say where it listens and where the token is:\n%s", g.out)
	}
	if !strings.Contains(g.errw.String(), "offline echo model") {
		t.Fatalf("no offline warning:\n%s", g.errw)
	}
	res, err := http.Get("http://" + g.addr + "/healthz")
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
	if code := g.stop(); code != 0 {
		t.Fatalf("exit status after shutdown = %d", code)
	}
	if b, _ := os.ReadFile(filepath.Join(g.home, "logs", "gateway.log")); !strings.Contains(string(b), "gateway started") {
		t.Fatalf("gateway.log lacks the start line:\n%s", b)
	}
}

func TestGatewayBadInput(t *testing.T) {
	g := startGateway(t, t.TempDir(), nil)
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
			code, r := g.post(t, tc.body, tc.hdr)
			if code != tc.status || !strings.Contains(r.Error, tc.errHas) {
				t.Fatalf("got %d %q, want %d containing %q", code, r.Error, tc.status, tc.errHas)
			}
		})
	}
	// the gateway still serves after all that
	if r := g.say(t, "c2", "still there?"); r.Status != "done" {
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
	startGateway(t, home, nil)
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
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"fake","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
			fmt.Sprintf("model saw %d messages; last: %s", len(msgs), text))
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
	g := startGateway(t, home, fm.env())
	r := g.say(t, "c1", "first message")
	if len(r.Replies) != 1 || !strings.Contains(r.Replies[0].Text, "model saw 1 messages") {
		t.Fatalf("first reply = %+v", r)
	}
	g.stop()

	g2 := startGateway(t, home, fm.env())
	r2 := g2.say(t, "c1", "second message")
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
	g := startGateway(t, t.TempDir(), fm.env())
	slow := make(chan msgResp, 1)
	go func() {
		b, _ := json.Marshal(map[string]string{"chat_id": "slowchat", "user_id": "u1", "text": "please be slow"})
		_, r := g.post(t, string(b), nil)
		slow <- r
	}()
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
		if r := g.say(t, fmt.Sprintf("fast%d", i), "quick"); r.Status != "done" {
			t.Fatalf("fast chat: %+v", r)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("other chats waited %s behind the slow one", d)
	}
	select {
	case r := <-slow:
		t.Fatalf("slow chat finished before release: %+v", r)
	default:
	}
	close(fm.release)
	if r := <-slow; r.Status != "done" {
		t.Fatalf("slow chat: %+v", r)
	}
}
