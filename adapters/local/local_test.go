package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/gateway/gatewaytest"
)

func TestHostAllowed(t *testing.T) {
	h := local.New(local.Config{Token: "t", AllowedHosts: []string{"herald.example"}}).Handler(nil)
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"localhost", true},
		{"localhost:8642", true},
		{"LOCALHOST:8642", true},
		{"127.0.0.1:8642", true},
		{"127.1.2.3", true},
		{"[::1]:8642", true},
		{"app.localhost", true},
		{"app.localhost:80", true},
		{"herald.example", true},
		{"herald.example:443", true},
		// a name that merely ends in "localhost" is anyone's domain
		{"evillocalhost", false},
		{"evillocalhost:8642", false},
		{"localhost.evil.example", false},
		// an IP literal is allowed only if it is loopback
		{"10.0.0.1", false},
		{"192.168.1.20:8642", false},
		{"0.0.0.0:8642", false},
		{"[2001:db8::1]:8642", false},
		{"[::ffff:10.0.0.1]:80", false},
		{"evil.example", false},
		{"", false},
	} {
		t.Run(tc.host, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/healthz", nil)
			req.Host = tc.host
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if got := rec.Code != http.StatusForbidden; got != tc.ok {
				t.Fatalf("Host %q: status %d, want allowed=%v", tc.host, rec.Code, tc.ok)
			}
		})
	}
}

// gateModel answers "reply to <text>", but holds the answer to any text
// listed in gates until its channel is closed.
type gateModel struct {
	gates   map[string]chan struct{}
	entered chan string
}

func newGateModel(texts ...string) *gateModel {
	m := &gateModel{gates: map[string]chan struct{}{}, entered: make(chan string, 16)}
	for _, s := range texts {
		m.gates[s] = make(chan struct{})
	}
	return m
}

func (m *gateModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	text := req.Messages[len(req.Messages)-1].Content
	m.entered <- text
	if g := m.gates[text]; g != nil {
		select {
		case <-g:
		case <-ctx.Done():
			return openai.ChatCompletionResponse{}, ctx.Err()
		}
	}
	return openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonStop,
		Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "reply to " + text}}}}, nil
}

type answer struct {
	Status    int
	Error     string `json:"error"`
	State     string `json:"status"`
	MessageID string `json:"message_id"`
	Replies   []struct {
		Text string `json:"text"`
	} `json:"replies"`
}

func (a answer) text() string {
	var s []string
	for _, r := range a.Replies {
		s = append(s, r.Text)
	}
	return strings.Join(s, "\n")
}

func post(t *testing.T, url, query, body string) answer {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/messages"+query, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer test-token")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return answer{}
	}
	defer res.Body.Close()
	a := answer{Status: res.StatusCode}
	if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
		t.Errorf("%s: answer is not JSON: %v", body, err)
	}
	return a
}

func msg(chat, id, text string) string {
	b, _ := json.Marshal(map[string]string{"chat_id": chat, "user_id": "u", "message_id": id, "text": text})
	return string(b)
}

func TestPostRefusesBadInput(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{})
	long := strings.Repeat("x", local.MaxIDLength+1)
	for _, tc := range []struct {
		name, query, body, why string
	}{
		{"wait NaN", "?wait=NaN", msg("c", "", "hi"), "finite"},
		{"wait Inf", "?wait=Inf", msg("c", "", "hi"), "finite"},
		{"wait -Inf", "?wait=-Inf", msg("c", "", "hi"), "finite"},
		{"wait 1e400", "?wait=1e400", msg("c", "", "hi"), "finite"},
		{"wait negative", "?wait=-1", msg("c", "", "hi"), "negative"},
		{"wait word", "?wait=soon", msg("c", "", "hi"), "not a number"},
		{"second object", "", msg("c", "", "hi") + msg("d", "", "hi"), "after its JSON object"},
		{"trailing data", "", msg("c", "", "hi") + "x", "after its JSON object"},
		{"long chat_id", "", msg(long, "", "hi"), `"chat_id" is 257 bytes`},
		{"long message_id", "", msg("c", long, "hi"), `"message_id" is 257 bytes`},
		{"long user_id", "", `{"chat_id":"c","user_id":"` + long + `"}`, `"user_id" is 257 bytes`},
		{"long thread_id", "", `{"chat_id":"c","thread_id":"` + long + `"}`, `"thread_id" is 257 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := post(t, g.URL, tc.query, tc.body)
			if a.Status != http.StatusBadRequest || !strings.Contains(a.Error, tc.why) {
				t.Fatalf("status %d, error %q; want 400 saying %q", a.Status, a.Error, tc.why)
			}
		})
	}
	edge := strings.Repeat("y", local.MaxIDLength)
	if a := post(t, g.URL, "?wait=20", msg(edge, edge, "hi")+"\n  "); a.Status != http.StatusOK {
		t.Fatalf("ids of %d bytes and trailing white space: status %d %q", local.MaxIDLength, a.Status, a.Error)
	}
}

func TestPostHugeWaitIsCappedNotExpired(t *testing.T) {
	model := newGateModel("slow")
	g := gatewaytest.Start(t, gatewaytest.Options{Model: model})
	got := make(chan answer, 1)
	go func() { got <- post(t, g.URL, "?wait=1e10", msg("c", "", "slow")) }()
	select {
	case a := <-got:
		t.Fatalf("wait=1e10 answered before the turn ended: status %d %q", a.Status, a.State)
	case <-model.entered:
	}
	close(model.gates["slow"])
	if a := <-got; a.Status != http.StatusOK || a.text() != "reply to slow" {
		t.Fatalf("wait=1e10: status %d %q replies %q", a.Status, a.State, a.text())
	}
}

func TestGeneratedMessageIDsAreRandom(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{})
	seen := map[string]bool{}
	counter := regexp.MustCompile(`^m[0-9]+$`)
	for i := range 3 {
		a := post(t, g.URL, "?wait=20", msg("c", "", fmt.Sprint("hi ", i)))
		if a.Status != http.StatusOK || len(a.MessageID) < 20 || counter.MatchString(a.MessageID) || seen[a.MessageID] {
			t.Fatalf("generated id %q (status %d): want a fresh random id", a.MessageID, a.Status)
		}
		seen[a.MessageID] = true
	}
}

// Chat b posts the message_id chat a's request is waiting on: it must not
// receive a's private reply, and a must.
func TestSameMessageIDFromAnotherChatIsRefused(t *testing.T) {
	model := newGateModel("a secret", "b hello")
	g := gatewaytest.Start(t, gatewaytest.Options{Model: model})
	gotA, gotB := make(chan answer, 1), make(chan answer, 1)
	go func() { gotA <- post(t, g.URL, "?wait=30", msg("a", "x", "a secret")) }()
	if s := <-model.entered; s != "a secret" {
		t.Fatalf("model entered with %q", s)
	}
	go func() { gotB <- post(t, g.URL, "?wait=30", msg("b", "x", "b hello")) }()
	var b answer
	select {
	case b = <-gotB:
	case <-model.entered:
		// b got through: let a's turn end while b waits, then b's
		close(model.gates["a secret"])
		a := <-gotA
		close(model.gates["b hello"])
		b = <-gotB
		t.Fatalf("same id from another chat was taken: a got %q, b got %q", a.text(), b.text())
	}
	if b.Status != http.StatusConflict || !strings.Contains(b.Error, "in flight for another chat") {
		t.Fatalf("b: status %d %q, want 409", b.Status, b.Error)
	}
	close(model.gates["a secret"])
	if a := <-gotA; a.Status != http.StatusOK || a.text() != "reply to a secret" {
		t.Fatalf("a: status %d, replies %q", a.Status, a.text())
	}
	// once a's request is over, the id is free again
	close(model.gates["b hello"])
	if b := post(t, g.URL, "?wait=30", msg("b", "x", "b hello")); b.Status != http.StatusOK || b.text() != "reply to b hello" {
		t.Fatalf("b after a: status %d %q, replies %q", b.Status, b.Error, b.text())
	}
}
