package adapters_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/heraldgw/herald/adapters"
)

func TestInboundMux(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok " + r.URL.Path)) })
	mux := adapters.NewInboundMux()
	if err := mux.Add("telegram", map[string]http.Handler{"/telegram/webhook": ok}); err != nil {
		t.Fatal(err)
	}
	if err := mux.Add("webhook", map[string]http.Handler{"/webhooks/a": ok, "/webhooks/b": ok}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		owner, path, want string
	}{
		{"slack", "/telegram/webhook", "path /telegram/webhook is taken by both telegram and slack"},
		{"slack", "slack/events", "not a clean absolute path"},
		{"slack", "/slack/../telegram/webhook", "not a clean absolute path"},
		{"slack", "/slack/events/", "not a clean absolute path"},
	} {
		err := mux.Add(tc.owner, map[string]http.Handler{tc.path: ok, "/slack/x": ok})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%s, %s) = %v, want %q", tc.owner, tc.path, err, tc.want)
		}
	}
	if mux.Len() != 3 {
		t.Errorf("a refused Add left routes behind: %v", mux.Paths())
	}
	for path, want := range map[string]int{"/telegram/webhook": 200, "/webhooks/a": 200, "/webhooks/": 404, "/webhooks/a/": 404, "/": 404, "/slack/x": 404} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, nil))
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", path, rec.Code, want)
		}
	}
}

// A mount answers 503 until Serve puts a handler on it, and again once
// Serve's context ended.
func TestMount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m adapters.Mount
		status := func() int {
			rec := httptest.NewRecorder()
			m.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/x", nil))
			return rec.Code
		}
		if c := status(); c != http.StatusServiceUnavailable {
			t.Errorf("before Serve: %d", c)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			m.Serve(ctx, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
		}()
		synctest.Wait()
		if c := status(); c != http.StatusTeapot {
			t.Errorf("while serving: %d", c)
		}
		cancel()
		<-done
		if c := status(); c != http.StatusServiceUnavailable {
			t.Errorf("after Serve: %d", c)
		}
	})
}
