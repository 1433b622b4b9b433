package openaiapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/openaiapi"
)

// mux serves the API without the local platform's token check.
type mux struct{ *http.ServeMux }

func (m mux) HandleAPI(pattern string, h http.HandlerFunc, denied func(http.ResponseWriter, string)) {
	m.HandleFunc(pattern, h)
}

// editingSink plays a gateway that streams its answer: a partial text
// sent, edited twice, then a notice, then the receipt resolved.
type editingSink struct {
	a       *openaiapi.Adapter
	session string
}

func (s *editingSink) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	rec := adapters.NewReceipt()
	go func() {
		to := m.Source.Target()
		sent, _ := s.a.Send(ctx, to, adapters.Outgoing{Text: "Hel", Cause: m.ID})
		s.a.Edit(ctx, to, sent.MessageID, "Hello")
		s.a.Edit(ctx, to, sent.MessageID, "Hello, world")
		s.a.Edit(ctx, herald.Target{Platform: herald.PlatformAPI, ChatID: "another chat"}, sent.MessageID, "not this")
		s.a.Send(ctx, to, adapters.Outgoing{Text: "a notice", Cause: m.ID})
		s.a.Send(ctx, to, adapters.Outgoing{Text: "for another request", Cause: "m-other"})
		rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: s.session})
	}()
	return rec
}

func TestSendsAndEditsBecomeTheAnswer(t *testing.T) {
	a := openaiapi.New(openaiapi.Config{Model: "m1"})
	m := mux{http.NewServeMux()}
	a.Register(m)
	srv := httptest.NewServer(m)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Run(ctx, &editingSink{a: a, session: "s1"})

	cfg := openai.DefaultConfig("x")
	cfg.BaseURL = srv.URL + "/v1"
	c := openai.NewClientWithConfig(cfg)
	req := openai.ChatCompletionRequest{Model: "m1", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
	resp, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "Hello, world\n\na notice" {
		t.Fatalf("content = %q", got)
	}
	if resp.Header().Get("X-Herald-Session-Id") != "s1" {
		t.Fatalf("session header = %q", resp.Header().Get("X-Herald-Session-Id"))
	}

	req.Stream = true
	st, err := c.CreateChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text strings.Builder
	for {
		ch, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ch.Choices[0].Delta.Content)
	}
	if text.String() != "Hello, world\n\na notice" {
		t.Fatalf("streamed %q", text.String())
	}
	if st.Header().Get("X-Herald-Session-Id") != "s1" {
		t.Fatalf("stream session header = %q", st.Header().Get("X-Herald-Session-Id"))
	}
}
