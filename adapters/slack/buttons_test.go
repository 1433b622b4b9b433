package slack_test

// Buttons: Block Kit sections and actions through slack-go against the
// fake, presses over Socket Mode and the Events API back to a PressSink,
// and the reply shown to the presser alone.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/slack"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
)

// approval is what an approval prompt carries.
var approval = []adapters.Button{
	{Label: "Approve once", Data: "ap:1:once", Style: "primary"},
	{Label: "Approve for session", Data: "ap:1:session"},
	{Label: "Always", Data: "ap:1:always"},
	{Label: "Deny", Data: "ap:1:deny", Style: "danger"},
}

// pressSink is a Sink that takes presses too: each goes to presses, and
// is answered reply.
type pressSink struct {
	chanSink
	presses chan adapters.Press
	reply   string
}

func newPressSink(reply string) pressSink {
	return pressSink{make(chanSink, 8), make(chan adapters.Press, 8), reply}
}

func (s pressSink) Press(_ context.Context, p adapters.Press) string {
	s.presses <- p
	return s.reply
}

func (s pressSink) nextPress(t *testing.T) adapters.Press {
	t.Helper()
	select {
	case p := <-s.presses:
		return p
	case <-time.After(wait):
		t.Fatal("no press reached the sink")
		return adapters.Press{}
	}
}

// sendPrompt sends text with the approval buttons to channel (in thread,
// if any) and returns the post the fake got.
func sendPrompt(t *testing.T, srv *slacktest.Server, ad *slack.Adapter, channel, thread, text string) slacktest.Post {
	t.Helper()
	sent, err := ad.Send(ctxT(t), herald.Target{Platform: herald.PlatformSlack, ChatID: channel, ThreadID: thread},
		adapters.Outgoing{Text: text, Buttons: approval})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := srv.Shown(channel, sent.MessageID)
	if !ok {
		t.Fatalf("no message %s in %s", sent.MessageID, channel)
	}
	return p
}

func TestButtonsDrawn(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	p := sendPrompt(t, srv, ad, "C1", "1700000000.000009", "Run **rm** `/tmp/x`?")
	if p.Method != "chat.postMessage" || p.ThreadTS != "1700000000.000009" || p.Text != "Run *rm* `/tmp/x`?" {
		t.Errorf("post = %+v, want the mrkdwn text as the fallback, in the thread", p)
	}
	if len(p.Blocks) != 2 || p.Blocks[0].Type != "section" || p.Blocks[1].Type != "actions" {
		t.Fatalf("blocks = %+v, want a section and an actions block", p.Blocks)
	}
	if s := p.Blocks[0].Text; s == nil || s.Type != "mrkdwn" || s.Text != p.Text {
		t.Errorf("section text = %+v, want mrkdwn %q", s, p.Text)
	}
	ids := map[string]bool{}
	els := p.Blocks[1].Elements
	if len(els) != len(approval) {
		t.Fatalf("%d buttons, want %d", len(els), len(approval))
	}
	for i, e := range els {
		b := approval[i]
		if e.Type != "button" || e.Text == nil || e.Text.Text != b.Label || e.Value != b.Data || e.Style != b.Style {
			t.Errorf("button %d = %+v, want %+v", i, e, b)
		}
		ids[e.ActionID] = true
	}
	if len(ids) != len(approval) {
		t.Errorf("action ids %v are not distinct", ids)
	}
}

// A text longer than a section takes is drawn in several, each within
// Slack's 3000 characters, a code block cut between them closed and
// reopened, nothing lost.
func TestButtonsLongTextInSections(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	var b strings.Builder
	for i := 0; b.Len() < 2500; i++ {
		fmt.Fprintf(&b, "Line %d of the explanation, with some words in it.\n", i)
	}
	b.WriteString("```\n")
	for i := 0; b.Len() < 5200; i++ {
		fmt.Fprintf(&b, "echo step %d\n", i)
	}
	b.WriteString("```\nAllow it?")
	p := sendPrompt(t, srv, ad, "C1", "", b.String())
	var sections []string
	for _, bl := range p.Blocks {
		if bl.Type == "section" {
			sections = append(sections, bl.Text.Text)
		}
	}
	if len(sections) < 2 || p.Blocks[len(p.Blocks)-1].Type != "actions" {
		t.Fatalf("blocks = %d sections then %q, want several sections then the actions", len(sections), p.Blocks[len(p.Blocks)-1].Type)
	}
	for i, s := range sections {
		if n := utf8.RuneCountInString(s); n > slacktest.MaxSectionText {
			t.Errorf("section %d: %d characters", i, n)
		}
		if n := strings.Count(s, "```"); n%2 != 0 {
			t.Errorf("section %d has %d fences, an unclosed code block:\n%s", i, n, s)
		}
	}
	if got, want := squeeze(strings.Join(sections, "\n")), squeeze(b.String()); got != want {
		t.Errorf("the sections do not hold the text:\n got %.200q…\nwant %.200q…", got, want)
	}
}

// squeeze drops fences and white space, which cutting may add or take.
func squeeze(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "```", "")), "")
}

func TestCloseButtons(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	p := sendPrompt(t, srv, ad, "C1", "1700000000.000009", "Run `ls`?")
	to := herald.Target{Platform: herald.PlatformSlack, ChatID: "C1", ThreadID: p.ThreadTS}
	if err := ad.CloseButtons(ctxT(t), to, p.TS, "Run `ls`? **Approved once** by ann"); err != nil {
		t.Fatal(err)
	}
	posts := srv.Posts()
	up := posts[len(posts)-1]
	if up.Method != "chat.update" || up.TS != p.TS || up.Text != "Run `ls`? *Approved once* by ann" {
		t.Errorf("update = %+v", up)
	}
	now, _ := srv.Shown("C1", p.TS)
	for _, bl := range now.Blocks {
		if bl.Type == "actions" {
			t.Errorf("the message still has buttons: %+v", now.Blocks)
		}
	}
	if len(now.Blocks) != 1 || now.Blocks[0].Text.Text != up.Text {
		t.Errorf("blocks after closing = %+v, want the new text alone", now.Blocks)
	}
	if _, err := srv.PressPayload(slacktest.Press{Channel: "C1", TS: p.TS, UserID: "U1", Label: "Deny"}); err == nil {
		t.Error("a closed prompt can still be pressed")
	}
}

// A press over Socket Mode is acked, reaches the PressSink as Slack
// vouches for it, and the sink's reply is shown to the presser alone in
// the thread; in a DM, where the prompt is in no thread, too.
func TestPressSocketMode(t *testing.T) {
	sink := newPressSink("Approved once.")
	srv, ad := startAdapter(t, sink)
	for i, tc := range []struct {
		channel, thread string
		chat            herald.ChatType
	}{
		{"C1", "1700000000.000009", herald.ChatChannel},
		{"DU9", "", herald.ChatDM},
	} {
		p := sendPrompt(t, srv, ad, tc.channel, tc.thread, "Run `ls`?")
		in, err := srv.PressButton(slacktest.Press{Channel: tc.channel, TS: p.TS, UserID: "U9", UserName: "ann", Label: "Approve once"})
		if err != nil {
			t.Fatal(err)
		}
		got := sink.nextPress(t)
		want := adapters.Press{
			Chat:     herald.Target{Platform: herald.PlatformSlack, ChatID: tc.channel, ThreadID: tc.thread},
			ChatType: tc.chat, MessageID: p.TS, UserID: "U9", UserName: "ann", Data: "ap:1:once",
		}
		if got != want {
			t.Errorf("press = %+v\nwant    %+v", got, want)
		}
		if err := srv.WaitAcked(ctxT(t), in.EnvelopeID); err != nil {
			t.Fatal(err)
		}
		reply := waitEphemeral(t, srv, i+1)
		if reply.Channel != tc.channel || reply.User != "U9" || reply.ThreadTS != tc.thread || reply.Text != "Approved once." {
			t.Errorf("reply = %+v, want it to U9 alone in %s thread %q", reply, tc.channel, tc.thread)
		}
	}
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
}

// waitEphemeral waits for the n-th chat.postEphemeral and returns it.
func waitEphemeral(t *testing.T, srv *slacktest.Server, n int) slacktest.Post {
	t.Helper()
	for have := 1; ; have++ {
		posts, err := srv.WaitPosts(ctxT(t), have)
		if err != nil {
			t.Fatalf("no ephemeral reply %d: %v", n, err)
		}
		var eph []slacktest.Post
		for _, p := range posts {
			if p.Ephemeral() {
				eph = append(eph, p)
			}
		}
		if len(eph) >= n {
			return eph[n-1]
		}
	}
}

// A press posted to the Interactivity Request URL reaches the PressSink
// when signed with the signing secret, and nothing when not (401).
func TestPressEventsAPI(t *testing.T) {
	srv := newFake(t)
	sink := newPressSink("Denied.")
	ad, url := runEvents(t, srv, sink)
	p := sendPrompt(t, srv, ad, "C2", "1700000000.000007", "Run `ls`?")
	payload, err := srv.PressPayload(slacktest.Press{Channel: "C2", TS: p.TS, UserID: "U3", UserName: "bob", Label: "Deny"})
	if err != nil {
		t.Fatal(err)
	}
	form := slacktest.InteractiveForm(payload)
	for _, tc := range []struct {
		name string
		sign func(h http.Header, body []byte)
	}{
		{"wrong secret", func(h http.Header, b []byte) { slacktest.Sign(h, "another-secret-value", time.Now(), b) }},
		{"stale", func(h http.Header, b []byte) { slacktest.Sign(h, signingSecret, time.Now().Add(-10*time.Minute), b) }},
		{"unsigned", func(http.Header, []byte) {}},
	} {
		postSigned(t, url, "application/x-www-form-urlencoded", form, tc.sign, http.StatusUnauthorized)
	}
	postSigned(t, url, "application/x-www-form-urlencoded", form, func(h http.Header, b []byte) { slacktest.Sign(h, signingSecret, time.Now(), b) }, http.StatusOK)
	got := sink.nextPress(t)
	want := adapters.Press{
		Chat:     herald.Target{Platform: herald.PlatformSlack, ChatID: "C2", ThreadID: "1700000000.000007"},
		ChatType: herald.ChatChannel, MessageID: p.TS, UserID: "U3", UserName: "bob", Data: "ap:1:deny",
	}
	if got != want {
		t.Errorf("press = %+v\nwant    %+v", got, want)
	}
	reply := waitEphemeral(t, srv, 1)
	if reply.Channel != "C2" || reply.User != "U3" || reply.ThreadTS != "1700000000.000007" || reply.Text != "Denied." {
		t.Errorf("reply = %+v", reply)
	}
	// the refused posts reached no sink and got no reply
	select {
	case p := <-sink.presses:
		t.Errorf("a second press reached the sink: %+v", p)
	default:
	}
	if n := len(slices.DeleteFunc(srv.Posts(), func(p slacktest.Post) bool { return !p.Ephemeral() })); n != 1 {
		t.Errorf("%d ephemeral posts, want 1", n)
	}
}

// A sink that takes no presses: the presser is told the button no longer
// works, in both modes.
func TestPressWithoutPressSink(t *testing.T) {
	sink := make(chanSink, 8)
	srv, ad := startAdapter(t, sink)
	p := sendPrompt(t, srv, ad, "C1", "1700000000.000009", "Run `ls`?")
	if _, err := srv.PressButton(slacktest.Press{Channel: "C1", TS: p.TS, UserID: "U9", Label: "Always"}); err != nil {
		t.Fatal(err)
	}
	if reply := waitEphemeral(t, srv, 1); reply.User != "U9" || reply.Text != slack.NoPressSink || reply.ThreadTS != p.ThreadTS {
		t.Errorf("reply = %+v, want %q to U9", reply, slack.NoPressSink)
	}

	esrv := newFake(t)
	ead, url := runEvents(t, esrv, make(chanSink, 8))
	ep := sendPrompt(t, esrv, ead, "C1", "", "Run `ls`?")
	payload, err := esrv.PressPayload(slacktest.Press{Channel: "C1", TS: ep.TS, UserID: "U8", Label: "Deny"})
	if err != nil {
		t.Fatal(err)
	}
	postSigned(t, url, "application/x-www-form-urlencoded", slacktest.InteractiveForm(payload), func(h http.Header, b []byte) { slacktest.Sign(h, signingSecret, time.Now(), b) }, http.StatusOK)
	if reply := waitEphemeral(t, esrv, 1); reply.User != "U8" || reply.Text != slack.NoPressSink {
		t.Errorf("events API reply = %+v, want %q to U8", reply, slack.NoPressSink)
	}
}

// Interactions that are no button press (a menu, a modal) and presses the
// sink answers with "" are acked and show nothing.
func TestInteractionsIgnored(t *testing.T) {
	sink := newPressSink("")
	srv, ad := startAdapter(t, sink)
	p := sendPrompt(t, srv, ad, "C1", "", "Run `ls`?")
	payload, err := srv.PressPayload(slacktest.Press{Channel: "C1", TS: p.TS, UserID: "U9", Label: "Deny"})
	if err != nil {
		t.Fatal(err)
	}
	var menu map[string]any
	if err := json.Unmarshal(payload, &menu); err != nil {
		t.Fatal(err)
	}
	menu["actions"] = []any{map[string]any{"type": "static_select", "action_id": "pick", "block_id": "b",
		"selected_option": map[string]any{"value": "x", "text": map[string]any{"type": "plain_text", "text": "X"}}}}
	selectPayload, _ := json.Marshal(menu)
	ins := []slacktest.Injected{
		srv.InjectInteractive(selectPayload),
		srv.InjectInteractive([]byte(`{"type":"view_submission","user":{"id":"U9"},"view":{"id":"V1","type":"modal"}}`)),
		srv.InjectInteractive(payload), // answered ""
	}
	if got := sink.nextPress(t); got.Data != "ap:1:deny" {
		t.Errorf("press = %+v", got)
	}
	for _, in := range ins {
		if err := srv.WaitAcked(ctxT(t), in.EnvelopeID); err != nil {
			t.Fatal(err)
		}
	}
	// presses are handled in order: the select and the modal came first
	select {
	case p := <-sink.presses:
		t.Errorf("another press reached the sink: %+v", p)
	default:
	}
	if n := len(srv.Posts()); n != 1 {
		t.Errorf("%d posts, want the prompt alone: %+v", n, srv.Posts())
	}
}
