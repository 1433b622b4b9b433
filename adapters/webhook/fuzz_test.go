package webhook

import (
	"net/http"
	"strings"
	"testing"
)

// hermesReference renders Hermes' form directly, as Hermes does (but with
// missing keys empty): what the translation into a Go template must
// reproduce.
func hermesReference(src string, payload any) string {
	out := hermesField.ReplaceAllStringFunc(src, func(m string) string {
		key := m[1 : len(m)-1]
		if key == "__raw__" {
			return jsonText(payload, maxRaw)
		}
		return field(payload, key)
	})
	if len(out) > maxRendered {
		return cut(out, maxRendered)
	}
	return out
}

// Any text without "{{" is Hermes' form: its translation parses, never
// panics, and renders what Hermes' placeholders say, within the bound.
func FuzzTranslateHermes(f *testing.F) {
	for _, s := range []string{"PR {pull_request.title} by {sender.login}", "{__raw__}", "{ } {a b} }{ {}", "x{a}}", "{a}{b}{c.0.d}", `"{q}" \ {{`, "}}{x}{", "{-a}", "<no value>"} {
		f.Add(s, `{"a":{"b":"c"},"pull_request":{"title":"T"},"c":[{"d":1}],"q":"\"}}"}`)
	}
	f.Fuzz(func(t *testing.T, src, body string) {
		if strings.Contains(src, "{{") {
			return
		}
		payload, err := decodePayload("application/json", []byte(body))
		if err != nil {
			payload = map[string]any{}
		}
		tm, err := ParseTemplate(src)
		if err != nil {
			t.Fatalf("Hermes form %q does not parse once translated (%q): %v", src, TranslateHermes(src), err)
		}
		got, err := tm.Render(payload)
		if err != nil {
			t.Fatalf("render %q: %v", src, err)
		}
		if want := hermesReference(src, payload); got != want {
			t.Fatalf("render %q = %q, want %q", src, got, want)
		}
		if len(got) > maxRendered {
			t.Fatalf("rendered %d bytes", len(got))
		}
	})
}

// The signature check accepts exactly the body's HMAC under the secret,
// in every header form, and nothing in a header makes it panic.
func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"a":1}`), "secret", "sha256=00", "tok")
	f.Add([]byte{}, "s", "", "")
	f.Add([]byte("x"), "k", "SHA256=zz", "k")
	f.Fuzz(func(t *testing.T, body []byte, secret, junk, token string) {
		if secret == "" {
			return
		}
		good := Sign(body, secret)
		for _, name := range []string{HeaderGitHub, HeaderGeneric} {
			if !Verify(http.Header{name: {good}}, body, secret) {
				t.Fatalf("%s: own signature refused", name)
			}
			if Verify(http.Header{name: {good}}, append(append([]byte(nil), body...), 'x'), secret) {
				t.Fatalf("%s: signature of another body accepted", name)
			}
			if junk != good && Verify(http.Header{name: {junk}}, body, secret) && !strings.EqualFold(strings.TrimSpace(junk), good) {
				t.Fatalf("%s: %q accepted", name, junk)
			}
		}
		if !Verify(http.Header{HeaderHermesHMAC: {strings.TrimPrefix(good, "sha256=")}}, body, secret) {
			t.Fatal("bare hex refused")
		}
		if got := Verify(http.Header{HeaderGitLab: {token}}, body, secret); got != (token == secret) {
			t.Fatalf("gitlab token %q for secret %q: %v", token, secret, got)
		}
		if Verify(http.Header{}, body, secret) || Verify(http.Header{HeaderGitHub: {good}}, body, "") {
			t.Fatal("no header, or no secret, accepted")
		}
	})
}
