package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald/adapters/discord/discordtest"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// The approval buttons through a whole gateway on the Discord fake
// (components, INTERACTION_CREATE, ephemeral interaction responses): see
// approvalButtonsScenario.
func TestApprovalButtonsOnDiscord(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	dc := discordtest.New()
	t.Cleanup(dc.Close)
	people := buttonCast{
		ann: person{id: "555000000000000001", name: "ann"}, bob: person{id: "555000000000000002", name: "bob"},
		mallory: person{id: "555000000000000003", name: "mallory"}, carol: person{id: "555000000000000004", name: "carol"},
	}
	cfg := "platforms:\n  discord:\n    api_base: " + dc.APIBase() +
		"\n    allowed_users: [\"*\"]\n    approvers: [\"" + people.carol.id + "\"]\n"
	g, ctx := startForButtons(t, home, work, cfg, map[string]string{"DISCORD_BOT_TOKEN": "discord-test-token-0123456789"}, "discord")
	approvalButtonsScenario(t, &discordButtons{t: t, dc: dc, g: g, ctx: ctx, seen: map[string]bool{}}, people, work)
}

// The approval buttons through a whole gateway on the Slack fake in
// Socket Mode (Block Kit, block_actions in interactive envelopes,
// chat.postEphemeral): see approvalButtonsScenario.
func TestApprovalButtonsOnSlack(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	const bot, app = "xoxb-test-bot-token-0123456789", "xapp-test-app-token-0123456789"
	sl := slacktest.New(slacktest.Options{BotToken: bot, AppToken: app})
	t.Cleanup(sl.Close)
	people := buttonCast{
		ann: person{id: "U0ANN0001", name: "ann"}, bob: person{id: "U0BOB0001", name: "bob"},
		mallory: person{id: "U0MAL0001", name: "mallory"}, carol: person{id: "U0CAR0001", name: "carol"},
	}
	cfg := "platforms:\n  slack:\n    api_url: " + sl.APIURL() +
		"\n    allowed_users: [\"*\"]\n    approvers: [" + people.carol.id + "]\n"
	g, ctx := startForButtons(t, home, work, cfg, map[string]string{"SLACK_BOT_TOKEN": bot, "SLACK_APP_TOKEN": app}, "slack")
	approvalButtonsScenario(t, &slackButtons{t: t, sl: sl, g: g, ctx: ctx, seen: map[string]bool{}}, people, work)
}

// person is a platform user: an id and the name the platform shows.
type person struct{ id, name string }

// buttonCast are the people of approvalButtonsScenario: ann and bob ask,
// mallory is a stranger, carol is listed in platforms.<name>.approvers.
type buttonCast struct{ ann, bob, mallory, carol person }

// postedPrompt is an approval prompt as a platform's fake shows it: its
// chat, its message id, its thread ("" for none), and on Discord the
// slash command's interaction it is the response to ("" for none).
type postedPrompt struct{ chat, id, thread, interaction string }

// buttonPlatform drives approval prompts on one platform's fake.
type buttonPlatform interface {
	// ask sends text from from, in a DM or, mentioning the bot, in a
	// group chat.
	ask(group bool, from person, text string)
	// prompt waits for the next message with approval buttons, and
	// checks that it has the four and went to the chat from asked in.
	prompt(group bool, from person) postedPrompt
	// slash has from run a slash command with text for the agent in a
	// second group chat, and waits for the prompt that answers it.
	slash(from person, text string) postedPrompt
	// press presses the button labelled label under p as who, and
	// returns what who alone was shown in answer.
	press(p postedPrompt, who person, label string) string
	// hasButtons reports whether p still shows its four buttons.
	hasButtons(p postedPrompt) bool
	// closedWith waits until p shows decision and has no buttons left.
	closedWith(p postedPrompt, decision string)
	// said waits until the model's answer to the turn p belongs to
	// (after p, in its chat) says text.
	said(p postedPrompt, text string)
	log() string
}

// startForButtons starts a gateway on home with cleaningModel working in
// work and config.yaml text cfg (its platforms block), and waits until
// platform is connected. The context ends with the test.
func startForButtons(t *testing.T, home, work, cfg string, env map[string]string, platform string) (*cmdtest.Gateway, context.Context) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+work+"\n"+cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	all := modelEnv(cleaningModel(t))
	for k, v := range env {
		all[k] = v
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: all})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	waitHealth(t, g, ctx, platform)
	return g, ctx
}

// approvalButtonsScenario proves the approval buttons on platform, with a
// gateway running cleaningModel in work: in a DM the asker's press on
// "Approve once" approves, the command runs once and the asker is told
// so; in a group a stranger's press is refused, runs nothing and leaves
// the buttons, then a listed approver's press approves; the prompt of a
// turn started by a slash command takes presses the same way; a press on
// "Deny" denies and nothing runs; and each decided prompt is edited to
// show the decision with its buttons gone.
func approvalButtonsScenario(t *testing.T, p buttonPlatform, c buttonCast, work string) {
	ran := func(pr postedPrompt, name string) {
		t.Helper()
		p.said(pr, "cleaned-"+name)
		if n := ranLog(work)[name]; n != 1 {
			t.Fatalf("%s ran %d times\n%s", name, n, p.log())
		}
	}

	const once, refused, denied = "✅ Approved (once).", "Only the person who asked, or an approver, can answer this.", "❌ Denied."
	// press has who press label under pr and checks what who was shown
	press := func(pr postedPrompt, who person, label, want string) {
		t.Helper()
		if got := p.press(pr, who, label); got != want {
			t.Fatalf("%s's press on %q answered %q, want %q", who.name, label, got, want)
		}
	}

	// in a DM, the asker's press approves; the command runs once
	p.ask(false, c.ann, "please clean a")
	a := p.prompt(false, c.ann)
	press(a, c.ann, "Approve once", once)
	p.closedWith(a, "Approved once by "+c.ann.name)
	ran(a, "a")

	// in a group, a stranger is refused: nothing runs and the buttons
	// stay; then a listed approver approves
	p.ask(true, c.bob, "please clean b")
	b := p.prompt(true, c.bob)
	press(b, c.mallory, "Approve once", refused)
	if ranLog(work)["b"] != 0 || !p.hasButtons(b) {
		t.Fatalf("after the stranger's press: ran %v, buttons shown %v", ranLog(work), p.hasButtons(b))
	}
	press(b, c.carol, "Approve once", once)
	p.closedWith(b, "Approved once by "+c.carol.name)
	ran(b, "b")

	// a slash command's turn (in another group: b's turn may still be
	// ending): its prompt, on Discord the interaction's response, takes
	// presses the same way
	e := p.slash(c.bob, "please clean e")
	press(e, c.mallory, "Approve once", refused)
	press(e, c.bob, "Approve once", once)
	p.closedWith(e, "Approved once by "+c.bob.name)
	ran(e, "e")

	// a press on Deny denies; nothing runs
	p.ask(false, c.ann, "please clean d")
	d := p.prompt(false, c.ann)
	press(d, c.ann, "Deny", denied)
	p.closedWith(d, "Denied by "+c.ann.name)
	p.said(d, "denied")
	if got := ranLog(work); got["a"] != 1 || got["b"] != 1 || got["e"] != 1 || got["d"] != 0 {
		t.Fatalf("ran.log counts %v", got)
	}
}

// Discord: DMs are in channel dm-<user id>; the groups are channels
// discordChannel and discordSlashChannel of guild discordGuild.
const discordGuild, discordChannel, discordSlashChannel = "700000000000000001", "700000000000000002", "700000000000000003"

type discordButtons struct {
	t    *testing.T
	dc   *discordtest.Server
	g    *cmdtest.Gateway
	ctx  context.Context
	seen map[string]bool // the prompts prompt returned
}

var _ buttonPlatform = (*discordButtons)(nil)

func discordUser(p person) *discordgo.User { return &discordgo.User{ID: p.id, Username: p.name} }

func (d *discordButtons) log() string { return d.g.Log() }

func (d *discordButtons) ask(group bool, from person, text string) {
	if group {
		d.dc.Inject(d.dc.Mention(discordGuild, discordChannel, discordUser(from), text))
		return
	}
	d.dc.Inject(d.dc.DM(discordUser(from), text))
}

// waitSent waits until find finds a message among the messages sent, in
// order, and returns it.
func (d *discordButtons) waitSent(find func([]discordtest.Message) (discordtest.Message, bool), what string) discordtest.Message {
	d.t.Helper()
	for {
		sent := d.dc.Sent()
		if m, ok := find(sent); ok {
			return m
		}
		if _, err := d.dc.WaitSent(d.ctx, len(sent)+1); err != nil {
			d.t.Fatalf("%s never sent: %v\n%s", what, err, d.log())
		}
	}
}

func (d *discordButtons) prompt(group bool, from person) postedPrompt {
	d.t.Helper()
	m := d.waitSent(func(sent []discordtest.Message) (discordtest.Message, bool) {
		return firstOf(sent, func(m discordtest.Message) bool { return len(discordtest.Buttons(m.Components)) > 0 && !d.seen[m.ID] })
	}, "an approval prompt")
	chat := "dm-" + from.id
	if group {
		chat = discordChannel
	}
	return d.checkPrompt(m, chat, "")
}

// checkPrompt checks that m is an approval prompt in chat with its four
// buttons, and returns it, seen.
func (d *discordButtons) checkPrompt(m discordtest.Message, chat, interaction string) postedPrompt {
	d.t.Helper()
	d.seen[m.ID] = true
	if m.ChannelID != chat || !strings.Contains(m.Content, "needs your approval") || len(discordtest.Buttons(m.Components)) != 4 {
		d.t.Fatalf("prompt %s in %s: %q with %d buttons, want one in %s", m.ID, m.ChannelID, m.Content, len(discordtest.Buttons(m.Components)), chat)
	}
	return postedPrompt{chat: m.ChannelID, id: m.ID, interaction: interaction}
}

// slash runs /queue, which on an idle chat runs its text as a turn; the
// prompt is the interaction's response, sent through its webhook.
func (d *discordButtons) slash(from person, text string) postedPrompt {
	d.t.Helper()
	id := d.dc.InjectInteraction(d.dc.SlashCommand(discordGuild, discordSlashChannel, discordUser(from), "queue", discordtest.StringOption("args", text)))
	it, err := d.dc.WaitInteraction(d.ctx, id, func(it discordtest.Interaction) bool { return it.Original != "" })
	if err != nil {
		d.t.Fatalf("slash command %s never answered: %v\n%s", id, err, d.log())
	}
	// deferred ("thinking…"), the response is empty until the first reply
	m, err := d.dc.WaitMessage(d.ctx, it.Original, func(m discordtest.Message) bool { return m.Content != "" })
	if err != nil {
		d.t.Fatalf("the response to slash command %s never came: %v\n%s", id, err, d.log())
	}
	return d.checkPrompt(m, discordSlashChannel, id)
}

func (d *discordButtons) press(p postedPrompt, who person, label string) string {
	d.t.Helper()
	m, _ := d.dc.Message(p.id)
	customID := ""
	for _, b := range discordtest.Buttons(m.Components) {
		if b.Label == label {
			customID = b.CustomID
		}
	}
	if customID == "" {
		d.t.Fatalf("prompt %s has no button %q: %s", p.id, label, m.Components)
	}
	guild := ""
	if !strings.HasPrefix(p.chat, "dm-") {
		guild = discordGuild
	}
	id := d.dc.InjectInteraction(d.dc.ButtonPress(guild, p.chat, p.id, discordUser(who), customID))
	it, err := d.dc.WaitInteraction(d.ctx, id, func(it discordtest.Interaction) bool { return len(it.Responses) > 0 })
	if err != nil {
		d.t.Fatalf("press %s never answered: %v\n%s", id, err, d.log())
	}
	r := it.Responses[0]
	if r.Type != discordgo.InteractionResponseChannelMessageWithSource || r.Flags&discordgo.MessageFlagsEphemeral == 0 {
		d.t.Fatalf("press %s answered with type %d flags %d %q, want an ephemeral message", id, r.Type, r.Flags, r.Content)
	}
	return r.Content
}

func (d *discordButtons) hasButtons(p postedPrompt) bool {
	m, _ := d.dc.Message(p.id)
	return len(discordtest.Buttons(m.Components)) == 4
}

func (d *discordButtons) closedWith(p postedPrompt, decision string) {
	d.t.Helper()
	_, err := d.dc.WaitMessage(d.ctx, p.id, func(m discordtest.Message) bool {
		// an edit that removed the components leaves "[]"
		return strings.Contains(m.Content, decision) && string(m.Components) == "[]"
	})
	if err != nil {
		m, _ := d.dc.Message(p.id)
		d.t.Fatalf("prompt %s not closed with %q: %q components %s\n%s", p.id, decision, m.Content, m.Components, d.log())
	}
}

// said waits for the model's answer after p (the first message sent to
// p's chat after it, or the first follow-up of p's interaction; streamed,
// it may be edited) to say text.
func (d *discordButtons) said(p postedPrompt, text string) {
	d.t.Helper()
	var answer string
	if p.interaction != "" {
		it, err := d.dc.WaitInteraction(d.ctx, p.interaction, func(it discordtest.Interaction) bool { return len(it.Followups) > 0 })
		if err != nil {
			d.t.Fatalf("no follow-up to slash command %s: %v\n%s", p.interaction, err, d.log())
		}
		answer = it.Followups[0]
	} else {
		answer = d.waitSent(func(sent []discordtest.Message) (discordtest.Message, bool) {
			after := false
			return firstOf(sent, func(m discordtest.Message) bool {
				found := after && m.ChannelID == p.chat
				after = after || m.ID == p.id
				return found
			})
		}, "an answer after prompt "+p.id).ID
	}
	if _, err := d.dc.WaitMessage(d.ctx, answer, func(m discordtest.Message) bool {
		return strings.HasPrefix(m.Content, "result:") && strings.Contains(m.Content, text)
	}); err != nil {
		m, _ := d.dc.Message(answer)
		d.t.Fatalf("the answer after prompt %s never said %q: %q\n%s", p.id, text, m.Content, d.log())
	}
}

// Slack: DMs are in channel D<user id>; the groups are slackChannel and
// slackSlashChannel.
const slackChannel, slackSlashChannel = "C0GROUP01", "C0GROUP02"

type slackButtons struct {
	t    *testing.T
	sl   *slacktest.Server
	g    *cmdtest.Gateway
	ctx  context.Context
	seen map[string]bool // the prompts prompt returned
}

var _ buttonPlatform = (*slackButtons)(nil)

func (s *slackButtons) log() string { return s.g.Log() }

func (s *slackButtons) ask(group bool, from person, text string) {
	if group {
		s.sl.Mention(slackChannel, from.id, text)
		return
	}
	s.sl.DM(from.id, text)
}

// waitPosts waits until find finds a post among the bot's posts and
// edits, in order, and returns it.
func (s *slackButtons) waitPosts(find func([]slacktest.Post) (slacktest.Post, bool), what string) slacktest.Post {
	s.t.Helper()
	for {
		posts := s.sl.Posts()
		if p, ok := find(posts); ok {
			return p
		}
		if _, err := s.sl.WaitPosts(s.ctx, len(posts)+1); err != nil {
			s.t.Fatalf("no %s: %v\n%s", what, err, s.log())
		}
	}
}

// slackButtonsOf are the elements of a message's actions blocks.
func slackButtonsOf(p slacktest.Post) []slacktest.Element {
	var out []slacktest.Element
	for _, b := range p.Blocks {
		if b.Type == "actions" {
			out = append(out, b.Elements...)
		}
	}
	return out
}

func (s *slackButtons) prompt(group bool, from person) postedPrompt {
	s.t.Helper()
	if group {
		return s.promptIn(slackChannel)
	}
	return s.promptIn("D" + from.id)
}

// promptIn waits for the next message with approval buttons and checks
// that it has the four and went to chat.
func (s *slackButtons) promptIn(chat string) postedPrompt {
	s.t.Helper()
	m := s.waitPosts(func(posts []slacktest.Post) (slacktest.Post, bool) {
		return firstOf(posts, func(p slacktest.Post) bool {
			return p.Method == "chat.postMessage" && len(slackButtonsOf(p)) > 0 && !s.seen[p.TS]
		})
	}, "an approval prompt")
	s.seen[m.TS] = true
	if m.Channel != chat || !strings.Contains(m.Text, "needs your approval") || len(slackButtonsOf(m)) != 4 {
		s.t.Fatalf("prompt %s in %s: %q with %d buttons, want one in %s", m.TS, m.Channel, m.Text, len(slackButtonsOf(m)), chat)
	}
	return postedPrompt{chat: m.Channel, id: m.TS, thread: m.ThreadTS}
}

func (s *slackButtons) press(p postedPrompt, who person, label string) string {
	s.t.Helper()
	before := len(s.sl.Posts())
	if _, err := s.sl.PressButton(slacktest.Press{Channel: p.chat, TS: p.id, UserID: who.id, UserName: who.name, Label: label}); err != nil {
		s.t.Fatal(err)
	}
	answer := s.waitPosts(func(posts []slacktest.Post) (slacktest.Post, bool) {
		return firstOf(posts[before:], func(e slacktest.Post) bool { return e.Ephemeral() && e.Channel == p.chat && e.User == who.id })
	}, "an answer to "+who.name+"'s press")
	if answer.ThreadTS != p.thread {
		s.t.Fatalf("the answer to a press on %s went to thread %q, want %q", p.id, answer.ThreadTS, p.thread)
	}
	return answer.Text
}

// slash runs the umbrella command /herald with text for the agent; the
// prompt goes to the channel.
func (s *slackButtons) slash(from person, text string) postedPrompt {
	s.sl.SlashCommandIn(slackSlashChannel, from.id, "/herald", text)
	return s.promptIn(slackSlashChannel)
}

func (s *slackButtons) hasButtons(p postedPrompt) bool {
	m, _ := s.sl.Shown(p.chat, p.id)
	return len(slackButtonsOf(m)) == 4
}

func (s *slackButtons) closedWith(p postedPrompt, decision string) {
	s.t.Helper()
	s.waitPosts(func([]slacktest.Post) (slacktest.Post, bool) {
		// what Slack shows is the sections; the text is the fallback
		m, _ := s.sl.Shown(p.chat, p.id)
		actions, sections := false, ""
		for _, b := range m.Blocks {
			actions = actions || b.Type == "actions"
			if b.Type == "section" {
				sections += b.Text.Text + "\n"
			}
		}
		return m, strings.Contains(m.Text, decision) && strings.Contains(sections, decision) && !actions
	}, "prompt "+p.id+" closed with "+decision)
}

// said waits for a post or an edit of the model's answer, in p's chat and
// thread, to say text.
func (s *slackButtons) said(p postedPrompt, text string) {
	s.t.Helper()
	s.waitPosts(func(posts []slacktest.Post) (slacktest.Post, bool) {
		return firstOf(posts, func(e slacktest.Post) bool {
			m, _ := s.sl.Shown(e.Channel, e.TS)
			return e.Channel == p.chat && e.TS != p.id && m.ThreadTS == p.thread &&
				strings.HasPrefix(e.Text, "result:") && strings.Contains(e.Text, text)
		})
	}, "an answer saying "+text)
}

// firstOf is the first of xs that ok holds for.
func firstOf[T any](xs []T, ok func(T) bool) (T, bool) {
	for _, x := range xs {
		if ok(x) {
			return x, true
		}
	}
	var zero T
	return zero, false
}
