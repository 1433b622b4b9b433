package local_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
)

// call serves one request on h; a request to /v1/events is made with an
// ended context, so that an accepted stream answers its head and returns.
func call(t *testing.T, h http.Handler, method, path, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1"
	if strings.HasPrefix(path, "/v1/events?") {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		req = req.WithContext(ctx)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func issue(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := call(t, h, "POST", "/v1/events/ticket", "test-token", "")
	var got struct {
		Ticket    string   `json:"ticket"`
		ExpiresIn int      `json:"expires_in"`
		Events    []string `json:"events"`
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &got) != nil || len(got.Ticket) < 26 || got.ExpiresIn != 60 || got.Events == nil {
		t.Fatalf("ticket: %d %s", rec.Code, rec.Body)
	}
	return got.Ticket
}

// A ticket opens one /v1/events stream within 60 s of its issue, and no
// other endpoint.
func TestEventsTicket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pub := &publisher{}
		a := local.New(local.Config{Token: "test-token", Events: pub.subscribe})
		h := a.Handler(nil)
		if rec := call(t, h, "POST", "/v1/events/ticket", "", ""); rec.Code != 401 {
			t.Fatalf("ticket without the token: %d", rec.Code)
		}
		tk := issue(t, h)
		if other := issue(t, h); other == tk {
			t.Fatal("two tickets alike")
		}
		for _, p := range []string{"/v1/chats/c/messages?ticket=", "/v1/files/x?ticket="} {
			if rec := call(t, h, "GET", p+tk, "", ""); rec.Code != 401 {
				t.Errorf("ticket on %s: %d %s", p, rec.Code, rec.Body)
			}
		}
		if rec := call(t, h, "POST", "/v1/events/ticket?ticket="+tk, "", ""); rec.Code != 401 {
			t.Errorf("ticket for a ticket: %d", rec.Code)
		}
		if rec := call(t, h, "GET", "/v1/events?ticket="+tk, "", ""); rec.Code != 200 || rec.Header().Get("Content-Type") != "text/event-stream" {
			t.Fatalf("events with a ticket: %d %s", rec.Code, rec.Body)
		}
		if rec := call(t, h, "GET", "/v1/events?ticket="+tk, "", ""); rec.Code != 401 || !strings.Contains(rec.Body.String(), `"error"`) {
			t.Fatalf("ticket used twice: %d %s", rec.Code, rec.Body)
		}
		if rec := call(t, h, "GET", "/v1/events?ticket=made-up", "", ""); rec.Code != 401 {
			t.Fatalf("made-up ticket: %d", rec.Code)
		}
		late, inTime := issue(t, h), issue(t, h)
		time.Sleep(59 * time.Second)
		if rec := call(t, h, "GET", "/v1/events?ticket="+inTime, "", ""); rec.Code != 200 {
			t.Fatalf("ticket at 59 s: %d %s", rec.Code, rec.Body)
		}
		time.Sleep(time.Second)
		if rec := call(t, h, "GET", "/v1/events?ticket="+late, "", ""); rec.Code != 401 {
			t.Fatalf("ticket at 60 s: %d %s", rec.Code, rec.Body)
		}
	})
}

type eventData struct {
	EventType string `json:"event_type"`
	Context   struct {
		ChatID  string         `json:"chat_id"`
		ID      string         `json:"id"`
		Text    string         `json:"text"`
		Buttons []local.Button `json:"buttons"`
	} `json:"context"`
}

// A message with buttons keeps them in the outbox and its event;
// CloseButtons edits the stored message and publishes message_update
// with no buttons.
func TestButtonsKeptAndClosed(t *testing.T) {
	pub := &publisher{}
	a := local.New(local.Config{Token: "test-token", Events: pub.subscribe, Outbox: openStore(t, filepath.Join(t.TempDir(), "state.db"))})
	srv := httptest.NewServer(a.Handler(nil))
	t.Cleanup(srv.Close)
	res, c := subscribe(t, strings.TrimPrefix(srv.URL, "http://"), "")
	to := herald.Target{Platform: herald.PlatformLocal, ChatID: "c1"}
	sent, err := a.Send(context.Background(), to, adapters.Outgoing{Text: "Allow?", Buttons: []adapters.Button{
		{Label: "Approve once", Data: "ap:t:once", Style: "primary"}, {Label: "Deny", Data: "ap:t:deny", Style: "danger"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []local.Button{{Label: "Approve once", Data: "ap:t:once", Style: "primary"}, {Label: "Deny", Data: "ap:t:deny", Style: "danger"}}
	page := getOutbox(t, a.Handler(nil), "", "/v1/chats/c1/messages")
	if len(page.Messages) != 1 || len(page.Messages[0].Buttons) != 2 || page.Messages[0].Buttons[1] != want[1] || page.Messages[0].EditedAt != nil {
		t.Fatalf("outbox: %+v", page)
	}
	if err := a.CloseButtons(context.Background(), to, sent.MessageID, "Allow?\n\n✅ Approved once by ann"); err != nil {
		t.Fatal(err)
	}
	page = getOutbox(t, a.Handler(nil), "", "/v1/chats/c1/messages")
	if len(page.Messages) != 1 || page.Messages[0].Buttons != nil || page.Messages[0].EditedAt == nil || !strings.HasSuffix(page.Messages[0].Text, "by ann") {
		t.Fatalf("outbox after close: %+v", page)
	}
	ev := readEvents(t, res, c, 2)
	var msg, upd eventData
	if len(ev) != 2 || ev[0].name != "message" || ev[1].name != "message_update" ||
		json.Unmarshal([]byte(ev[0].data), &msg) != nil || json.Unmarshal([]byte(ev[1].data), &upd) != nil {
		t.Fatalf("events: %+v", ev)
	}
	if len(msg.Context.Buttons) != 2 || msg.Context.Buttons[0] != want[0] || msg.Context.ID != sent.MessageID {
		t.Errorf("message event: %+v", msg)
	}
	if upd.Context.ID != sent.MessageID || upd.Context.ChatID != "c1" || upd.Context.Buttons == nil || len(upd.Context.Buttons) != 0 || !strings.Contains(ev[1].data, `"buttons":[]`) {
		t.Errorf("message_update event: %s", ev[1].data)
	}
	if err := a.CloseButtons(context.Background(), to, "999", "x"); err == nil {
		t.Error("closing an unknown message succeeded")
	}
}

// pressSink takes presses as the gateway would, recording them.
type pressSink struct {
	mu      sync.Mutex
	presses []adapters.Press
}

func (s *pressSink) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	return adapters.NewReceipt()
}

func (s *pressSink) Press(ctx context.Context, p adapters.Press) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.presses = append(s.presses, p)
	return "Approved."
}

// A press is passed to the sink with the chat from the path; a missing
// field is refused with 400.
func TestPressPassesOn(t *testing.T) {
	a := local.New(local.Config{Token: "test-token"})
	sink := &pressSink{}
	h := a.Handler(sink)
	rec := call(t, h, "POST", "/v1/chats/c1/press", "test-token", `{"message_id":"7","data":"ap:x:once","user_id":"u1","user_name":"Ann"}`)
	if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != `{"reply":"Approved."}` {
		t.Fatalf("press: %d %s", rec.Code, rec.Body)
	}
	want := adapters.Press{Chat: herald.Target{Platform: herald.PlatformLocal, ChatID: "c1"}, MessageID: "7", Data: "ap:x:once", UserID: "u1", UserName: "Ann"}
	if len(sink.presses) != 1 || sink.presses[0] != want {
		t.Fatalf("presses: %+v", sink.presses)
	}
	for _, body := range []string{`{"data":"d","user_id":"u"}`, `{"message_id":"m","user_id":"u"}`, `{"message_id":"m","data":"d"}`, `nope`, `{"message_id":"m","data":"d","user_id":"u"} {}`} {
		if rec := call(t, h, "POST", "/v1/chats/c1/press", "test-token", body); rec.Code != 400 || !strings.Contains(rec.Body.String(), `"error"`) {
			t.Errorf("press %s: %d %s", body, rec.Code, rec.Body)
		}
	}
	if rec := call(t, h, "POST", "/v1/chats/c1/press", "", `{"message_id":"7","data":"d","user_id":"u1"}`); rec.Code != 401 {
		t.Errorf("press without the token: %d", rec.Code)
	}
	if rec := call(t, local.New(local.Config{Token: "test-token"}).Handler(nil), "POST", "/v1/chats/c1/press", "test-token", `{"message_id":"7","data":"d","user_id":"u1"}`); rec.Code != 200 || !strings.Contains(rec.Body.String(), local.UnknownButtonText) {
		t.Errorf("press with no press sink: %d %s", rec.Code, rec.Body)
	}
}
