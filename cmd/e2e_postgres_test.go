package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/sessions/pgtest"
)

// Two gateways on two homes sharing one PostgreSQL store: the first
// answers a message on the local platform; the second, another process,
// sees that conversation in its API's session list, and `herald sessions
// list` on its home shows it too. Each reports its own replica id in
// /healthz, and neither takes the other's home lock.
func TestGatewaysShareAPostgresStore(t *testing.T) {
	u := pgtest.URL(t)
	first := cmdtest.Start(t, cmdtest.Options{Env: map[string]string{"HERALD_DATABASE_URL": u}})
	r := first.Say(t, "c1", "hello from the first replica")
	if r.Status != "done" || r.SessionID == "" || !strings.Contains(r.Text(), "hello from the first replica") {
		t.Fatalf("reply = %+v", r)
	}
	if _, err := os.Stat(filepath.Join(first.Home, "state.db")); err == nil {
		t.Fatal("a PostgreSQL gateway created state.db in its home")
	}

	home2 := t.TempDir()
	var out cmdtest.Buffer
	startChild(t, []string{"HERALD_HOME=" + home2, "HERALD_LOCAL_LISTEN=127.0.0.1:0", "HERALD_DATABASE_URL=" + u}, &out)
	addr := waitListening(t, home2, &out)
	token, err := os.ReadFile(filepath.Join(home2, "local.token"))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Sessions []struct {
			ID          string `json:"id"`
			ChatID      string `json:"chat_id"`
			LastMessage string `json:"last_message"`
		} `json:"sessions"`
	}
	second := &cmdtest.Gateway{Addr: addr}
	if code := api(t, second, "GET", "/v1/sessions?platform=local", strings.TrimSpace(string(token)), "", &list); code != 200 {
		t.Fatalf("GET /v1/sessions: %d", code)
	}
	found := false
	for _, s := range list.Sessions {
		found = found || (s.ID == r.SessionID && s.ChatID == "c1" && s.LastMessage != "")
	}
	if !found {
		t.Fatalf("the second gateway's /v1/sessions lacks %s: %+v", r.SessionID, list)
	}

	var stdout, stderr cmdtest.Buffer
	env := map[string]string{"HERALD_HOME": home2, "HERALD_DATABASE_URL": u}
	code := cmd.Main(context.Background(), []string{"sessions", "list"}, cmd.WithStdio(strings.NewReader(""), &stdout, &stderr),
		cmd.WithGetenv(func(k string) string { return env[k] }))
	if code != 0 || !strings.Contains(stdout.String(), r.SessionID) {
		t.Fatalf("herald sessions list (status %d) lacks %s:\n%s%s", code, r.SessionID, stdout.String(), stderr.String())
	}

	replicas := map[string]bool{}
	for _, g := range []*cmdtest.Gateway{first, second} {
		var h struct {
			Status  string `json:"status"`
			Replica struct {
				ID         string `json:"id"`
				CronLeader *bool  `json:"cron_leader"`
			} `json:"replica"`
		}
		// both coordinate through the database: each reports whether it
		// leads cron
		if code := api(t, g, "GET", "/healthz", "", "", &h); code != 200 || h.Status != "ok" || h.Replica.ID == "" || h.Replica.CronLeader == nil {
			t.Fatalf("healthz of %s = %d %+v", g.Addr, code, h)
		}
		replicas[h.Replica.ID] = true
	}
	if len(replicas) != 2 {
		t.Fatalf("the two gateways share a replica id: %v", replicas)
	}
	if strings.Contains(out.String(), strings.TrimPrefix(u, "postgres://")) {
		t.Fatalf("the database URL is in the gateway's output:\n%s", out.String())
	}
}

// waitListening waits for the gateway on home to write its address.
func waitListening(t *testing.T, home string, out *cmdtest.Buffer) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(home, "local.addr"))
		if err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not start:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
