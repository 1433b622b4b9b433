package approvalnotify_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/approvalnotify"
	"github.com/heraldgw/herald/examples/plugins/signed"
	"github.com/heraldgw/herald/hooks"
)

func TestNotifiesAndLogsTheDecision(t *testing.T) {
	const secret = "approval-secret"
	got := make(chan map[string]string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !signed.Verify([]byte(secret), body, r.Header.Get(signed.Header)) {
			http.Error(w, "bad signature", 401)
			return
		}
		var m map[string]string
		json.Unmarshal(body, &m)
		got <- m
	}))
	defer srv.Close()
	t.Setenv("HERALD_APPROVAL_WEBHOOK", srv.URL)
	t.Setenv("HERALD_APPROVAL_SECRET", secret)

	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{approvalnotify.Plugin}})
	r := g.Say(t, "ap", "run: rm -rf /tmp/herald-approval-example-does-not-exist")
	if r.Status != "awaiting_input" || !strings.Contains(r.Text(), "/approve") {
		t.Fatalf("approval prompt = %+v", r)
	}
	select {
	case m := <-got:
		if m["title"] != "herald needs approval" || !strings.Contains(m["body"], "rm -rf") || m["surface"] != "gateway" {
			t.Fatalf("notification = %v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no signed notification")
	}
	g.Say(t, "ap", "/deny")
	log := g.WaitLog(t, "approval deny: rm -rf", 5*time.Second)
	if !strings.Contains(log, "pattern=rm_rf") {
		t.Fatalf("decision line lacks the pattern:\n%s", log)
	}
}
