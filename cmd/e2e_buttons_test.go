package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// A whole gateway on the Telegram fake, with a model that answers "clean
// <name>" with a dangerous terminal command appending <name> to ran.log:
// the approval prompt carries buttons; the asker's press approves and the
// command runs once; in a group a stranger's press is refused and runs
// nothing, and a listed approver's press approves; every decided prompt
// is edited to show the decision with its buttons gone; typed /approve
// still works and closes the buttons too; and a press on an old prompt's
// button after a new approval started does nothing.
func TestApprovalButtonsOnTelegram(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	model := cleaningModel(t)
	tg := telegramtest.New(telegramtest.Options{MaxPoll: time.Second})
	t.Cleanup(tg.Close)
	cfg := "agent:\n  workdir: " + work + "\nplatforms:\n  telegram:\n    api_endpoint: " + tg.Endpoint() +
		"\n    poll_timeout: 1\n    allowed_users: [\"*\"]\n    approvers: [9]\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := modelEnv(model)
	env["TELEGRAM_BOT_TOKEN"] = tg.Token()
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	waitHealth(t, g, ctx, "telegram")

	ann := telegramtest.User{ID: 555, UserName: "ann"}
	bob, mallory, carol := telegramtest.User{ID: 7, UserName: "bob"}, telegramtest.User{ID: 8, UserName: "mallory"}, telegramtest.User{ID: 9, UserName: "carol"}
	b := &buttonChat{t: t, tg: tg, g: g, ctx: ctx, work: work}

	// the asker's press approves; the command runs once
	tg.DM(ann.ID, ann.UserName, "please clean a")
	a := b.prompt("555", 1)
	if got := b.press(a, ann, "Approve once"); got != "✅ Approved (once)." {
		t.Fatalf("asker's press answered %q", got)
	}
	b.closedWith(a, "Approved once by ann")
	b.ran("a")

	// in a group: a stranger is refused, nothing runs; an approver approves
	tg.Mention(-100, bob, "please clean b")
	p := b.prompt("-100", 2)
	if got := b.press(p, mallory, "Approve once"); got != "Only the person who asked, or an approver, can answer this." {
		t.Fatalf("stranger's press answered %q", got)
	}
	if b.log()["b"] != 0 || tg.Keyboard("-100", p.MessageID) == nil {
		t.Fatalf("after the stranger's press: ran %v, keyboard %v", b.log(), tg.Keyboard("-100", p.MessageID))
	}
	if got := b.press(p, carol, "Approve once"); got != "✅ Approved (once)." {
		t.Fatalf("approver's press answered %q", got)
	}
	b.closedWith(p, "Approved once by carol")
	b.ran("b")

	// typed /approve works, and closes the buttons
	tg.DM(ann.ID, ann.UserName, "please clean c")
	c := b.prompt("555", 3)
	tg.DM(ann.ID, ann.UserName, "/approve")
	b.closedWith(c, "Approved once by ann")
	b.ran("c")

	// an old prompt's button, pressed while a new approval waits, does nothing
	tg.DM(ann.ID, ann.UserName, "please clean d")
	d := b.prompt("555", 4)
	if got := b.press(c, ann, "Approve once"); got != "This approval is no longer waiting." {
		t.Fatalf("old prompt's press answered %q", got)
	}
	if got := b.press(d, ann, "Deny"); got != "❌ Denied." {
		t.Fatalf("deny answered %q", got)
	}
	b.closedWith(d, "Denied by ann")
	b.said("denied")
	if got := b.log(); got["a"] != 1 || got["b"] != 1 || got["c"] != 1 || got["d"] != 0 {
		t.Fatalf("ran.log counts %v", got)
	}
}

// buttonChat drives approval prompts on the Telegram fake.
type buttonChat struct {
	t    *testing.T
	tg   *telegramtest.Server
	g    *cmdtest.Gateway
	ctx  context.Context
	work string
}

// prompt waits for the n-th message sent with buttons, in chat.
func (b *buttonChat) prompt(chat string, n int) telegramtest.Call {
	b.t.Helper()
	var found []telegramtest.Call
	err := b.tg.Wait(b.ctx, func() bool {
		found = nil
		for _, c := range b.tg.Calls("sendMessage") {
			if len(c.Keyboard) > 0 {
				found = append(found, c)
			}
		}
		return len(found) >= n
	})
	if err != nil {
		b.t.Fatalf("prompt %d never came: %v\n%s", n, err, b.g.Log())
	}
	p := found[n-1]
	if p.ChatID != chat || !strings.Contains(p.Text, "needs your approval") || len(p.Keyboard[0]) != 4 {
		b.t.Fatalf("prompt %+v", p)
	}
	return p
}

// press presses the button labelled label under prompt p as from, and
// returns the answer the presser was shown.
func (b *buttonChat) press(p telegramtest.Call, from telegramtest.User, label string) string {
	b.t.Helper()
	data := ""
	for _, bt := range p.Keyboard[0] {
		if bt.Text == label {
			data = bt.CallbackData
		}
	}
	qid := b.tg.PressButton(p.ChatID, p.MessageID, from, data)
	var answer string
	err := b.tg.Wait(b.ctx, func() bool {
		for _, c := range b.tg.Calls("answerCallbackQuery") {
			if c.CallbackQueryID == qid {
				answer = c.Text
				return true
			}
		}
		return false
	})
	if err != nil {
		b.t.Fatalf("press %s never answered\n%s", qid, b.g.Log())
	}
	return answer
}

// closedWith waits until prompt p was edited to show decision, with its
// buttons gone.
func (b *buttonChat) closedWith(p telegramtest.Call, decision string) {
	b.t.Helper()
	err := b.tg.Wait(b.ctx, func() bool {
		for _, c := range b.tg.Calls("editMessageText") {
			if c.ChatID == p.ChatID && c.MessageID == p.MessageID && strings.Contains(c.Text, decision) && c.Keyboard == nil {
				return b.tg.Keyboard(p.ChatID, p.MessageID) == nil
			}
		}
		return false
	})
	if err != nil {
		b.t.Fatalf("prompt %s not closed with %q: %+v\n%s", p.MessageID, decision, b.tg.Calls("editMessageText"), b.g.Log())
	}
}

// said waits until a message or an edit of the model's answer says text.
func (b *buttonChat) said(text string) {
	b.t.Helper()
	if err := b.tg.Wait(b.ctx, func() bool {
		for _, c := range b.tg.Calls("") {
			answer := strings.HasPrefix(c.Text, "result:")
			if (c.Method == "sendMessage" || c.Method == "editMessageText") && answer && strings.Contains(c.Text, text) {
				return true
			}
		}
		return false
	}); err != nil {
		b.t.Fatalf("nothing said %q\n%s", text, b.g.Log())
	}
}

// ran waits for the answer saying the command for name ran, and checks
// that it ran once.
func (b *buttonChat) ran(name string) {
	b.t.Helper()
	b.said("cleaned-" + name)
	if n := b.log()[name]; n != 1 {
		b.t.Fatalf("%s ran %d times", name, n)
	}
}

// log counts the names in ran.log.
func (b *buttonChat) log() map[string]int {
	data, _ := os.ReadFile(filepath.Join(b.work, "ran.log"))
	out := map[string]int{}
	for _, l := range strings.Fields(string(data)) {
		out[l]++
	}
	return out
}
