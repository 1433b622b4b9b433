package telegramtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func call(t *testing.T, s *Server, token, method string, form url.Values) (int, map[string]any) {
	t.Helper()
	res, err := http.PostForm(s.URL()+"/bot"+token+"/"+method, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

func TestCheckText(t *testing.T) {
	for _, tc := range []struct {
		name, text, mode string
		ok               bool
		desc             string
	}{
		{"plain", "hi <there>", "", true, ""},
		{"html", "<b>hi</b> &lt;x&gt;", "HTML", true, ""},
		{"unknown tag", "<script>x</script>", "HTML", false, "Unsupported start tag"},
		{"unclosed", "<b>hi", "HTML", false, "Can't find end tag"},
		{"empty", "  ", "", false, "message text is empty"},
		{"4096 units", strings.Repeat("😀", 2048), "", true, ""},
		{"4097 units", strings.Repeat("😀", 2048) + "x", "", false, "message is too long"},
		{"tags do not count", "<b>" + strings.Repeat("x", 4096) + "</b>", "HTML", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := checkText(tc.text, tc.mode)
			if ok != tc.ok || !strings.Contains(f.Description, tc.desc) {
				t.Errorf("checkText = %+v, %v", f, ok)
			}
		})
	}
}

func TestGetUpdatesOffsetConfirms(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	s.DM(1, "a", "one")
	s.DM(1, "a", "two")
	_, body := call(t, s, s.Token(), "getUpdates", url.Values{"offset": {"2"}})
	if res := body["result"].([]any); len(res) != 1 {
		t.Fatalf("result = %v", res)
	}
	if s.Pending() != 1 || s.Confirmed() != 2 {
		t.Errorf("pending %d confirmed %d", s.Pending(), s.Confirmed())
	}
	// a held poll returns as soon as an update arrives
	done := make(chan []any, 1)
	go func() {
		_, b := call(t, s, s.Token(), "getUpdates", url.Values{"offset": {"3"}, "timeout": {"30"}})
		r, _ := b["result"].([]any)
		done <- r
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Wait(ctx, func() bool { return s.Attempts("getUpdates") == 2 }); err != nil {
		t.Fatal(err)
	}
	s.DM(1, "a", "three")
	select {
	case r := <-done:
		if len(r) != 1 {
			t.Errorf("held poll got %v", r)
		}
	case <-ctx.Done():
		t.Fatal("held poll did not return")
	}
}

func TestWrongTokenAndFaults(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	if code, body := call(t, s, "1:bad", "getMe", nil); code != 401 || body["description"] != "Unauthorized" {
		t.Errorf("wrong token: %d %v", code, body)
	}
	s.RateLimit("sendMessage", 1, 5)
	code, body := call(t, s, s.Token(), "sendMessage", url.Values{"chat_id": {"1"}, "text": {"x"}, "entities": {"null"}})
	if params, _ := body["parameters"].(map[string]any); code != 429 || params["retry_after"] != float64(5) {
		t.Errorf("429: %d %v", code, body)
	}
	if code, _ := call(t, s, s.Token(), "sendMessage", url.Values{"chat_id": {"1"}, "text": {"x"}, "entities": {"null"}}); code != 200 {
		t.Errorf("after the fault: %d", code)
	}
	if n, c := s.Attempts("sendMessage"), len(s.Calls("sendMessage")); n != 2 || c != 1 {
		t.Errorf("attempts %d calls %d", n, c)
	}
}
