package cmd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd"
)

func run(t *testing.T, home string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), append([]string{"--home", home}, args...), cmd.WithStdio(strings.NewReader(stdin), &out, &errw), cmd.WithGetenv(func(string) string { return "" }))
	return code, out.String(), errw.String()
}

func TestChatOneShotAndSessionsList(t *testing.T) {
	home := t.TempDir()
	code, out, errw := run(t, home, "", "chat", "-q", "hello from the terminal")
	if code != 0 || !strings.Contains(out, "[echo model — offline] hello from the terminal") {
		t.Fatalf("chat -q: %d %q %q", code, out, errw)
	}
	// an interactive conversation (not a terminal: no prompt) keeps history
	code, out, _ = run(t, home, "second\n/status\n", "chat")
	if code != 0 || !strings.Contains(out, "second") || !strings.Contains(out, "Session: ") {
		t.Fatalf("chat: %d %q", code, out)
	}
	code, out, _ = run(t, home, "", "sessions", "list")
	if code != 0 || !strings.Contains(out, "cli") || !strings.Contains(out, "terminal") {
		t.Fatalf("sessions list: %d %q", code, out)
	}
	// both turns went to the same session: 4 messages
	if !strings.Contains(out, "  4  ") {
		t.Fatalf("sessions list does not show 4 messages:\n%s", out)
	}
}

func TestVersionUsageAndLogs(t *testing.T) {
	home := t.TempDir()
	if code, out, _ := run(t, home, "", "version"); code != 0 || !strings.HasPrefix(out, "herald ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _, errw := run(t, home, "", "frobnicate"); code != 2 || !strings.Contains(errw, `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: %d %q", code, errw)
	}
	os.MkdirAll(filepath.Join(home, "logs"), 0o700)
	os.WriteFile(filepath.Join(home, "logs", "gateway.log"), []byte("time=1 level=INFO msg=a\ntime=2 level=WARN msg=b\ntime=3 level=ERROR msg=c\n"), 0o600)
	code, out, _ := run(t, home, "", "logs", "--level", "warn")
	if code != 0 || strings.Contains(out, "msg=a") || !strings.Contains(out, "msg=b") || !strings.Contains(out, "msg=c") {
		t.Fatalf("logs --level warn: %d %q", code, out)
	}
}

// /v1/events streams every hook point in the directory-hook form.
func TestEventsStream(t *testing.T) {
	g := startGateway(t, t.TempDir(), nil)
	req, _ := http.NewRequest("GET", "http://"+g.addr+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+g.token)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	type frame struct {
		EventType string         `json:"event_type"`
		Context   map[string]any `json:"context"`
	}
	frames := make(chan frame, 100)
	go func() {
		sc := bufio.NewScanner(res.Body)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				var f frame
				json.Unmarshal([]byte(v), &f)
				if f.EventType != name {
					f.EventType = "MISMATCH " + name
				}
				frames <- f
			}
		}
		close(frames)
	}()
	time.Sleep(50 * time.Millisecond) // the subscription is made when the stream opens
	g.say(t, "ev", "watch this")
	want := []string{"session:start", "agent:start", "agent:end"}
	var got []string
	deadline := time.After(10 * time.Second)
	for len(want) > 0 {
		select {
		case f := <-frames:
			got = append(got, f.EventType)
			if f.EventType == want[0] {
				if f.EventType == "agent:end" && !strings.Contains(fmt.Sprint(f.Context["response"]), "watch this") {
					t.Fatalf("agent:end context = %v", f.Context)
				}
				if f.EventType == "agent:start" && (f.Context["message"] != "watch this" || f.Context["platform"] != "local") {
					t.Fatalf("agent:start context = %v", f.Context)
				}
				want = want[1:]
			}
		case <-deadline:
			t.Fatalf("events seen %v, still waiting for %v", got, want)
		}
	}
}

// SIGINT (here: the context) lets an in-flight turn finish and deliver,
// then the gateway exits 0.
func TestGracefulShutdownFinishesTurns(t *testing.T) {
	fm := newFakeModel(t)
	g := startGateway(t, t.TempDir(), fm.env())
	got := make(chan msgResp, 1)
	go func() {
		b, _ := json.Marshal(map[string]string{"chat_id": "c", "user_id": "u", "text": "slow goodbye"})
		_, r := g.post(t, string(b), nil)
		got <- r
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		fm.mu.Lock()
		n := len(fm.reqs)
		fm.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("request never reached the model")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped := make(chan int, 1)
	go func() { stopped <- g.stop() }()
	time.Sleep(100 * time.Millisecond)
	close(fm.release)
	if r := <-got; r.Status != "done" || len(r.Replies) != 1 {
		t.Fatalf("in-flight turn during shutdown: %+v", r)
	}
	if code := <-stopped; code != 0 {
		t.Fatalf("exit status %d", code)
	}
}
