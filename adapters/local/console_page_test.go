package local_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/hooks"
)

// The console's files: index.html at "/", the rest under /console/, each
// with its type and a strict Content-Security-Policy (no inline script),
// no file outside the embedded directory, and the Host check on every one.
func TestConsoleFiles(t *testing.T) {
	h := local.New(local.Config{Token: "t"}).Handler(nil)
	get := func(host, path string) *http.Response {
		req := httptest.NewRequest("GET", path, nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result()
	}
	for _, tc := range []struct{ path, ctype, contains string }{
		{"/", "text/html", `src="/console/app.js"`},
		{"/console/app.js", "javascript", "import { render } from './markdown.js'"},
		{"/console/markdown.js", "javascript", "export function render"},
		{"/console/style.css", "text/css", "#messages"},
		{"/console/favicon.svg", "image/svg+xml", "<svg"},
	} {
		res := get("127.0.0.1:8642", tc.path)
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), tc.ctype) || !strings.Contains(string(body), tc.contains) {
			t.Errorf("GET %s = %d %q, body has %q: %v", tc.path, res.StatusCode, res.Header.Get("Content-Type"), tc.contains, strings.Contains(string(body), tc.contains))
		}
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, csp)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", tc.path)
		}
		if res := get("evil.example", tc.path); res.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s with Host evil.example = %d, want 403", tc.path, res.StatusCode)
		}
	}
	for _, path := range []string{"/console/", "/console/nope.js", "/console/..%2flocal.go", "/console/%2e%2e", "/console/index.html/x", "/page.html"} {
		if res := get("localhost", path); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, res.StatusCode)
		}
	}
}

// The page has no inline script or style and no event-handler
// attributes: the CSP would refuse them.
func TestConsoleHTMLHasNoInlineCode(t *testing.T) {
	h := local.New(local.Config{Token: "t"}).Handler(nil)
	req := httptest.NewRequest("GET", "/", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	page := rec.Body.String()
	for _, re := range []string{`<script(?:\s[^>]*)?>[^<]`, `<style`, `\son[a-z]+\s*=`, `style\s*=`, `javascript:`} {
		if m := regexp.MustCompile(`(?i)` + re).FindString(page); m != "" {
			t.Errorf("the page has %q (matches %s)", m, re)
		}
	}
}

// The page listens by name to every hook point of the catalogue and every
// built-in command (an EventSource delivers a named event only to a
// listener of that name).
func TestConsoleKnowsEveryEvent(t *testing.T) {
	b, err := os.ReadFile("console/app.js")
	if err != nil {
		t.Fatal(err)
	}
	list := regexp.MustCompile(`(?s)const KNOWN_EVENTS = \[(.*?)\];`).FindSubmatch(b)
	if list == nil {
		t.Fatal("app.js has no KNOWN_EVENTS list")
	}
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`'([^']+)'`).FindAllSubmatch(list[1], -1) {
		known[string(m[1])] = true
	}
	var want []string
	for _, name := range hooks.Names() {
		if !strings.HasSuffix(name, "*") {
			want = append(want, name)
		}
	}
	for _, c := range hooks.BuiltinCommands() {
		want = append(want, hooks.CommandPrefix+c.Name)
	}
	for _, name := range want {
		if !known[name] {
			t.Errorf("KNOWN_EVENTS in console/app.js lacks %q", name)
		}
	}
}
