package memory_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/memory"
	"github.com/heraldgw/herald/examples/plugins/signed"
	"github.com/heraldgw/herald/hooks"
)

func TestRecallAndStore(t *testing.T) {
	const secret = "memory-test-secret"
	var mu sync.Mutex
	var stored []map[string]string
	bad := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !signed.Verify([]byte(secret), body, r.Header.Get(signed.Header)) {
			mu.Lock()
			bad++
			mu.Unlock()
			http.Error(w, "bad signature", 401)
			return
		}
		var req map[string]string
		json.Unmarshal(body, &req)
		switch r.URL.Path {
		case "/recall":
			json.NewEncoder(w).Encode(map[string]any{"results": []map[string]string{{"text": "User likes Go"}}})
		case "/store":
			mu.Lock()
			stored = append(stored, req)
			mu.Unlock()
		}
	}))
	defer srv.Close()
	t.Setenv("HERALD_MEMORY_API", srv.URL)
	t.Setenv("HERALD_MEMORY_SECRET", secret)

	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{memory.Plugin}})
	r := g.Say(t, "mem", "what do I like?")
	if !strings.Contains(r.Text(), "Recalled context:\n- User likes Go") {
		t.Fatalf("recalled memory not in the model's input: %q", r.Text())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(stored)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if bad != 0 || len(stored) != 1 || stored[0]["user"] != "what do I like?" || !strings.Contains(stored[0]["assistant"], "User likes Go") || stored[0]["session_id"] != r.SessionID {
		t.Fatalf("stored = %+v, bad signatures = %d", stored, bad)
	}
}
