package gateway

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/hooks"
)

// in is a message from user (named name) in chat on the fake platform; a
// chat whose id starts with "g" is a group.
func in(chat, user, name, text string) herald.Message {
	typ := herald.ChatDM
	if strings.HasPrefix(chat, "g") {
		typ = herald.ChatGroup
	}
	return herald.Message{Text: text, Mentioned: true,
		Source: herald.Source{Platform: "fake", ChatID: chat, ChatType: typ, UserID: user, UserName: name}}
}

// newButtonBubble is a bubble on a fake platform that draws buttons.
func newButtonBubble(t *testing.T, opts ...harnessOpt) (*bubble, *buttonAdapter) {
	ad := &buttonAdapter{fakeAdapter: fakeAdapter{name: "fake"}}
	return newBubble(t, ad, nil, opts...), ad
}

func (b *bubble) receive(m herald.Message) *adapters.Receipt {
	return b.runner.Receive(context.Background(), m)
}

// press presses the button labelled label under the last prompt, as user.
func (b *bubble) press(ad *buttonAdapter, chat, user, name, label string) string {
	b.t.Helper()
	outs, ids := ad.prompts()
	if len(outs) == 0 {
		b.t.Fatal("no prompt with buttons was sent")
	}
	return b.pressOn(outs[len(outs)-1], ids[len(ids)-1], chat, user, name, label)
}

func (b *bubble) pressOn(out adapters.Outgoing, id, chat, user, name, label string) string {
	b.t.Helper()
	for _, bt := range out.Buttons {
		if bt.Label == label {
			return b.runner.Press(context.Background(), adapters.Press{Chat: herald.Target{Platform: "fake", ChatID: chat},
				MessageID: id, UserID: user, UserName: name, Data: bt.Data})
		}
	}
	b.t.Fatalf("no button %q under %q", label, out.Text)
	return ""
}

func ran(ad *buttonAdapter, cmd string) int {
	n := 0
	for _, t := range ad.texts() {
		if strings.Contains(t, "ran "+cmd) {
			n++
		}
	}
	return n
}

func awaiting(t *testing.T, rec *adapters.Receipt) {
	t.Helper()
	if o := outcome(t, rec); o.Status != adapters.StatusAwaitingInput {
		t.Fatalf("outcome %+v, want awaiting_input", o)
	}
}

// The prompt's last part carries the four buttons; a press by the asker
// answers it as /approve session does, and the prompt is edited to say
// who decided, with no buttons left.
func TestApprovalButtonPress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, ad := newButtonBubble(t)
		defer b.stop()
		awaiting(t, b.receive(in("c1", "u1", "alice", "run: rm -rf /tmp/x")))
		outs, ids := ad.prompts()
		if len(outs) != 1 || !strings.Contains(outs[0].Text, "rm -rf /tmp/x") || !strings.Contains(outs[0].Text, approvalInstructions) {
			t.Fatalf("prompts %+v", outs)
		}
		var labels, styles []string
		for _, bt := range outs[0].Buttons {
			labels, styles = append(labels, bt.Label), append(styles, bt.Style)
			if len(bt.Data) > adapters.MaxButtonData || !strings.HasPrefix(bt.Data, "ap:") {
				t.Fatalf("button data %q", bt.Data)
			}
		}
		if strings.Join(labels, "|") != "Approve once|Approve for session|Always|Deny" || strings.Join(styles, "|") != "primary|||danger" {
			t.Fatalf("buttons %q %q", labels, styles)
		}
		if got := b.press(ad, "c1", "u1", "alice", "Approve for session"); got != "✅ Approved (session)." {
			t.Fatalf("press answered %q", got)
		}
		synctest.Wait()
		if n := ran(ad, "rm -rf /tmp/x"); n != 1 {
			t.Fatalf("the command ran %d times: %q", n, ad.texts())
		}
		cl := ad.closed()
		if len(cl) != 1 || cl[0].id != ids[0] || cl[0].to.ChatID != "c1" ||
			!strings.HasSuffix(cl[0].text, "\n\n✅ Approved for this session by alice") ||
			!strings.Contains(cl[0].text, "rm -rf /tmp/x") || strings.Contains(cl[0].text, "/approve") {
			t.Fatalf("closed %+v", cl)
		}
		// a second press finds nothing waiting, and runs nothing
		if got := b.press(ad, "c1", "u1", "alice", "Approve once"); got != StaleApprovalText {
			t.Fatalf("second press answered %q", got)
		}
		synctest.Wait()
		if n := ran(ad, "rm -rf /tmp/x"); n != 1 {
			t.Fatalf("the command ran %d times", n)
		}
	})
}

// In a group, a stranger's press is refused and changes nothing; a
// listed approver's press approves.
func TestApprovalButtonWhoMayPress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, ad := newButtonBubble(t, func(c *Config) {
			c.ApproverUsers = map[herald.Platform][]string{"fake": {"u3"}, "other": {"u2"}}
		})
		defer b.stop()
		awaiting(t, b.receive(in("g1", "u1", "alice", "run: rm -rf /tmp/x")))
		if got := b.press(ad, "g1", "u2", "mallory", "Approve once"); got != NotYourApprovalText {
			t.Fatalf("stranger's press answered %q", got)
		}
		// the right token in another chat, or with no user, is no answer either
		if got := b.press(ad, "g2", "u1", "alice", "Approve once"); got != StaleApprovalText {
			t.Fatalf("press in another chat answered %q", got)
		}
		if got := b.press(ad, "g1", "", "", "Approve once"); got != NotYourApprovalText {
			t.Fatalf("press with no user answered %q", got)
		}
		synctest.Wait()
		if n := ran(ad, "rm -rf /tmp/x"); n != 0 || len(ad.closed()) != 0 {
			t.Fatalf("after refused presses: ran %d, closed %+v", n, ad.closed())
		}
		if got := b.press(ad, "g1", "u3", "carol", "Approve once"); got != "✅ Approved (once)." {
			t.Fatalf("approver's press answered %q", got)
		}
		synctest.Wait()
		if n := ran(ad, "rm -rf /tmp/x"); n != 1 {
			t.Fatalf("the command ran %d times", n)
		}
		if cl := ad.closed(); len(cl) != 1 || !strings.HasSuffix(cl[0].text, "✅ Approved once by carol") {
			t.Fatalf("closed %+v", cl)
		}
	})
}

// Data that is not an approval button's gets the generic answer.
func TestPressUnknownData(t *testing.T) {
	r := New(Config{})
	for _, data := range []string{"", "ap:", "ap:abc", "ap::once", "ap:abc:maybe", "xx:abc:once"} {
		if got := r.Press(context.Background(), adapters.Press{Data: data, UserID: "u1"}); got != UnknownButtonText {
			t.Errorf("%q answered %q", data, got)
		}
	}
	if got := r.Press(context.Background(), adapters.Press{Data: "ap:0123456789abcdef:deny", UserID: "u1"}); got != StaleApprovalText {
		t.Errorf("unknown token answered %q", got)
	}
}

// Typed answers close the buttons too, and so does a timeout.
func TestApprovalPromptClosedByTypedAnswerAndTimeout(t *testing.T) {
	for _, tc := range []struct{ answer, decision string }{
		{"/approve", "✅ Approved once by alice"},
		{"/approve always", "✅ Always approved by alice"},
		{"/deny", "❌ Denied by alice"},
		{"", "⌛ No answer in time"},
	} {
		t.Run(tc.decision, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, ad := newButtonBubble(t, func(c *Config) { c.ApprovalTimeout = time.Minute })
				defer b.stop()
				awaiting(t, b.receive(in("c1", "u1", "alice", "run: rm -rf /tmp/x")))
				if tc.answer != "" {
					if o := outcome(t, b.receive(in("c1", "u1", "alice", tc.answer))); o.Status != adapters.StatusDone {
						t.Fatalf("answer %+v", o)
					}
				} else {
					time.Sleep(time.Minute + time.Second)
				}
				synctest.Wait()
				_, ids := ad.prompts()
				if cl := ad.closed(); len(cl) != 1 || cl[0].id != ids[0] || !strings.HasSuffix(cl[0].text, "\n\n"+tc.decision) {
					t.Fatalf("closed %+v", cl)
				}
				if got := b.press(ad, "c1", "u1", "alice", "Approve once"); got != StaleApprovalText {
					t.Fatalf("press after the answer: %q", got)
				}
			})
		})
	}
}

// A button of an earlier prompt does not answer a later approval.
func TestOldPromptButtonDoesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, ad := newButtonBubble(t)
		defer b.stop()
		awaiting(t, b.receive(in("c1", "u1", "alice", "run: rm -rf /tmp/x")))
		b.press(ad, "c1", "u1", "alice", "Approve once")
		synctest.Wait()
		awaiting(t, b.receive(in("c1", "u1", "alice", "run: rm -rf /tmp/y")))
		outs, ids := ad.prompts()
		if len(outs) != 2 || outs[0].Buttons[0].Data == outs[1].Buttons[0].Data {
			t.Fatalf("prompts %+v", outs)
		}
		if got := b.pressOn(outs[0], ids[0], "c1", "u1", "alice", "Approve once"); got != StaleApprovalText {
			t.Fatalf("old button answered %q", got)
		}
		synctest.Wait()
		if n := ran(ad, "rm -rf /tmp/y"); n != 0 {
			t.Fatal("an old prompt's button ran the new command")
		}
		if got := b.pressOn(outs[1], ids[1], "c1", "u1", "alice", "Deny"); got != "❌ Denied." {
			t.Fatalf("new button answered %q", got)
		}
		synctest.Wait()
		if n := ran(ad, "rm -rf /tmp/y"); n != 0 || !strings.Contains(strings.Join(ad.texts(), "\n"), "denied") {
			t.Fatalf("after deny: %q", ad.texts())
		}
	})
}

// A prompt split in parts has its buttons on the last one, which is the
// one closed; a close that fails changes nothing for the turn.
func TestApprovalPromptSplitAndCloseFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &buttonAdapter{fakeAdapter: fakeAdapter{name: "fake", limits: adapters.Limits{MaxLength: 80}}}
		b := newBubble(t, ad, nil)
		defer b.stop()
		long := "rm -rf /tmp/" + strings.Repeat("x", 100)
		awaiting(t, b.receive(in("c1", "u1", "alice", "run: "+long)))
		outs, ids := ad.prompts()
		sent := ad.texts()
		if len(outs) != 1 || len(sent) < 2 || sent[len(sent)-1] != outs[0].Text || outs[0].Part != outs[0].Parts {
			t.Fatalf("sent %q, with buttons %+v", sent, outs)
		}
		b.press(ad, "c1", "u1", "alice", "Approve once")
		synctest.Wait()
		if cl := ad.closed(); len(cl) != 1 || cl[0].id != ids[0] || len([]rune(cl[0].text)) > 80 {
			t.Fatalf("closed %+v", cl)
		}

		ad.mu.Lock()
		ad.closeErr = errors.New("edit refused")
		ad.mu.Unlock()
		awaiting(t, b.receive(in("c2", "u1", "alice", "run: rm -rf /tmp/z")))
		b.press(ad, "c2", "u1", "alice", "Approve once")
		synctest.Wait()
		if n := ran(ad, "rm -rf /tmp/z"); n != 1 {
			t.Fatalf("with a failing close the command ran %d times: %q", n, ad.texts())
		}
	})
}

// The approval hooks see a press exactly as they see a typed answer.
func TestApprovalHooksSameForPress(t *testing.T) {
	payloads := func(answer func(b *bubble, ad *buttonAdapter)) []hooks.Approval {
		var out []hooks.Approval
		synctest.Test(t, func(t *testing.T) {
			b, ad := newButtonBubble(t)
			defer b.stop()
			awaiting(t, b.receive(in("c1", "u1", "alice", "run: rm -rf /tmp/x")))
			answer(b, ad)
			synctest.Wait()
			for _, name := range []string{hooks.PreApprovalRequestHook, hooks.PostApprovalResponseHook} {
				for _, p := range b.rec.payloads(name) {
					out = append(out, *p.(*hooks.Approval))
				}
			}
		})
		return out
	}
	typed := payloads(func(b *bubble, ad *buttonAdapter) {
		outcome(t, b.receive(in("c1", "u1", "alice", "/approve session")))
	})
	pressed := payloads(func(b *bubble, ad *buttonAdapter) {
		b.press(ad, "c1", "u1", "alice", "Approve for session")
	})
	if len(typed) != 2 || typed[1].Choice != "session" {
		t.Fatalf("typed: %+v", typed)
	}
	if !reflect.DeepEqual(pressed, typed) {
		t.Fatalf("pressed %+v\ntyped   %+v", pressed, typed)
	}
}

// FuzzParseApprovalData: a press's data is the platform's report of a
// button; whatever it holds, it is either refused or read back exactly
// as approvalButtons writes it.
func FuzzParseApprovalData(f *testing.F) {
	for _, b := range approvalButtons("0123456789abcdef") {
		f.Add(b.Data)
	}
	f.Add("ap:a:b:once")
	f.Add("ap::once")
	f.Fuzz(func(t *testing.T, data string) {
		token, choice, ok := parseApprovalData(data)
		if !ok {
			return
		}
		if token == "" || strings.Contains(token, ":") || data != approvalDataPrefix+token+":"+string(choice) {
			t.Fatalf("%q read as token %q choice %q", data, token, choice)
		}
	})
}
