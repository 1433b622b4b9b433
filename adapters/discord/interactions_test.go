package discord_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/discord"
	"github.com/heraldgw/herald/adapters/discord/discordtest"
	"github.com/heraldgw/herald/agent"
)

// turnSink is a Sink that hands each message to the test with an
// unresolved receipt, as the gateway does while a turn runs.
type turnSink struct {
	msgs chan herald.Message
	recs chan *adapters.Receipt
	// onReceive, when set, runs inside Receive (before it returns)
	onReceive func(herald.Message)
}

func newTurnSink() *turnSink {
	return &turnSink{msgs: make(chan herald.Message, 16), recs: make(chan *adapters.Receipt, 16)}
}

func (s *turnSink) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	if s.onReceive != nil {
		s.onReceive(m)
	}
	r := adapters.NewReceipt()
	s.msgs <- m
	s.recs <- r
	return r
}

func (s *turnSink) next(t *testing.T) (herald.Message, *adapters.Receipt) {
	t.Helper()
	select {
	case m := <-s.msgs:
		return m, <-s.recs
	case <-time.After(bound):
		t.Fatal("no message reached the sink")
		return herald.Message{}, nil
	}
}

// pressSink is a turnSink that also takes button presses
// (adapters.PressSink), answering each with reply.
type pressSink struct {
	*turnSink
	reply   string
	presses chan adapters.Press
}

func (s *pressSink) Press(ctx context.Context, p adapters.Press) string {
	s.presses <- p
	return s.reply
}

var _ adapters.PressSink = (*pressSink)(nil)

// approvalButtons are the gateway's approval choices.
var approvalButtons = []adapters.Button{
	{Label: "Approve once", Data: "approve:once", Style: "primary"},
	{Label: "Approve for session", Data: "approve:session"},
	{Label: "Always", Data: "approve:always"},
	{Label: "Deny", Data: "deny", Style: "danger"},
}

func TestButtonsDrawnAndClosed(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	ad := run(t, srv, discord.Config{}, newTurnSink())
	ctx := waitCtx(t)
	to := herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1"}
	sent, err := ad.Send(ctx, to, adapters.Outgoing{Text: "Run `rm -rf build`?", Buttons: approvalButtons})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := srv.Message(sent.MessageID)
	var rows []json.RawMessage
	if err := json.Unmarshal(m.Components, &rows); err != nil || len(rows) != 1 {
		t.Fatalf("components %s: want one action row (%v)", m.Components, err)
	}
	got := discordtest.Buttons(m.Components)
	want := []struct {
		id, label string
		style     discordgo.ButtonStyle
	}{
		{"approve:once", "Approve once", discordgo.PrimaryButton},
		{"approve:session", "Approve for session", discordgo.SecondaryButton},
		{"approve:always", "Always", discordgo.SecondaryButton},
		{"deny", "Deny", discordgo.DangerButton},
	}
	if len(got) != len(want) {
		t.Fatalf("buttons = %+v, want %d", got, len(want))
	}
	for i, w := range want {
		if got[i].CustomID != w.id || got[i].Label != w.label || got[i].Style != w.style {
			t.Errorf("button %d = %q %q style %d, want %q %q style %d", i, got[i].CustomID, got[i].Label, got[i].Style, w.id, w.label, w.style)
		}
	}
	golden(t, "send_buttons.json", srv.Sent()[0].Body)

	// a plain edit (a streamed reply) keeps the buttons
	if err := ad.Edit(ctx, to, sent.MessageID, "Run `rm -rf build`? (still waiting)"); err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(sent.MessageID); len(discordtest.Buttons(m.Components)) != 4 {
		t.Errorf("a plain edit took the buttons away: %s", m.Components)
	}
	if err := ad.CloseButtons(ctx, to, sent.MessageID, "Approved once by Alice."); err != nil {
		t.Fatal(err)
	}
	m, _ = srv.Message(sent.MessageID)
	if m.Content != "Approved once by Alice." || len(discordtest.Buttons(m.Components)) != 0 {
		t.Errorf("after CloseButtons: %q with components %s, want the decision and no buttons", m.Content, m.Components)
	}
	edits := srv.Edits()
	if last := edits[len(edits)-1]; string(last.Components) != "[]" {
		t.Errorf("CloseButtons sent components %s, want an explicit []", last.Components)
	}
}

func TestButtonPress(t *testing.T) {
	bob := &discordgo.User{ID: "77", Username: "bob"}
	cases := []struct {
		name           string
		guild, channel string
		to             herald.Target
		presser        *discordgo.User
		reply          string
		wantType       herald.ChatType
		wantResponse   discordgo.InteractionResponseType
	}{
		{"guild member, ephemeral reply", "g1", "c1", herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1"},
			alice, "Approved once.", herald.ChatGroup, discordgo.InteractionResponseChannelMessageWithSource},
		{"in a thread", "g1", "th1", herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1", ThreadID: "th1"},
			alice, "Denied.", herald.ChatThread, discordgo.InteractionResponseChannelMessageWithSource},
		{"DM user, no reply", "", "dm-77", herald.Target{Platform: herald.PlatformDiscord, ChatID: "dm-77"},
			bob, "", herald.ChatDM, discordgo.InteractionResponseDeferredMessageUpdate},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := discordtest.New()
			t.Cleanup(srv.Close)
			srv.AddChannel(&discordgo.Channel{ID: "th1", GuildID: "g1", Type: discordgo.ChannelTypeGuildPublicThread, ParentID: "c1"})
			sink := &pressSink{turnSink: newTurnSink(), reply: tc.reply, presses: make(chan adapters.Press, 4)}
			ad := run(t, srv, discord.Config{}, sink)
			ctx := waitCtx(t)
			to := tc.to
			sent, err := ad.Send(ctx, to, adapters.Outgoing{Text: "Approve?", Buttons: approvalButtons})
			if err != nil {
				t.Fatal(err)
			}
			id := srv.InjectInteraction(srv.ButtonPress(tc.guild, tc.channel, sent.MessageID, tc.presser, "approve:once"))
			var p adapters.Press
			select {
			case p = <-sink.presses:
			case <-ctx.Done():
				t.Fatal("the press never reached the PressSink")
			}
			want := adapters.Press{
				Chat: to, ChatType: tc.wantType, MessageID: sent.MessageID,
				UserID: tc.presser.ID, UserName: map[string]string{"42": "Alice", "77": "bob"}[tc.presser.ID], Data: "approve:once",
			}
			if p != want {
				t.Errorf("press = %+v, want %+v", p, want)
			}
			it, err := srv.WaitInteraction(ctx, id, func(it discordtest.Interaction) bool { return len(it.Responses) > 0 })
			if err != nil {
				t.Fatal(err)
			}
			r := it.Responses[0]
			if r.Type != tc.wantResponse || r.Content != tc.reply {
				t.Errorf("response = type %d %q, want type %d %q", r.Type, r.Content, tc.wantResponse, tc.reply)
			}
			if tc.reply != "" && r.Flags&discordgo.MessageFlagsEphemeral == 0 {
				t.Errorf("reply flags = %d, want ephemeral (64)", r.Flags)
			}
		})
	}
}

func TestButtonPressWithoutPressSink(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	ad := run(t, srv, discord.Config{}, newTurnSink())
	ctx := waitCtx(t)
	sent, err := ad.Send(ctx, herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1"}, adapters.Outgoing{Text: "Approve?", Buttons: approvalButtons})
	if err != nil {
		t.Fatal(err)
	}
	id := srv.InjectInteraction(srv.ButtonPress("g1", "c1", sent.MessageID, alice, "deny"))
	it, err := srv.WaitInteraction(ctx, id, func(it discordtest.Interaction) bool { return len(it.Responses) > 0 })
	if err != nil {
		t.Fatal(err)
	}
	if r := it.Responses[0]; r.Type != discordgo.InteractionResponseChannelMessageWithSource || r.Content != discord.NoLongerWorks || r.Flags&discordgo.MessageFlagsEphemeral == 0 {
		t.Errorf("response = %+v, want an ephemeral %q", r, discord.NoLongerWorks)
	}
}

// catalogue is a command list as the gateway gives it, with a name
// Discord cannot take and a description too long for it.
var catalogue = []adapters.Command{
	{Name: "status", Description: "Show the session's status"},
	{Name: "new", Description: strings.Repeat("Start a new session. ", 10)},
	{Name: "Not A Name!", Description: "left out"},
	{Name: "approve", Description: ""},
}

// startWithCommands starts an adapter that was given catalogue, and
// waits until it is connected (and so has tried to register it).
func startWithCommands(t *testing.T, srv *discordtest.Server, cfg discord.Config, sink adapters.Sink) *discord.Adapter {
	t.Helper()
	ad := run(t, srv, cfg, sink, func(a *discord.Adapter) { a.SetCommands(catalogue) })
	waitHealth(t, ad, "connected")
	return ad
}

func TestCommandsRegistered(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	ad := startWithCommands(t, srv, discord.Config{}, newTurnSink())
	sets := srv.CommandSets()
	if len(sets) != 1 || sets[0].GuildID != "" {
		t.Fatalf("command sets = %+v, want one global overwrite", sets)
	}
	var names []string
	for _, c := range sets[0].Commands {
		names = append(names, c.Name)
		if n := utf8.RuneCountInString(c.Description); n < 1 || n > 100 {
			t.Errorf("/%s description has %d characters, want 1-100", c.Name, n)
		}
		if len(c.Options) != 1 || c.Options[0].Name != discord.ArgsOption || c.Options[0].Type != discordgo.ApplicationCommandOptionString || c.Options[0].Required {
			t.Errorf("/%s options = %+v, want one optional string %q", c.Name, c.Options, discord.ArgsOption)
		}
	}
	if strings.Join(names, " ") != "status new approve" {
		t.Errorf("commands = %v, want status new approve", names)
	}
	if d := sets[0].Commands[0].Description; d != "Show the session's status" {
		t.Errorf("/status description = %q", d)
	}

	// a reconnect with the same list does not register again
	srv.Drop(0)
	if err := srv.WaitResumed(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, ad, "connected")
	if n := len(srv.CommandSets()); n != 1 {
		t.Errorf("command overwrites after a reconnect = %d, want 1", n)
	}
}

func TestCommandsPerGuildAndRefused(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	srv.FailCommands(1, http.StatusForbidden)
	sink := newTurnSink()
	ad := startWithCommands(t, srv, discord.Config{CommandGuilds: []string{"g1", "g2"}}, sink)
	// refused: the adapter still serves
	if n := len(srv.CommandSets()); n != 0 {
		t.Fatalf("command sets = %d after a refusal", n)
	}
	srv.Inject(srv.DM(alice, "still here"))
	if m, _ := sink.next(t); m.Text != "still here" {
		t.Errorf("message = %q", m.Text)
	}
	// tried again at the next connect, in each guild
	srv.Drop(0)
	if err := srv.WaitResumed(waitCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, ad, "connected")
	sets := srv.CommandSets()
	if len(sets) != 2 || sets[0].GuildID != "g1" || sets[1].GuildID != "g2" || len(sets[0].Commands) != 3 {
		t.Errorf("command sets = %+v, want g1 and g2 with 3 commands", sets)
	}
}

func TestSlashCommand(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	sink := newTurnSink()
	var mu sync.Mutex
	var deferredFirst []bool
	sink.onReceive = func(m herald.Message) {
		it, _ := srv.Interaction(m.ID)
		mu.Lock()
		deferredFirst = append(deferredFirst, len(it.Responses) == 1 && it.Responses[0].Type == discordgo.InteractionResponseDeferredChannelMessageWithSource)
		mu.Unlock()
	}
	ad := startWithCommands(t, srv, discord.Config{}, sink)
	ctx := waitCtx(t)
	id := srv.InjectInteraction(srv.SlashCommand("g1", "c1", alice, "status", discordtest.StringOption("args", "  verbose ")))
	m, rec := sink.next(t)
	mu.Lock()
	if len(deferredFirst) != 1 || !deferredFirst[0] {
		t.Errorf("the interaction was not deferred (type 5) before the sink got it: %v", deferredFirst)
	}
	mu.Unlock()
	to := herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1"}
	wantSrc := herald.Source{Platform: herald.PlatformDiscord, ChatID: "c1", ChatType: herald.ChatGroup, UserID: "42", UserName: "Alice"}
	if m.ID != id || m.Text != "/status verbose" || !m.Mentioned || m.Source != wantSrc {
		t.Errorf("message = %+v, want /status verbose from alice in c1, mentioned, id %s", m, id)
	}

	// the first reply edits the deferred original response
	first, err := ad.Send(ctx, to, adapters.Outgoing{Text: "part one", Cause: m.ID, Part: 1, Parts: 2})
	if err != nil {
		t.Fatal(err)
	}
	it, _ := srv.Interaction(id)
	if first.MessageID != it.Original {
		t.Errorf("first reply = message %s, want the original response %s", first.MessageID, it.Original)
	}
	if got, _ := srv.Message(it.Original); got.Content != "part one" {
		t.Errorf("original response = %q, want part one", got.Content)
	}
	// a second part is a follow-up
	second, err := ad.Send(ctx, to, adapters.Outgoing{Text: "part two", Cause: m.ID, Part: 2, Parts: 2})
	if err != nil {
		t.Fatal(err)
	}
	it, _ = srv.Interaction(id)
	if len(it.Followups) != 1 || it.Followups[0] != second.MessageID {
		t.Errorf("follow-ups = %v, want [%s]", it.Followups, second.MessageID)
	}
	// streaming edits go through the webhook too
	if err := ad.Edit(ctx, to, first.MessageID, "part one, edited"); err != nil {
		t.Fatal(err)
	}
	edits := srv.Edits()
	if last := edits[len(edits)-1]; !last.Webhook || last.MessageID != first.MessageID || last.Content != "part one, edited" {
		t.Errorf("last edit = %+v, want the original edited through the webhook", last)
	}
	if n := len(srv.Sent()); n != 0 {
		t.Errorf("channel messages = %d, want 0 (all through the interaction)", n)
	}
	// the turn ends: a reply was sent, so no "Done."
	rec.Resolve(adapters.Outcome{Status: adapters.StatusDone})

	// a command whose turn sends nothing is closed with "Done."
	id2 := srv.InjectInteraction(srv.SlashCommand("", "dm-42", alice, "new"))
	m2, rec2 := sink.next(t)
	if m2.Text != "/new" || m2.Source.ChatType != herald.ChatDM || m2.Source.UserID != "42" {
		t.Errorf("DM command = %+v", m2)
	}
	rec2.Resolve(adapters.Outcome{Status: adapters.StatusDone})
	it2, err := srv.WaitInteraction(ctx, id2, func(it discordtest.Interaction) bool { return it.Original != "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitMessage(ctx, it2.Original, func(m discordtest.Message) bool { return m.Content == discord.DoneText }); err != nil {
		got, _ := srv.Message(it2.Original)
		t.Errorf("original response of a silent turn = %q, want %q", got.Content, discord.DoneText)
	}
	if got, _ := srv.Message(it.Original); got.Content != "part one, edited" {
		t.Errorf("answered original = %q, want it untouched", got.Content)
	}
}

// TestSlashTokenLife: replies within the interaction token's 15 minutes
// go through it; after, they are channel messages, and edits use the
// channel endpoint.
func TestSlashTokenLife(t *testing.T) {
	srv := discordtest.New() // outside the bubble: its goroutines are real
	t.Cleanup(srv.Close)
	synctest.Test(t, func(t *testing.T) {
		// no keep-alive: an idle connection's reader would keep the
		// bubble's clock from moving
		ad := discord.New(discord.Config{Token: "tok", APIBase: srv.APIBase(), Transport: &http.Transport{DisableKeepAlives: true}})
		sink := newTurnSink()
		ctx := context.Background()
		i := srv.SlashCommand("g1", "c1", alice, "status")
		srv.InjectInteraction(i)
		ad.HandleInteraction(ctx, sink, i)
		m, rec := <-sink.msgs, <-sink.recs
		to := herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1"}
		first, err := ad.Send(ctx, to, adapters.Outgoing{Text: "one", Cause: m.ID})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(14 * time.Minute)
		if _, err := ad.Send(ctx, to, adapters.Outgoing{Text: "two", Cause: m.ID}); err != nil {
			t.Fatal(err)
		}
		if it, _ := srv.Interaction(i.ID); len(it.Followups) != 1 || len(srv.Sent()) != 0 {
			t.Errorf("at 14 min: follow-ups %v, channel messages %d; want 1 follow-up", it.Followups, len(srv.Sent()))
		}
		time.Sleep(2 * time.Minute)
		if _, err := ad.Send(ctx, to, adapters.Outgoing{Text: "three", Cause: m.ID, ReplyTo: m.ID}); err != nil {
			t.Fatal(err)
		}
		if sent := srv.Sent(); len(sent) != 1 || sent[0].ChannelID != "c1" || sent[0].Content != "three" || sent[0].ReplyTo != "" {
			t.Errorf("at 16 min: channel messages %+v, want three in c1, quoting nothing (an interaction is no message)", sent)
		}
		if err := ad.Edit(ctx, to, first.MessageID, "one, edited"); err != nil {
			t.Fatal(err)
		}
		edits := srv.Edits()
		if last := edits[len(edits)-1]; last.Webhook || last.MessageID != first.MessageID {
			t.Errorf("edit after the token's life = %+v, want the channel endpoint", last)
		}
		rec.Resolve(adapters.Outcome{Status: adapters.StatusDone})
		ad.WaitFollowers()
	})
}

// TestSlashCommandThroughGateway: a slash command in a guild channel
// where require_mention is on is answered by the real gateway, and the
// answer replaces the deferred response.
func TestSlashCommandThroughGateway(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	startGateway(t, srv, agent.Echo{})
	ctx := waitCtx(t)
	sets, err := srv.WaitCommandSets(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range sets[0].Commands {
		found = found || c.Name == "status"
	}
	if !found {
		t.Fatalf("the gateway's /status was not registered: %+v", sets[0].Commands)
	}
	id := srv.InjectInteraction(srv.SlashCommand("g1", "c1", alice, "status"))
	it, err := srv.WaitInteraction(ctx, id, func(it discordtest.Interaction) bool { return it.Original != "" })
	if err != nil {
		t.Fatal(err)
	}
	got, err := srv.WaitMessage(ctx, it.Original, func(m discordtest.Message) bool { return m.Content != "" })
	if err != nil {
		t.Fatal(err)
	}
	if got.Content == discord.DoneText || !strings.Contains(strings.ToLower(got.Content), "session") {
		t.Errorf("original response = %q, want the gateway's /status answer", got.Content)
	}
	if n := len(srv.Sent()); n != 0 {
		t.Errorf("channel messages = %d, want the answer in the interaction only", n)
	}
}

// startSlash starts an adapter, has alice use /status in the guild
// channel c1, and returns the interaction's id with what reached the
// sink.
func startSlash(t *testing.T) (*discordtest.Server, *discord.Adapter, string, herald.Message, *adapters.Receipt) {
	t.Helper()
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	sink := newTurnSink()
	ad := run(t, srv, discord.Config{}, sink)
	id := srv.InjectInteraction(srv.SlashCommand("g1", "c1", alice, "status"))
	m, rec := sink.next(t)
	return srv, ad, id, m, rec
}

// TestSlashRepliesAfterTheTokenIsRefused: a token Discord no longer takes
// sends the reply to the channel instead of failing it.
func TestSlashRepliesAfterTheTokenIsRefused(t *testing.T) {
	srv, ad, id, m, rec := startSlash(t)
	srv.ExpireInteraction(id)
	to := herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1"}
	if _, err := ad.Send(waitCtx(t), to, adapters.Outgoing{Text: "late answer", Cause: m.ID}); err != nil {
		t.Fatalf("Send after the token was refused: %v", err)
	}
	if sent := srv.Sent(); len(sent) != 1 || sent[0].Content != "late answer" || sent[0].ChannelID != "c1" {
		t.Errorf("channel messages = %+v, want the answer in c1", sent)
	}
	rec.Resolve(adapters.Outcome{Status: adapters.StatusDone})
}

// TestSlashQueuedKeepsThinking: a command queued behind a running turn
// has its answer still to come, so its response is not closed with
// "Done." when its receipt says queued; the answer then replaces it.
func TestSlashQueuedKeepsThinking(t *testing.T) {
	srv, ad, id, m, rec := startSlash(t)
	rec.Resolve(adapters.Outcome{Status: adapters.StatusQueued})
	ad.WaitFollowers()
	it, _ := srv.Interaction(id)
	if got, _ := srv.Message(it.Original); got.Content != "" {
		t.Fatalf("queued command's response = %q, want it still thinking", got.Content)
	}
	to := herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1"}
	sent, err := ad.Send(waitCtx(t), to, adapters.Outgoing{Text: "the answer", Cause: m.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := srv.Message(it.Original); sent.MessageID != it.Original || got.Content != "the answer" {
		t.Errorf("answer = message %s %q, want the original %s replaced", sent.MessageID, got.Content, it.Original)
	}
}

// TestSlashDeferredWhileMessagesWait: a slash command is answered within
// Discord's 3 s even while the messages before it still wait for the
// sink.
func TestSlashDeferredWhileMessagesWait(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	sink := newTurnSink()
	release := make(chan struct{})
	var once sync.Once
	sink.onReceive = func(m herald.Message) {
		once.Do(func() { <-release }) // the first message holds the queue
	}
	run(t, srv, discord.Config{}, sink)
	srv.Inject(srv.DM(alice, "a slow one"))
	id := srv.InjectInteraction(srv.SlashCommand("g1", "c1", alice, "status"))
	it, err := srv.WaitInteraction(waitCtx(t), id, func(it discordtest.Interaction) bool { return len(it.Responses) > 0 })
	close(release)
	if err != nil {
		t.Fatalf("the slash command was not answered while a message waited: %v", err)
	}
	if it.Responses[0].Type != discordgo.InteractionResponseDeferredChannelMessageWithSource {
		t.Errorf("response = %+v, want deferred (type 5)", it.Responses[0])
	}
	if m, _ := sink.next(t); m.Text != "a slow one" {
		t.Errorf("first message = %q", m.Text)
	}
	if m, _ := sink.next(t); m.Text != "/status" {
		t.Errorf("second message = %q, want /status after the slow one", m.Text)
	}
}

// TestPressAnsweredWhileMessagesWait: a button press is answered within
// Discord's 3 s even while messages before it still wait for the sink.
func TestPressAnsweredWhileMessagesWait(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	sink := &pressSink{turnSink: newTurnSink(), reply: "Approved once.", presses: make(chan adapters.Press, 4)}
	release := make(chan struct{})
	var once sync.Once
	sink.onReceive = func(m herald.Message) {
		once.Do(func() { <-release }) // the first message holds the queue
	}
	ad := run(t, srv, discord.Config{}, sink)
	ctx := waitCtx(t)
	sent, err := ad.Send(ctx, herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1"}, adapters.Outgoing{Text: "Approve?", Buttons: approvalButtons})
	if err != nil {
		t.Fatal(err)
	}
	srv.Inject(srv.DM(alice, "a slow one"))
	id := srv.InjectInteraction(srv.ButtonPress("g1", "c1", sent.MessageID, alice, "approve:once"))
	it, err := srv.WaitInteraction(ctx, id, func(it discordtest.Interaction) bool { return len(it.Responses) > 0 })
	close(release)
	if err != nil {
		t.Fatalf("the press was not answered while a message waited: %v", err)
	}
	if r := it.Responses[0]; r.Content != "Approved once." {
		t.Errorf("response = %+v", r)
	}
	if m, _ := sink.next(t); m.Text != "a slow one" {
		t.Errorf("message = %q", m.Text)
	}
}
