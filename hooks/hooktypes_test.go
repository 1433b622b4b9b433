package hooks

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald"
)

// testJudge is the model, faked: fn answers each request.
type testJudge struct {
	mu   sync.Mutex
	reqs []JudgeRequest
	fn   func(ctx context.Context, req JudgeRequest) (string, error)
}

func (j *testJudge) Judge(ctx context.Context, req JudgeRequest) (string, error) {
	j.mu.Lock()
	j.reqs = append(j.reqs, req)
	j.mu.Unlock()
	return j.fn(ctx, req)
}

func (j *testJudge) requests() []JudgeRequest {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]JudgeRequest(nil), j.reqs...)
}

func answering(s string) *testJudge {
	return &testJudge{fn: func(context.Context, JudgeRequest) (string, error) { return s, nil }}
}

// typedRegistry parses a hooks: block and registers it (every entry
// approved) with judge behind prompt and agent entries.
func typedRegistry(t *testing.T, src string, judge Judge, red *herald.Redactor) (*Registry, []RegisterResult) {
	t.Helper()
	specs, warns, _ := ParseShellHooks(yamlNode(t, src))
	for _, w := range warns {
		t.Logf("warning: %s", w)
	}
	reg := NewRegistry(nil)
	t.Cleanup(func() { reg.Close(context.Background()) })
	sh := &ShellHooks{Registry: reg, Runner: &ShellRunner{Environ: os.Environ(), Judge: judge, Redactor: red, Lookup: os.LookupEnv},
		Consent: &Consent{List: Allowlist{Path: filepath.Join(t.TempDir(), AllowlistFile)}, Accept: true}}
	return reg, sh.Register(specs)
}

func toolCall() *PreToolCall {
	return &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": "ls /srv"}, SessionID: "s1", TaskID: "s1", ToolCallID: "c1"}
}

func TestParseTypedEntries(t *testing.T) {
	specs, warns, _ := ParseShellHooks(yamlNode(t, `hooks:
  pre_tool_call:
    - type: http
      url: https://policy.example/check
      headers: {Authorization: "Bearer ${POLICY_TOKEN}"}
      secret: "${POLICY_SECRET}"
      timeout_seconds: 5
      block_on_failure: true
      priority: 100
      matcher: "term*"
    - type: prompt
      prompt: "Refuse writes outside /srv/app. $ARGUMENTS"
      model: gpt-4o-mini
    - type: agent
      prompt: "Look closer. $ARGUMENTS"
      max_iterations: 3
      fail_closed: false
    - type: command
      command: "check.py $ARGUMENTS"
    - type: bogus
      command: x
    - type: http
      url: ftp://example/x
    - type: http
    - type: prompt
      prompt: ""
    - type: agent
      prompt: p
      max_iterations: none
    - type: http
      url: https://example/x
      priority: high
      prompt: stray
  post_llm_call:
    - type: prompt
      prompt: judge the reply
      block_on_failure: true
    - type: http
      url: http://example/log
`))
	byWhere := map[string]ShellSpec{}
	for _, s := range specs {
		byWhere[s.Where] = s
	}
	h := byWhere["hooks.pre_tool_call[0]"]
	if h.Kind() != TypeHTTP || h.URL != "https://policy.example/check" || h.Headers["Authorization"] != "Bearer ${POLICY_TOKEN}" || h.Secret != "${POLICY_SECRET}" ||
		h.Timeout != 5*time.Second || !h.FailClosed || h.Priority != 100 || !h.Matches("terminal") || h.Matches("read_file") {
		t.Errorf("http entry = %+v", h)
	}
	if p := byWhere["hooks.pre_tool_call[1]"]; p.Kind() != TypePrompt || p.Model != "gpt-4o-mini" || !p.FailClosed || p.Timeout != DefaultPromptTimeout || p.Priority != 0 {
		t.Errorf("prompt entry = %+v (block_on_failure defaults to true, timeout to 30 s)", p)
	}
	if a := byWhere["hooks.pre_tool_call[2]"]; a.Kind() != TypeAgent || a.MaxIterations != 3 || a.FailClosed || a.Timeout != DefaultAgentTimeout {
		t.Errorf("agent entry = %+v", a)
	}
	if c := byWhere["hooks.pre_tool_call[3]"]; !c.OpenHarness || c.FailClosed || c.Kind() != TypeCommand {
		t.Errorf("OpenHarness command entry = %+v", c)
	}
	if h := byWhere["hooks.pre_tool_call[9]"]; h.Priority != 0 {
		t.Errorf("a bad priority is 0: %+v", h)
	}
	if p := byWhere["hooks.post_llm_call[0]"]; p.FailClosed {
		t.Errorf("block_on_failure cannot apply on an observer: %+v", p)
	}
	if h := byWhere["hooks.post_llm_call[1]"]; h.FailClosed || h.Timeout != DefaultHTTPTimeout {
		t.Errorf("http defaults: %+v", h)
	}
	for _, gone := range []string{"[4]", "[5]", "[6]", "[7]", "[8]"} {
		if _, ok := byWhere["hooks.pre_tool_call"+gone]; ok {
			t.Errorf("bad entry %s loaded", gone)
		}
	}
	all := strings.Join(warns, "\n")
	for _, want := range []string{
		`config.yaml:20: hooks.pre_tool_call[4].type "bogus" is not one of command, http, prompt, agent; skipped`,
		`config.yaml:22: hooks.pre_tool_call[5].url: "ftp://example/x": only http and https URLs are allowed; skipped`,
		`config.yaml:24: hooks.pre_tool_call[6].url: an http hook needs a url; skipped`,
		`config.yaml:25: hooks.pre_tool_call[7] is a prompt hook without a non-empty 'prompt' field; skipped`,
		`config.yaml:27: hooks.pre_tool_call[8].max_iterations "none" is not a positive whole number; skipped`,
		`config.yaml:30: hooks.pre_tool_call[9].prompt applies to prompt or agent hooks only; ignored`,
		`config.yaml:30: hooks.pre_tool_call[9].priority "high" is not a whole number; using 0`,
		`config.yaml:35: hooks.post_llm_call[0].block_on_failure only applies to pre_tool_call and pre_llm_call`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
}

// policyServer is a local policy service: each path answers one way, and
// every request is checked for its content type and signature.
type policyServer struct {
	*httptest.Server
	secret  string
	hits    atomic.Int64
	badSig  atomic.Int64
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	release chan struct{}
}

func newPolicyServer(t *testing.T, secret string) *policyServer {
	p := &policyServer{secret: secret, release: make(chan struct{})}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.bodies = append(p.bodies, body)
		p.headers = append(p.headers, r.Header.Clone())
		p.mu.Unlock()
		if r.Header.Get("Content-Type") != "application/json" || r.Method != http.MethodPost {
			http.Error(w, "want a JSON POST", 400)
			return
		}
		if p.secret != "" && !hmac.Equal([]byte(r.Header.Get(SignatureHeader)), []byte(Sign(p.secret, body))) {
			p.badSig.Add(1)
			http.Error(w, "bad signature", 401)
			return
		}
		switch r.URL.Path {
		case "/block":
			io.WriteString(w, `{"decision":"block","reason":"policy says no"}`)
		case "/allow":
			io.WriteString(w, `{}`)
		case "/context":
			io.WriteString(w, `{"context":"policy context"}`)
		case "/500":
			http.Error(w, "boom", 500)
		case "/slow":
			select {
			case <-p.release:
			case <-r.Context().Done():
			}
		case "/big":
			w.Write([]byte(`{"context":"`))
			w.Write([]byte(strings.Repeat("x", 5<<20)))
			w.Write([]byte(`"}`))
		}
	}))
	t.Cleanup(func() { close(p.release); p.Close() })
	return p
}

func (p *policyServer) lastBody() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bodies[len(p.bodies)-1]
}

func TestHTTPHookAnswers(t *testing.T) {
	t.Setenv("HERALD_TEST_POLICY_SECRET", "s3cret-for-signing")
	srv := newPolicyServer(t, "s3cret-for-signing")
	other := newPolicyServer(t, "")
	redirect := httptest.NewServer(http.RedirectHandler(other.URL+"/block", http.StatusFound))
	t.Cleanup(redirect.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // nothing listens there any more
	entry := func(url string, extra string) string {
		return fmt.Sprintf("hooks:\n  pre_tool_call:\n    - type: http\n      url: %s\n      secret: ${HERALD_TEST_POLICY_SECRET}\n      allow_private: true\n%s", url, extra)
	}
	for _, tc := range []struct {
		name, src string
		block     string // the block message wanted ("" none)
		fails     string // the failure wanted from Try ("" none)
	}{
		{name: "block", src: entry(srv.URL+"/block", ""), block: "policy says no"},
		{name: "allow", src: entry(srv.URL+"/allow", "")},
		{name: "500 fails open", src: entry(srv.URL+"/500", ""), fails: "answered 500"},
		{name: "500 fails closed", src: entry(srv.URL+"/500", "      block_on_failure: true\n"), fails: "answered 500", block: "failed closed: POST " + srv.URL + "/500: answered 500"},
		{name: "5 MiB answer", src: entry(srv.URL+"/big", "      block_on_failure: true\n"), fails: "answer over 1048576 bytes", block: "answer over 1048576 bytes"},
		{name: "redirect not followed", src: entry(redirect.URL+"/", "      block_on_failure: true\n"), fails: "302 Found; redirects are not followed", block: "redirects are not followed"},
		{name: "unreachable", src: entry(gone.URL+"/x", "      block_on_failure: true\n"), fails: "connection refused", block: "connection refused"},
		{name: "loopback refused", src: strings.Replace(entry(srv.URL+"/block", "      block_on_failure: true\n"), "allow_private: true", "allow_private: false", 1),
			fails: "127.0.0.1 is a loopback address (set allow_private: true", block: "loopback address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, res := typedRegistry(t, tc.src, nil, nil)
			if len(res) != 1 || !res[0].Running {
				t.Fatalf("registered: %+v", res)
			}
			hitsBefore := srv.hits.Load() + other.hits.Load()
			d := reg.PreToolCall(context.Background(), toolCall())
			switch {
			case tc.block == "" && d.Action == "block":
				t.Fatalf("blocked: %+v", d)
			case tc.block != "" && (d.Action != "block" || !strings.Contains(d.Message, tc.block)):
				t.Fatalf("decision = %+v, want a block with %q", d, tc.block)
			}
			if tc.block != "" && tc.fails != "" && !strings.Contains(d.Message, "http ") {
				t.Errorf("the block does not name the hook: %q", d.Message)
			}
			_, err := (&ShellRunner{Lookup: os.LookupEnv}).Try(context.Background(), res[0].Spec, PreToolCallHook, toolCall())
			if (err != nil) != (tc.fails != "") || (err != nil && !strings.Contains(err.Error(), tc.fails)) {
				t.Fatalf("Try: %v, want %q", err, tc.fails)
			}
			if other.hits.Load() != 0 {
				t.Fatal("the redirect was followed")
			}
			if strings.Contains(tc.name, "refused") && srv.hits.Load()+other.hits.Load() != hitsBefore {
				t.Fatal("a refused address was reached")
			}
			if srv.badSig.Load() != 0 {
				t.Fatal("a signature did not verify")
			}
		})
	}
}

func TestHTTPHookContextAndBody(t *testing.T) {
	t.Setenv("HERALD_TEST_POLICY_TOKEN", "tok-abcdef0123456789")
	srv := newPolicyServer(t, "")
	red := herald.NewRedactor("sk-live-0123456789abcdef")
	reg, _ := typedRegistry(t, fmt.Sprintf(`hooks:
  pre_llm_call:
    - type: http
      url: %s/context
      allow_private: true
      headers: {Authorization: "Bearer ${HERALD_TEST_POLICY_TOKEN}", X-Plain: "$HOME"}
`, srv.URL), nil, red)
	p := &PreLLMCall{SessionID: "s1", UserMessage: "my key is sk-live-0123456789abcdef", Platform: "cli"}
	ctx, fb := reg.UserPrompt(context.Background(), p)
	if ctx != "policy context" || fb.Block {
		t.Fatalf("context = %q, feedback %+v", ctx, fb)
	}
	body := srv.lastBody()
	want, _ := ShellPayload(PreLLMCallHook, p)
	want = RedactJSON(red, want)
	if string(body) != string(want) {
		t.Fatalf("body = %s\nwant the shell hook's stdin %s", body, want)
	}
	if strings.Contains(string(body), "sk-live-0123456789abcdef") || strings.Contains(string(body), "tok-abcdef") {
		t.Fatalf("a secret reached the body: %s", body)
	}
	h := srv.headers[len(srv.headers)-1]
	if h.Get("Authorization") != "Bearer tok-abcdef0123456789" || h.Get("X-Plain") != "$HOME" || h.Get(SignatureHeader) != "" {
		t.Fatalf("headers = %v (only ${VAR} is filled in; no signature without a secret)", h)
	}
}

func TestHTTPHookTimeout(t *testing.T) {
	srv := newPolicyServer(t, "")
	specs, _, _ := ParseShellHooks(yamlNode(t, fmt.Sprintf("hooks:\n  pre_tool_call:\n    - {type: http, url: %q, allow_private: true}\n", srv.URL+"/slow")))
	s := specs[0]
	s.Timeout = 100 * time.Millisecond // the server never answers: real time is unavoidable
	_, err := (&ShellRunner{}).Try(context.Background(), s, PreToolCallHook, toolCall())
	if err == nil || !strings.Contains(err.Error(), "no answer within 100ms") {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckHookAddr(t *testing.T) {
	for _, tc := range []struct {
		ip      string
		private bool
		refused bool
	}{
		{"127.0.0.1", false, true}, {"127.0.0.1", true, false}, {"::1", false, true},
		{"::ffff:127.0.0.1", false, true}, {"169.254.10.1", false, true}, {"fe80::1", false, true},
		{"0.0.0.0", false, true}, {"10.1.2.3", false, true}, {"192.168.1.1", false, true}, {"100.64.0.1", false, true},
		{"fd12::1", false, true}, {"10.1.2.3", true, false},
		{"169.254.169.254", true, true}, {"::ffff:169.254.169.254", true, true}, {"100.100.100.200", true, true},
		{"93.184.216.34", false, false}, {"2606:4700::1", false, false},
	} {
		err := CheckHookAddr(netip.MustParseAddr(tc.ip), tc.private)
		if (err != nil) != tc.refused || (err != nil && !errors.Is(err, ErrRefusedAddress)) {
			t.Errorf("%s (allow_private %v): %v", tc.ip, tc.private, err)
		}
	}
}

func TestParseVerdict(t *testing.T) {
	for _, tc := range []struct {
		in     string
		ok     bool
		reason string
		err    bool
	}{
		{in: `{"ok": true}`, ok: true},
		{in: `{"ok": false, "reason": "writes outside /srv/app"}`, reason: "writes outside /srv/app"},
		{in: "Sure.\n```json\n{\"ok\": false, \"reason\": \"no\"}\n```\nHope that helps.", reason: "no"},
		{in: "```\n{\"ok\":true}\n```", ok: true},
		{in: `I think {"note": 1} then {"ok": false, "reason": "x"} is it`, reason: "x"},
		{in: `{"ok": "yes"}`, err: true},
		{in: "I cannot decide.", err: true},
		{in: "", err: true},
		{in: `{"ok": false, "reason": {"why": 1}}`, reason: `{"why": 1}`},
	} {
		ok, reason, err := ParseVerdict(tc.in)
		if ok != tc.ok || reason != tc.reason || (err != nil) != tc.err {
			t.Errorf("ParseVerdict(%q) = %v %q %v", tc.in, ok, reason, err)
		}
	}
}

func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{`{"ok": true}`, "```json\n{\"ok\":false,\"reason\":\"r\"}\n```", "{{{{", `{"ok":false,"reason":null}`, "prose {\"a\":[{\"ok\":true}]}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ok, reason, err := ParseVerdict(s)
		if err != nil && (ok || reason != "") {
			t.Fatalf("error with a verdict: %v %q %v", ok, reason, err)
		}
		if err == nil && !strings.Contains(s, "ok") {
			t.Fatalf("a verdict from an answer without ok: %q", s)
		}
	})
}

func TestFnmatch(t *testing.T) {
	for _, tc := range []struct {
		pat, s string
		want   bool
	}{
		{"term*", "terminal", true}, {"*", "a/b", true}, {"read_?ile", "read_file", true}, {"[rw]*", "write_file", true},
		{"[!rw]*", "write_file", false}, {"bash", "terminal", false}, {"a.b", "axb", false}, {"[", "[", true}, {"[]]", "]", true},
		{"*rm -rf*", "please rm -rf /", true},
	} {
		re, err := Fnmatch(tc.pat)
		if err != nil {
			t.Fatalf("%q: %v", tc.pat, err)
		}
		if re.MatchString(tc.s) != tc.want {
			t.Errorf("fnmatch(%q, %q) != %v", tc.s, tc.pat, tc.want)
		}
	}
}

func TestPromptHookVerdicts(t *testing.T) {
	slow := &testJudge{fn: func(ctx context.Context, _ JudgeRequest) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}
	for _, tc := range []struct {
		name  string
		judge *testJudge
		block string // "" no block
	}{
		{"refuses", answering(`{"ok": false, "reason": "writes outside /srv/app"}`), "writes outside /srv/app"},
		{"allows in a fence", answering("Here you go:\n```json\n{\"ok\": true}\n```"), ""},
		{"refuses in a fence", answering("```json\n{\"ok\": false, \"reason\": \"fenced no\"}\n```"), "fenced no"},
		{"garbage fails closed", answering("I am not sure what you mean."), `failed closed: the model's answer has no {"ok": …} verdict`},
		{"error fails closed", &testJudge{fn: func(context.Context, JudgeRequest) (string, error) { return "", errors.New("model unreachable") }}, "failed closed: model: model unreachable"},
		{"slow times out", slow, "failed closed: no answer within 30s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reg, res := typedRegistry(t, `hooks:
  pre_tool_call:
    - type: prompt
      prompt: "Refuse any command that writes outside /srv/app. $ARGUMENTS"
      model: small-model
`, tc.judge, nil)
				if !res[0].Running {
					t.Fatalf("not running: %+v", res[0])
				}
				start := time.Now()
				d := reg.PreToolCall(context.Background(), toolCall())
				if tc.block == "" && d.Action == "block" || tc.block != "" && (d.Action != "block" || !strings.Contains(d.Message, tc.block)) {
					t.Fatalf("decision = %+v, want block %q", d, tc.block)
				}
				if tc.judge == slow && time.Since(start) != DefaultPromptTimeout {
					t.Errorf("timed out after %s", time.Since(start))
				}
				req := tc.judge.requests()[0]
				payload, _ := ShellPayload(PreToolCallHook, toolCall())
				if req.Kind != TypePrompt || req.Model != "small-model" || req.Event != PreToolCallHook || req.SessionID != "s1" ||
					req.Prompt != "Refuse any command that writes outside /srv/app. "+string(payload) || !strings.Contains(req.System, `{"ok": false, "reason"`) {
					t.Fatalf("request = %+v", req)
				}
			})
		})
	}
}

func TestPromptHookEvents(t *testing.T) {
	no := `{"ok": false, "reason": "not today"}`
	t.Run("pre_llm_call blocks the prompt", func(t *testing.T) {
		reg, _ := typedRegistry(t, "hooks:\n  user_prompt_submit:\n    - {type: agent, prompt: check this}\n", answering(no), nil)
		_, fb := reg.UserPrompt(context.Background(), &PreLLMCall{SessionID: "s1", UserMessage: "hi"})
		if !fb.Block || fb.Reason != "not today" {
			t.Fatalf("feedback = %+v", fb)
		}
	})
	t.Run("agent request", func(t *testing.T) {
		j := answering(`{"ok": true}`)
		reg, _ := typedRegistry(t, "hooks:\n  pre_tool_call:\n    - {type: agent, prompt: check this}\n", j, nil)
		reg.PreToolCall(context.Background(), toolCall())
		req := j.requests()[0]
		if req.Kind != TypeAgent || req.MaxIterations != DefaultMaxIterations || !strings.HasPrefix(req.Prompt, "check this\n\n{\"hook_event_name\":\"pre_tool_call\"") {
			t.Fatalf("request = %+v (no $ARGUMENTS: the payload is appended)", req)
		}
	})
	t.Run("command denied", func(t *testing.T) {
		reg, _ := typedRegistry(t, "hooks:\n  command:new:\n    - {type: prompt, prompt: may they reset}\n", answering(no), nil)
		if out := reg.Command(context.Background(), &Command{Command: "new", RawCommand: "/new"}); out.Decision != "deny" || out.Reply != "not today" {
			t.Fatalf("outcome = %+v", out)
		}
	})
	t.Run("observer only logs", func(t *testing.T) {
		j := answering(no)
		reg, _ := typedRegistry(t, "hooks:\n  post_tool_call:\n    - {type: prompt, prompt: was that fine}\n", j, nil)
		fb := reg.Feedback(context.Background(), PostToolCallHook, &ToolResult{ToolName: "terminal", SessionID: "s1"})
		if !fb.Empty() || len(j.requests()) != 1 {
			t.Fatalf("feedback = %+v after %d calls", fb, len(j.requests()))
		}
	})
	t.Run("post_compact takes the text", func(t *testing.T) {
		// post_compact is not in this catalogue yet: the handler is run
		// the way the registry will run it once the event is emitted
		j := answering("Keep: never write outside /srv/app.")
		h := (&ShellRunner{Judge: j}).Handler(ShellSpec{Event: "post_compact", Timeout: time.Second,
			TypeSpec: TypeSpec{Type: TypePrompt, Prompt: "Which rules must survive? $ARGUMENTS"}})
		v, err := h(context.Background(), Event{Name: "post_compact", Payload: map[string]any{"session_id": "s1"}})
		if fb, ok := v.(*Feedback); err != nil || !ok || fb.Context != "Keep: never write outside /srv/app." {
			t.Fatalf("answer = %#v, %v", v, err)
		}
		if req := j.requests()[0]; strings.Contains(req.System, `"ok"`) || req.Event != "post_compact" {
			t.Fatalf("request = %+v (free text asked)", req)
		}
		if s := (ShellSpec{Event: "post_compact", TypeSpec: TypeSpec{Type: TypePrompt}}); !s.Inline() {
			t.Fatal("a prompt hook on post_compact must be called in line, for its text")
		}
	})
}

func TestPromptHookWithoutJudge(t *testing.T) {
	reg, res := typedRegistry(t, `hooks:
  pre_tool_call:
    - {type: prompt, prompt: check}
  post_llm_call:
    - {type: prompt, prompt: check}
`, nil, nil)
	if !res[0].Blocker || res[0].Running || !strings.Contains(res[0].Warning, "config.yaml:3: hooks.pre_tool_call[0]: prompt hook cannot load: no model to ask") {
		t.Fatalf("pre_tool_call: %+v", res[0])
	}
	if res[1].Blocker || res[1].Running || !strings.Contains(res[1].Warning, "config.yaml:5: hooks.post_llm_call[0]: prompt hook cannot load") {
		t.Fatalf("post_llm_call: %+v", res[1])
	}
	if d := reg.PreToolCall(context.Background(), toolCall()); d.Action != "block" || !strings.Contains(d.Message, "no model to ask") {
		t.Fatalf("a block_on_failure prompt hook that cannot run must block: %+v", d)
	}
}

func TestBlockOnFailureByTypeAndEvent(t *testing.T) {
	srv := newPolicyServer(t, "")
	failing := &testJudge{fn: func(context.Context, JudgeRequest) (string, error) { return "", errors.New("down") }}
	entries := map[string]string{
		TypeCommand: "{command: \"false\"",
		TypeHTTP:    fmt.Sprintf("{type: http, url: %q, allow_private: true", srv.URL+"/500"),
		TypePrompt:  "{type: prompt, prompt: p",
		TypeAgent:   "{type: agent, prompt: p",
	}
	for typ, entry := range entries {
		for _, bof := range []string{"", "true", "false"} {
			for _, event := range []string{PreToolCallHook, PreLLMCallHook, PreGatewayDispatchHook} {
				name := fmt.Sprintf("%s/%s/block_on_failure=%q", typ, event, bof)
				t.Run(name, func(t *testing.T) {
					e := entry
					if bof != "" {
						e += ", block_on_failure: " + bof
					}
					reg, _ := typedRegistry(t, fmt.Sprintf("hooks:\n  %s:\n    - %s}\n", event, e), failing, nil)
					want := (bof == "true" || bof == "" && DefaultBlockOnFailure(typ)) && CanBlockOnFailure(event)
					var blocked bool
					var reason string
					switch event {
					case PreToolCallHook:
						d := reg.PreToolCall(context.Background(), toolCall())
						blocked, reason = d.Action == "block", d.Message
					case PreLLMCallHook:
						_, fb := reg.UserPrompt(context.Background(), &PreLLMCall{SessionID: "s1", UserMessage: "hi"})
						blocked, reason = fb.Block, fb.Reason
					case PreGatewayDispatchHook:
						blocked = reg.PreGatewayDispatch(context.Background(), &Dispatch{}).Action != ""
					}
					if blocked != want {
						t.Fatalf("blocked = %v (%q), want %v", blocked, reason, want)
					}
					if blocked && !strings.Contains(reason, "failed closed") {
						t.Fatalf("reason %q does not name the hook and its failure", reason)
					}
				})
			}
		}
	}
}

func TestOpenHarnessArguments(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	specs, warns, _ := ParseShellHooks(yamlNode(t, `hooks:
  pre_tool_call:
    - type: command
      command: "printf '%s' $ARGUMENTS; printf '\n%s\n%s' \"$OPENHARNESS_HOOK_EVENT\" \"$OPENHARNESS_HOOK_PAYLOAD\""
`))
	if len(specs) != 1 || !specs[0].OpenHarness {
		t.Fatalf("specs = %+v %v", specs, warns)
	}
	evil := fmt.Sprintf("it's \"quoted\" $(touch %s) `touch %s` ; touch %s\nline two '\\''", marker, marker, marker)
	p := &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": evil}, SessionID: "s1"}
	payload, _ := ShellPayload(PreToolCallHook, p)
	call, err := specs[0].ForCall(PreToolCallHook, payload)
	if err != nil {
		t.Fatal(err)
	}
	res := (&ShellRunner{Environ: os.Environ()}).Run(context.Background(), &call, payload)
	want := string(payload) + "\n" + PreToolCallHook + "\n" + string(payload)
	if res.Exit != 0 || string(res.Stdout) != want {
		t.Fatalf("exit %d, stdout %q\nwant %q\nstderr %s", res.Exit, res.Stdout, want, res.Stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the payload was executed")
	}
	// exit 0 with plain text is OpenHarness' success: no opinion
	if v, err := call.Answer(res); v != nil || err != nil {
		t.Fatalf("answer = %v, %v", v, err)
	}
	big := []byte(`"` + strings.Repeat("x", 200<<10) + `"`)
	if _, err := specs[0].ForCall(PreToolCallHook, big); err == nil || !strings.Contains(err.Error(), "read the payload from stdin") {
		t.Fatalf("an oversized payload: %v", err)
	}
}

func TestConsentForTypedEntries(t *testing.T) {
	dir := t.TempDir()
	list := Allowlist{Path: filepath.Join(dir, AllowlistFile)}
	reg := NewRegistry(nil)
	defer reg.Close(context.Background())
	srv := newPolicyServer(t, "")
	src := fmt.Sprintf("hooks:\n  post_tool_call:\n    - {type: http, url: %q, allow_private: true}\n    - {type: prompt, prompt: judge it}\n", srv.URL+"/allow")
	specs, _, _ := ParseShellHooks(yamlNode(t, src))
	sh := &ShellHooks{Registry: reg, Runner: &ShellRunner{Judge: answering(`{"ok":true}`)}, Consent: &Consent{List: list}}
	res := sh.Register(specs)
	httpKey := "http:" + srv.URL + "/allow"
	if res[0].Running || !strings.Contains(res[0].Warning, fmt.Sprintf("herald hooks allow post_tool_call %q", httpKey)) {
		t.Fatalf("an http entry needs consent: %+v", res[0])
	}
	if res[1].Running || !strings.Contains(res[1].Warning, "prompt:sha256:") {
		t.Fatalf("a prompt entry needs consent: %+v", res[1])
	}
	if err := list.Approve(PostToolCallHook, httpKey); err != nil {
		t.Fatal(err)
	}
	if err := list.Approve(PostToolCallHook, specs[1].Key()); err != nil {
		t.Fatal(err)
	}
	res = sh.Register(specs)
	if !res[0].Running || !res[1].Running {
		t.Fatalf("approved entries: %+v", res)
	}
	// an edited prompt is another key: not approved
	edited := specs[1]
	edited.Prompt = "judge it harder"
	if _, err := sh.Consent.Check(&edited); !errors.Is(err, ErrNotApproved) {
		t.Fatalf("an edited prompt kept its approval: %v", err)
	}
	if e, _ := list.Find(PostToolCallHook, httpKey); e.ScriptSHA256 != ScriptHash(httpKey) {
		t.Fatalf("entry = %+v", e)
	}
}

// orderLog records starts and ends across hooks of every kind.
type orderLog struct {
	mu  sync.Mutex
	log []string
}

func (o *orderLog) add(s string) {
	o.mu.Lock()
	o.log = append(o.log, s)
	o.mu.Unlock()
}

func (o *orderLog) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.log, " ")
}

func (o *orderLog) index(s string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, x := range o.log {
		if x == s {
			return i
		}
	}
	return -1
}

// Go plugins, an http hook and a prompt hook on one event: priorities in
// descending order, a level only after the one above answered, equal
// priorities side by side.
func TestPriorityOrderMixedTypes(t *testing.T) {
	var order orderLog
	judgeIn, httpIn := make(chan struct{}), make(chan struct{})
	waitFor := func(c chan struct{}) bool {
		select {
		case <-c:
			return true
		case <-time.After(10 * time.Second):
			return false
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		order.add("http:start")
		close(httpIn)
		if !waitFor(judgeIn) { // the prompt hook of the same priority runs beside it
			order.add("http:alone")
		}
		order.add("http:end")
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	judge := &testJudge{fn: func(ctx context.Context, _ JudgeRequest) (string, error) {
		order.add("prompt:start")
		close(judgeIn)
		if !waitFor(httpIn) {
			order.add("prompt:alone")
		}
		order.add("prompt:end")
		return `{"ok": true}`, nil
	}}
	reg, _ := typedRegistry(t, fmt.Sprintf(`hooks:
  pre_tool_call:
    - {type: prompt, prompt: p, priority: 5}
    - {type: http, url: %q, allow_private: true, priority: 5}
`, srv.URL), judge, nil)
	plugin := func(name string, prio int) Plugin {
		return Plugin{Name: name, Priority: prio, Register: func(c *PluginContext) error {
			c.RegisterHook(PreToolCallHook, func(ctx context.Context, ev Event) (any, error) {
				order.add(name + ":start")
				order.add(name + ":end")
				return nil, nil
			})
			return nil
		}}
	}
	reg.LoadPlugins(plugin("low", -1), plugin("high", 10), plugin("mid", 5))
	if d := reg.PreToolCall(context.Background(), toolCall()); d.Action != "" {
		t.Fatalf("decision = %+v", d)
	}
	got := order.String()
	if strings.Contains(got, "alone") {
		t.Fatalf("equal priorities did not run side by side: %s", got)
	}
	before := func(a, b string) {
		if ia, ib := order.index(a), order.index(b); ia < 0 || ib < 0 || ia > ib {
			t.Errorf("%s should come before %s: %s", a, b, got)
		}
	}
	before("high:end", "mid:start")
	before("high:end", "http:start")
	before("high:end", "prompt:start")
	before("mid:end", "http:start") // a Go callback before the out-of-process ones of its level
	before("http:end", "low:start")
	before("prompt:end", "low:start")
}

// A block ends the chain at an event that can block; on an observer
// every level runs. The levels wait for one another in (fake) time.
func TestPriorityBlockEndsChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var order orderLog
		judge := &testJudge{fn: func(ctx context.Context, req JudgeRequest) (string, error) {
			order.add(req.Prompt[:2] + ":start")
			time.Sleep(time.Second)
			order.add(req.Prompt[:2] + ":end")
			if strings.HasPrefix(req.Prompt, "hi") {
				return `{"ok": false, "reason": "high says no"}`, nil
			}
			return `{"ok": true}`, nil
		}}
		src := `hooks:
  %s:
    - {type: prompt, prompt: "lo", priority: -3}
    - {type: prompt, prompt: "hi", priority: 7}
`
		reg, _ := typedRegistry(t, fmt.Sprintf(src, PreToolCallHook), judge, nil)
		start := time.Now()
		if d := reg.PreToolCall(context.Background(), toolCall()); d.Action != "block" || d.Message != "high says no" {
			t.Fatalf("decision = %+v", d)
		}
		if got := order.String(); got != "hi:start hi:end" || time.Since(start) != time.Second {
			t.Fatalf("order %q after %s: the lower priority must be skipped", got, time.Since(start))
		}
		order.log = nil
		reg2, _ := typedRegistry(t, fmt.Sprintf(src, PostToolCallHook), judge, nil)
		start = time.Now()
		reg2.Feedback(context.Background(), PostToolCallHook, &ToolResult{ToolName: "terminal"})
		if got := order.String(); got != "hi:start hi:end lo:start lo:end" || time.Since(start) != 2*time.Second {
			t.Fatalf("order %q after %s: on an observer every level runs, one after the other", got, time.Since(start))
		}
	})
}

// BenchmarkHTTPHook is one http hook round trip against a local server,
// beside a bare net/http POST of the same payload to the same server, the
// two interleaved so that load on the machine weighs on both alike. It
// reports each one's time per call and their ratio (what the hook adds:
// the payload built and masked, the signature, the answer parsed, the
// registry's call).
func BenchmarkHTTPHook(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"decision":"allow"}`)
	}))
	defer srv.Close()
	specs, _, _ := ParseShellHooks(yamlNode(b, fmt.Sprintf("hooks:\n  pre_tool_call:\n    - {type: http, url: %q, allow_private: true, secret: s}\n", srv.URL)))
	reg := NewRegistry(nil)
	defer reg.Close(context.Background())
	sh := &ShellHooks{Registry: reg, Runner: &ShellRunner{}, Consent: &Consent{List: Allowlist{Path: filepath.Join(b.TempDir(), AllowlistFile)}, Accept: true}}
	sh.Register(specs)
	p := toolCall()
	body, _ := ShellPayload(PreToolCallHook, p)
	c := &http.Client{}
	bare := func() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var v map[string]any
		json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
	}
	bare()
	reg.PreToolCall(context.Background(), p) // both connections open
	var hookTime, bareTime time.Duration
	for b.Loop() {
		t0 := time.Now()
		reg.PreToolCall(context.Background(), p)
		t1 := time.Now()
		bare()
		hookTime += t1.Sub(t0)
		bareTime += time.Since(t1)
	}
	b.ReportMetric(float64(hookTime.Nanoseconds())/float64(b.N), "hook-ns/op")
	b.ReportMetric(float64(bareTime.Nanoseconds())/float64(b.N), "bare-ns/op")
	b.ReportMetric(float64(hookTime)/float64(bareTime), "ratio")
}

func FuzzFnmatch(f *testing.F) {
	for _, s := range []string{"term*", "[!rw]*", "[]]", "[", "a?b", `\[x]`, "[^a]"} {
		f.Add(s, "terminal")
	}
	f.Fuzz(func(t *testing.T, pat, s string) {
		re, err := Fnmatch(pat)
		if err != nil {
			return
		}
		re.MatchString(s)
		if !strings.ContainsAny(pat, "*?[") && !re.MatchString(pat) {
			t.Fatalf("a pattern with no wildcard does not match itself: %q", pat)
		}
	})
}
