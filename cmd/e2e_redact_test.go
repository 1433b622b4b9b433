package cmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd/cmdtest"
)

// A secret that a user writes into a message (here the local token, which
// the gateway knows) is masked at every edge it would cross: the reply the
// echo model makes of it, the /v1/events stream, and a shell hook's stdin.
func TestSecretsMaskedAtEveryEdge(t *testing.T) {
	home := t.TempDir()
	seen := filepath.Join(home, "hook-stdin.jsonl")
	script := filepath.Join(home, "record.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ncat >> "+seen+"\necho >> "+seen+"\necho '{}'\n"), 0o755)
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("hooks:\n  pre_llm_call:\n    - command: "+script+"\n"), 0o600)
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Args: []string{"--accept-hooks"}})
	events := g.Events(t)

	r := g.Say(t, "c1", "remember this: "+g.Token)
	if r.Status != "done" {
		t.Fatalf("reply %+v", r)
	}
	if strings.Contains(r.Text(), g.Token) || !strings.Contains(r.Text(), "[REDACTED]") {
		t.Fatalf("the reply carries the secret: %q", r.Text())
	}
	// every frame up to the turn's end, and the hook's stdin
	frames := 0
	for done := false; !done; {
		select {
		case ev := <-events:
			frames++
			b, _ := json.Marshal(ev.Context)
			if strings.Contains(string(b), g.Token) {
				t.Fatalf("/v1/events carries the secret in %s: %s", ev.Name, b)
			}
			done = ev.Name == "agent:end"
		case <-time.After(30 * time.Second):
			t.Fatalf("no agent:end after %d frames", frames)
		}
	}
	b, err := os.ReadFile(seen)
	if err != nil || !strings.Contains(string(b), "remember this") {
		t.Fatalf("the hook did not run: %v %q", err, b)
	}
	if strings.Contains(string(b), g.Token) {
		t.Fatalf("a hook's stdin carries the secret: %s", b)
	}
}
