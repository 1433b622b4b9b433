package gateway

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"

	"context"
	"errors"
	"fmt"
	"github.com/heraldgw/herald/hooks"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

var suffixRE = regexp.MustCompile(`\s?\((\d+)/(\d+)\)$`)

// checkParts asserts the invariants every split keeps.
func checkParts(t *testing.T, text string, parts []string, lim adapters.Limits) {
	t.Helper()
	var rebuilt strings.Builder
	for i, p := range parts {
		if !utf8.ValidString(p) {
			t.Fatalf("part %d is not valid UTF-8", i+1)
		}
		if lim.MaxLength > 0 && lim.Len(p) > lim.MaxLength {
			t.Fatalf("part %d measures %d > %d", i+1, lim.Len(p), lim.MaxLength)
		}
		if len(parts) > 1 {
			m := suffixRE.FindStringSubmatch(p)
			if m == nil || m[1] != fmt.Sprint(i+1) || m[2] != fmt.Sprint(len(parts)) {
				t.Fatalf("part %d lacks its (i/N) suffix: %q", i+1, tail(p))
			}
			p = p[:len(p)-len(m[0])]
		}
		if strings.Count(p, "```")%2 != 0 {
			t.Fatalf("part %d leaves a code fence open: %q", i+1, p)
		}
		rebuilt.WriteString(p)
	}
	// nothing but separators and fence repairs is lost or added
	squash := func(s string) string {
		s = strings.ReplaceAll(s, "```go", "")
		s = strings.ReplaceAll(s, "```", "")
		return strings.Join(strings.Fields(s), "")
	}
	if squash(rebuilt.String()) != squash(text) {
		t.Fatalf("text changed by splitting")
	}
}

func tail(s string) string {
	if len(s) > 40 {
		return s[len(s)-40:]
	}
	return s
}

func TestSplit(t *testing.T) {
	fence := "intro line\n```go\n" + strings.Repeat("fmt.Println(\"hello\")\n", 40) + "```\noutro"
	for _, tc := range []struct {
		name  string
		text  string
		lim   adapters.Limits
		parts int // 0: just check invariants
	}{
		{"fits", "short", adapters.Limits{MaxLength: 100}, 1},
		{"unlimited", strings.Repeat("x", 100000), adapters.Limits{}, 1},
		{"prefers newlines", strings.Repeat("line of text\n", 20), adapters.Limits{MaxLength: 60}, 0},
		{"words", strings.Repeat("word ", 200), adapters.Limits{MaxLength: 50}, 0},
		{"no spaces", strings.Repeat("x", 1000), adapters.Limits{MaxLength: 100}, 0},
		{"emoji runes", strings.Repeat("😀", 500), adapters.Limits{MaxLength: 100}, 0},
		{"emoji utf16", strings.Repeat("😀", 5000), adapters.Limits{MaxLength: 4096, Count: adapters.UTF16Len}, 0},
		{"zwj family", strings.Repeat("👨‍👩‍👧‍👦", 300), adapters.Limits{MaxLength: 100, Count: adapters.UTF16Len}, 0},
		{"code fence", fence, adapters.Limits{MaxLength: 200}, 0},
		{"cjk", strings.Repeat("漢字かな交じり文", 300), adapters.Limits{MaxLength: 333}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := Split(tc.text, tc.lim)
			if tc.parts > 0 && len(parts) != tc.parts {
				t.Fatalf("%d parts, want %d", len(parts), tc.parts)
			}
			checkParts(t, tc.text, parts, tc.lim)
		})
	}
	t.Run("newline preferred", func(t *testing.T) {
		parts := Split(strings.Repeat("aaaa bbbb\n", 10), adapters.Limits{MaxLength: 40})
		for _, p := range parts[:len(parts)-1] {
			body := suffixRE.ReplaceAllString(p, "")
			if !strings.HasSuffix(body, "bbbb") {
				t.Fatalf("cut not at a line end: %q", p)
			}
		}
	})
	t.Run("fence reopened with its language", func(t *testing.T) {
		parts := Split(fence, adapters.Limits{MaxLength: 200})
		if len(parts) < 3 || !strings.HasPrefix(parts[1], "```go\n") {
			t.Fatalf("second part %q", parts[1])
		}
	})
	t.Run("emoji sequence kept whole", func(t *testing.T) {
		fam := "👨‍👩‍👧‍👦"
		for _, p := range Split(strings.Repeat(fam, 300), adapters.Limits{MaxLength: 100, Count: adapters.UTF16Len}) {
			// whole families only: a cut inside one leaves a fragment
			body := suffixRE.ReplaceAllString(p, "")
			if rest := strings.ReplaceAll(body, fam, ""); rest != "" {
				t.Fatalf("a family emoji was cut: %q is left of %q", rest, tail(body))
			}
		}
	})
}

// A hard cut inside an open fence fills a part to the last unit: the
// reopened fence, the text, the closing fence and the "\n(i/N)" suffix
// together must still fit, so no room the split reserves is spare.
func TestSplitFillsExactly(t *testing.T) {
	for _, max := range []int{40, 64, 100, 4096} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			text := "```\n" + strings.Repeat("x", 20*max) + "\n```"
			lim := adapters.Limits{MaxLength: max}
			parts := Split(text, lim)
			checkParts(t, text, parts, lim)
			full := 0
			for _, p := range parts {
				if lim.Len(p) == max {
					full++
				}
			}
			if full == 0 {
				t.Fatalf("no part is filled to %d; the test would not notice a missing reservation", max)
			}
		})
	}
}

// Splitting is linear: 10 MB takes about twenty times as long as 512 KB (a
// quadratic split would take four hundred times; allocation and a loaded
// machine push a linear one up to about eighty). Comparing the two, rather
// than holding to a budget, keeps the test true on a loaded machine and
// under the race detector.
func TestSplitTenMegabytes(t *testing.T) {
	line := "a line of a very long answer, with words 😀\n"
	lim := adapters.Limits{MaxLength: 4096, Count: adapters.UTF16Len}
	timeSplit := func(text string) ([]string, time.Duration) {
		start := time.Now()
		parts := Split(text, lim)
		return parts, time.Since(start)
	}
	small := time.Duration(1<<63 - 1)
	for range 3 {
		_, took := timeSplit(strings.Repeat(line, 512<<10/46))
		small = min(small, took)
	}
	text := strings.Repeat(line, 10<<20/46)
	parts, took := timeSplit(text)
	checkParts(t, text, parts, lim)
	t.Logf("512 KB in %s; 10 MB → %d parts in %s", small, len(parts), took)
	if took > 200*small {
		t.Fatalf("10 MB took %s, 512 KB %s: not linear", took, small)
	}
}

// fmtAdapter formats like an HTML platform: each "*" costs 3 more.
type fmtAdapter struct{ fakeAdapter }

func (f *fmtAdapter) FormattedLen(s string) int { return f.limits.Len(s) + 3*strings.Count(s, "*") }

func TestSplitFormatted(t *testing.T) {
	a := &fmtAdapter{fakeAdapter{name: "fmt", limits: adapters.Limits{MaxLength: 100}}}
	text := strings.Repeat("*bold* and plain words ", 200)
	for _, p := range splitFor(text, a) {
		if n := a.FormattedLen(p); n > 100 {
			t.Fatalf("formatted part measures %d", n)
		}
	}
}

func TestDeliveryRetries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fail     func(n int, out adapters.Outgoing) error
		want     []string
		minWait  time.Duration
		attempts int
	}{
		{name: "429 honours retry-after then succeeds",
			fail: func(n int, out adapters.Outgoing) error {
				if n == 1 {
					return &adapters.RetryAfterError{After: 7 * time.Second, Err: errors.New("429 Too Many Requests")}
				}
				return nil
			}, want: []string{echo + "hi"}, minWait: 7 * time.Second, attempts: 2},
		{name: "network errors back off",
			fail: func(n int, out adapters.Outgoing) error {
				if n <= 2 {
					return &adapters.TemporaryError{Err: errors.New("connection reset")}
				}
				return nil
			}, want: []string{echo + "hi"}, minWait: 3 * time.Second, attempts: 3},
		{name: "markup refused: plain text once",
			fail: func(n int, out adapters.Outgoing) error {
				if !out.Plain {
					return errors.New("can't parse entities")
				}
				return nil
			}, want: []string{echo + "hi"}, attempts: 2},
		{name: "gives up and tells the user",
			fail: func(n int, out adapters.Outgoing) error {
				if out.Text == DeliveryFailedNotice {
					return nil
				}
				return &adapters.TemporaryError{Err: errors.New("network down")}
			}, want: []string{DeliveryFailedNotice}, attempts: maxSendAttempts + 1},
		{name: "fatal is not retried",
			fail: func(n int, out adapters.Outgoing) error {
				return &adapters.FatalError{Msg: "token revoked"}
			}, attempts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ad := &fakeAdapter{name: "fake", fail: tc.fail}
				b := newBubble(t, ad, nil)
				defer b.stop()
				start := time.Now()
				outcome(t, b.send("c1", "u1", "hi"))
				took := time.Since(start)
				if got := ad.texts(); strings.Join(got, "|") != strings.Join(tc.want, "|") {
					t.Fatalf("delivered %q, want %q", got, tc.want)
				}
				if took < tc.minWait {
					t.Fatalf("retried after %s, want ≥ %s", took, tc.minWait)
				}
				if ad.calls != tc.attempts {
					t.Fatalf("%d attempts, want %d", ad.calls, tc.attempts)
				}
				// the reply is in the transcript whatever happened to delivery
				s, _ := b.store.OpenSession(context.Background(), "agent:main:fake:dm:c1")
				if s == nil || s.MessageCount != 2 {
					t.Fatalf("transcript: %+v", s)
				}
			})
		})
	}
}

func TestDeliverRecordsAndSplits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake", limits: adapters.Limits{MaxLength: 50}}
		b := newBubble(t, ad, nil)
		defer b.stop()
		outcome(t, b.send("c1", "u1", "hi")) // opens the session
		text := strings.Repeat("cron result line\n", 10)
		if err := b.runner.Deliver(context.Background(), herald.Target{Platform: "fake", ChatID: "c1"}, text); err != nil {
			t.Fatal(err)
		}
		if n := len(ad.texts()); n < 5 {
			t.Fatalf("%d messages sent", n)
		}
		ms, _ := b.store.Messages(context.Background(), b.runner.chat("agent:main:fake:dm:c1").sess.ID, 0)
		if last := ms[len(ms)-1]; last.Role != "assistant" || last.Content != text {
			t.Fatalf("last stored %+v", last)
		}
		if err := b.runner.Deliver(context.Background(), herald.Target{Platform: "nowhere", ChatID: "x"}, "x"); !errors.Is(err, ErrUnknownPlatform) {
			t.Fatalf("unknown platform: %v", err)
		}
	})
}

// The local platform splits to platforms.local.max_message_length, so
// splitting can be tried with no token.
func TestLocalMaxMessageLength(t *testing.T) {
	h := newHarness(t, nil, localMax(40))
	r := h.post(msg{User: "u1", Text: strings.Repeat("word ", 30)})
	if len(r.Replies) < 4 {
		t.Fatalf("replies %q", r.texts())
	}
	for i, x := range r.Replies {
		if utf8.RuneCountInString(x.Text) > 40 || !strings.HasSuffix(x.Text, fmt.Sprintf("(%d/%d)", i+1, len(r.Replies))) {
			t.Fatalf("part %d: %q", i+1, x.Text)
		}
	}
}

// The pre_gateway_dispatch payload out-of-process hooks get (golden).
func TestDispatchPayloadGolden(t *testing.T) {
	got, err := hooks.Context(&hooks.Dispatch{Message: herald.Message{ID: "42", Text: "hello @bot",
		Source: herald.Source{Platform: "telegram", ChatID: "-100", ChatType: "group", UserID: "7", UserName: "ann", ThreadID: "3"}}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	json.Indent(&buf, got, "", "  ")
	buf.WriteByte('\n')
	path := filepath.Join("testdata", "pre_gateway_dispatch.json")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, buf.Bytes(), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("payload changed:\n%s\nwant:\n%s", buf.Bytes(), want)
	}
}
