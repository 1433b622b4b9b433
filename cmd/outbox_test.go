package cmd_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/agent/agenttest"
)

// messages reads GET /v1/chats/{chat}/messages?wait=<wait>&after=<after>
// and returns the texts and the last id.
func (g *bootGW) messages(t *testing.T, chat, after string, wait int) ([]string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+g.addr+"/v1/chats/"+chat+"/messages?after="+after+"&wait="+strconv.Itoa(wait), nil)
	req.Header.Set("Authorization", "Bearer "+g.token)
	resp, err := (&http.Client{Timeout: 90 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out struct {
		Messages []struct{ ID, Text string } `json:"messages"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &out) != nil {
		t.Fatalf("GET messages of %s: %s %s", chat, resp.Status, data)
	}
	var texts []string
	for _, m := range out.Messages {
		texts = append(texts, m.Text)
		after = m.ID
	}
	return texts, after
}

// A BOOT.md report and a cron job's result sent to local:c1 with no
// request waiting are both read from the chat's outbox, also after the
// gateway restarts.
func TestOutboxKeepsBootAndCronDeliveries(t *testing.T) {
	srv := agenttest.New(t)
	srv.Default = agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
		last := r.LastMessage()
		switch {
		case isBootPrompt(r):
			return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "b1", Name: "send_message",
				Args: `{"action":"send","target":"local:c1","message":"boot: disk at 91%"}`}}}
		case last.Role == openai.ChatMessageRoleTool:
			return agenttest.Reply{Content: "Told local:c1."}
		case strings.Contains(last.Content, "write the nightly report"):
			return agenttest.Reply{Content: "nightly: all green"}
		}
		return agenttest.Reply{Content: "pong"}
	}}
	g := startBootGateway(t, srv, "Check the disk and tell local:c1.\n", "")
	g.errw.waitFor(t, "boot-md completed: Told local:c1.", 30*time.Second)
	got, after := g.messages(t, "c1", "", 0)
	if strings.Join(got, "|") != "boot: disk at 91%" {
		t.Fatalf("outbox after BOOT.md: %q", got)
	}

	code, out, errOut := cronCLI(t, g.home, "cron", "add", "every 1h", "write the nightly report", "--name", "nightly", "--deliver", "local:c1")
	if code != 0 {
		t.Fatalf("add: %d %s", code, errOut)
	}
	id := createdRE.FindStringSubmatch(out)[1]
	if code, out, errOut = cronCLI(t, g.home, "cron", "run", id); code != 0 || !strings.Contains(out, "Delivered to: local:c1") {
		t.Fatalf("run: %d %s\n%s", code, errOut, out)
	}
	got, _ = g.messages(t, "c1", after, 30)
	if len(got) != 1 || !strings.Contains(got[0], "nightly: all green") {
		t.Fatalf("outbox after the cron job: %q", got)
	}
	if code := g.stop(); code != 0 {
		t.Fatalf("gateway exit %d:\n%s", code, g.errw.String())
	}

	// the same home again, without BOOT.md: the outbox is still there
	if err := os.Remove(filepath.Join(g.home, "BOOT.md")); err != nil {
		t.Fatal(err)
	}
	g2 := runBootGateway(t, g.home)
	got, _ = g2.messages(t, "c1", "", 0)
	if len(got) != 2 || got[0] != "boot: disk at 91%" || !strings.Contains(got[1], "nightly: all green") {
		t.Fatalf("outbox after a restart: %q", got)
	}
}
