package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// MaxLength is Discord's limit on a message's content, in characters.
const MaxLength = 2000

// Intents are the gateway intents herald asks for. Message content is a
// privileged intent: it must also be switched on in the developer portal,
// or guild messages arrive with empty text.
const Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages |
	discordgo.IntentsDirectMessages | discordgo.IntentMessageContent

// Defaults for the zero values of Config.
const (
	DefaultAPIBase     = "https://discord.com/api/v9/"
	DefaultOpenTimeout = 30 * time.Second
	DefaultMinBackoff  = time.Second
	DefaultMaxBackoff  = 2 * time.Minute
)

// tokenHint is the sentence a user sees when Discord refuses the token.
const tokenHint = "discord: the bot token was refused; check DISCORD_BOT_TOKEN (or platforms.discord.token)"

// Config configures the adapter.
type Config struct {
	// Token is the bot token, with or without the "Bot " prefix.
	Token string
	// APIBase is the REST base, ".../api/v9/"; the gateway URL is
	// discovered through it. Empty means Discord.
	APIBase string
	// HomeChannel is the channel id of a bare "discord" target.
	HomeChannel string
	// AllowBots says which other bots' messages reach the gateway (marked
	// IsBot), with Hermes' DISCORD_ALLOW_BOTS values: "" or "none" (the
	// default: none, so two bots cannot talk in a loop), "mentions" (those
	// that mention the bot or reply to it), "all". The bot's own messages
	// are always dropped.
	AllowBots string
	// OpenTimeout bounds one gateway handshake.
	OpenTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between reconnects.
	MinBackoff, MaxBackoff time.Duration
	// MediaHosts are the hosts Fetch reads attachments from, over https;
	// nil means DefaultMediaHosts. The API base's own host is allowed too
	// when it is not Discord's.
	MediaHosts []string
	// FetchLimit is the hard ceiling on one attachment download
	// (DefaultFetchLimit when 0); the gateway's own cap is usually lower.
	FetchLimit int64
	// MaxUpload is the largest file SendFile uploads (DefaultMaxUpload,
	// 10 MiB, when 0; a boosted server takes 50 or 100 MiB).
	MaxUpload int64
	// MediaTimeout bounds one download or upload, body included
	// (DefaultMediaTimeout when 0).
	MediaTimeout time.Duration
	// Transport carries REST calls, the gateway discovery and attachment
	// downloads; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Reactions shows processing reactions on the messages herald
	// answers: 👀 while a turn runs, then ✅ or ❌ (feedback.go).
	Reactions bool
	// CommandGuilds are the guild (server) ids to register the slash
	// commands in; none registers them globally. Guild commands show at
	// once; global ones may take up to an hour to appear everywhere.
	CommandGuilds []string
	// ShardID and ShardCount make this connection one shard of the bot
	// (IDENTIFY's "shard": [ShardID, ShardCount]): Discord then sends it
	// the events of the servers whose (server id >> 22) % ShardCount is
	// ShardID, and DMs only to shard 0. ShardCount 0 or 1 is one
	// connection for everything (discordgo sends no shard then).
	ShardID, ShardCount int
	Log                 *slog.Logger
}

// Adapter is the Discord platform.
type Adapter struct {
	cfg   Config
	log   *slog.Logger
	token string
	rest  *discordgo.Session // REST only: sends work while the gateway reconnects
	state atomic.Value       // string
	botID atomic.Value       // string
	// botName is the bot's user name: /cmd@botName is herald's command.
	botName atomic.Value // string
	// appID is the bot's application (READY's application.id), which
	// slash commands are registered under.
	appID atomic.Value // string

	mu       sync.Mutex
	last     map[string]string // message id → text last sent or edited there
	lastKeys []string
	channels map[string]channelInfo
	conns    *connTracker

	origins []origin     // where Fetch may read from
	media   *http.Client // attachment downloads: no credentials, no rewriting
	upload  *http.Client // uploads: REST, with MediaTimeout
	// rx shows processing reactions; nil when they are off.
	rx *adapters.Reactions

	// slash commands (commands.go): the list SetCommands gave, and the
	// JSON of the list last registered
	commands    []*discordgo.ApplicationCommand
	commandsSet bool
	registered  string
	// replies to slash commands (webhook.go): interaction id → its way
	// back; message id → the interaction it was sent through
	replies map[string]*interactionReply
	hooked  map[string]hookedMessage
	// watchers are the goroutines waiting for slash commands' receipts
	watchers sync.WaitGroup
}

var (
	_ adapters.Adapter       = (*Adapter)(nil)
	_ adapters.Editor        = (*Adapter)(nil)
	_ adapters.Typer         = (*Adapter)(nil)
	_ adapters.Healther      = (*Adapter)(nil)
	_ adapters.HomeChanneler = (*Adapter)(nil)
	_ adapters.Fetcher       = (*Adapter)(nil)
	_ adapters.FileSender    = (*Adapter)(nil)
)

// New returns the adapter; nothing connects until Run.
func New(cfg Config) *Adapter {
	if cfg.APIBase == "" {
		cfg.APIBase = DefaultAPIBase
	}
	if !strings.HasSuffix(cfg.APIBase, "/") {
		cfg.APIBase += "/"
	}
	if cfg.OpenTimeout <= 0 {
		cfg.OpenTimeout = DefaultOpenTimeout
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport
	}
	if cfg.MediaHosts == nil {
		cfg.MediaHosts = DefaultMediaHosts
	}
	if cfg.FetchLimit <= 0 {
		cfg.FetchLimit = DefaultFetchLimit
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.MediaTimeout <= 0 {
		cfg.MediaTimeout = DefaultMediaTimeout
	}
	a := &Adapter{
		cfg: cfg, log: cfg.Log, last: map[string]string{}, channels: map[string]channelInfo{},
		conns:   &connTracker{},
		replies: map[string]*interactionReply{}, hooked: map[string]hookedMessage{},
		origins: mediaOrigins(cfg.MediaHosts, cfg.APIBase),
		upload:  &http.Client{Transport: newRewrite(cfg.APIBase, cfg.Transport), Timeout: cfg.MediaTimeout},
	}
	a.media = &http.Client{Transport: cfg.Transport, Timeout: cfg.MediaTimeout, CheckRedirect: a.checkRedirect}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.token = strings.TrimSpace(cfg.Token)
	if a.token != "" && !strings.HasPrefix(a.token, "Bot ") {
		a.token = "Bot " + a.token
	}
	a.rest = a.session()
	if cfg.Reactions {
		a.rx = adapters.NewReactions(a.react)
	}
	a.state.Store("connecting")
	a.botID.Store("")
	a.botName.Store("")
	a.appID.Store("")
	return a
}

// session returns a discordgo session wired to herald's needs: REST
// through the rewriting transport, rate limits returned instead of slept
// on, reconnects done by Run rather than by the library, events handled
// synchronously (Run owns their goroutine), and the library's own logging
// (to the standard logger, bypassing redaction) off.
func (a *Adapter) session() *discordgo.Session {
	s, _ := discordgo.New(a.token) // New never fails
	s.Client = &http.Client{Transport: newRewrite(a.cfg.APIBase, a.cfg.Transport), Timeout: 20 * time.Second}
	s.Dialer = a.conns.dialer()
	s.ShouldRetryOnRateLimit = false
	s.ShouldReconnectOnError = false
	s.SyncEvents = true
	s.LogLevel = -1
	s.Identify.Intents = Intents
	if a.cfg.ShardCount > 0 {
		s.ShardID, s.ShardCount = a.cfg.ShardID, a.cfg.ShardCount
	}
	return s
}

func (a *Adapter) Platform() herald.Platform { return herald.PlatformDiscord }

// Limits is Discord's 2000 characters.
func (a *Adapter) Limits() adapters.Limits { return adapters.Limits{MaxLength: MaxLength} }

// HomeChannel is the configured home channel.
func (a *Adapter) HomeChannel() string { return a.cfg.HomeChannel }

// Health is "connecting", "connected", "reconnecting", "stopped" or
// "failed: …".
func (a *Adapter) Health() string { return a.state.Load().(string) }

// channel is where a target's messages go: a thread is its own channel.
func channel(to herald.Target) string {
	if to.ThreadID != "" {
		return to.ThreadID
	}
	return to.ChatID
}

// noPings lets a reply mention users but never @everyone, @here or roles,
// whatever the model writes.
func noPings() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{discordgo.AllowedMentionTypeUsers}}
}

// reference makes a message a reply to replyTo ("" for none); a reply to
// a message deleted meanwhile is sent as a plain message.
func reference(replyTo, ch string) *discordgo.MessageReference {
	if replyTo == "" {
		return nil
	}
	no := false
	return &discordgo.MessageReference{MessageID: replyTo, ChannelID: ch, FailIfNotExists: &no}
}

// Send posts one message, with out.Buttons as an action row of buttons
// under it. A reply to a slash command goes through its interaction
// (webhook.go). Discord has no parse mode to reject, so Plain changes
// nothing.
func (a *Adapter) Send(ctx context.Context, to herald.Target, out adapters.Outgoing) (adapters.Sent, error) {
	if sent, done, err := a.sendReply(ctx, out); done {
		return sent, err
	}
	if a.isInteraction(out.ReplyTo) {
		// a slash command is no message to quote
		out.ReplyTo = ""
	}
	ch := channel(to)
	if ch == "" {
		return adapters.Sent{}, errors.New("discord: send: no channel id")
	}
	ms := &discordgo.MessageSend{Content: out.Text, AllowedMentions: noPings(), Reference: reference(out.ReplyTo, ch), Components: buttonRows(out.Buttons)}
	m, err := a.rest.ChannelMessageSendComplex(ch, ms, discordgo.WithContext(ctx))
	if err != nil {
		return adapters.Sent{}, classify(ctx, "send to "+ch, err)
	}
	a.remember(m.ID, out.Text)
	return adapters.Sent{MessageID: m.ID}, nil
}

// Edit replaces a sent message's text; an edit to the text it already has
// is not sent.
func (a *Adapter) Edit(ctx context.Context, to herald.Target, messageID, text string) error {
	a.mu.Lock()
	same, known := a.last[messageID]
	a.mu.Unlock()
	if known && same == text {
		return nil
	}
	if done, err := a.editHooked(ctx, messageID, &discordgo.WebhookEdit{Content: &text}); done {
		if err == nil {
			a.remember(messageID, text)
		}
		return err
	}
	ch := channel(to)
	if _, err := a.rest.ChannelMessageEdit(ch, messageID, text, discordgo.WithContext(ctx)); err != nil {
		return classify(ctx, "edit "+messageID+" in "+ch, err)
	}
	a.remember(messageID, text)
	return nil
}

// Delete implements adapters.Deleter (a streamed preview the answer
// could not replace).
func (a *Adapter) Delete(ctx context.Context, to herald.Target, messageID string) error {
	if done, err := a.deleteHooked(ctx, messageID); done {
		return err
	}
	ch := channel(to)
	if err := a.rest.ChannelMessageDelete(ch, messageID, discordgo.WithContext(ctx)); err != nil {
		return classify(ctx, "delete "+messageID+" in "+ch, err)
	}
	return nil
}

// Typing shows the typing indicator (Discord shows it for about 10 s).
func (a *Adapter) Typing(ctx context.Context, to herald.Target) error {
	a.rx.Typing(ctx, to)
	ch := channel(to)
	if err := a.rest.ChannelTyping(ch, discordgo.WithContext(ctx)); err != nil {
		return classify(ctx, "typing in "+ch, err)
	}
	return nil
}

// remember keeps the last text of recent messages, for skipping
// identical edits; the oldest are forgotten past 1024.
func (a *Adapter) remember(id, text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.last[id]; !ok {
		a.lastKeys = append(a.lastKeys, id)
		if len(a.lastKeys) > 1024 {
			delete(a.last, a.lastKeys[0])
			a.lastKeys = a.lastKeys[1:]
		}
	}
	a.last[id] = text
}

// rewrite sends discordgo's requests, whose URLs are fixed at init to
// discord.com, to the configured API base instead.
type rewrite struct {
	from string   // discordgo's API prefix
	to   *url.URL // nil: no rewriting
	next http.RoundTripper
}

func newRewrite(base string, next http.RoundTripper) *rewrite {
	r := &rewrite{from: discordgo.EndpointAPI, next: next}
	if base != discordgo.EndpointAPI {
		if u, err := url.Parse(base); err == nil {
			r.to = u
		}
	}
	return r
}

func (t *rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.to != nil {
		if rest, ok := strings.CutPrefix(req.URL.String(), t.from); ok {
			u, err := url.Parse(t.to.String() + rest)
			if err != nil {
				return nil, fmt.Errorf("discord: rewrite %s: %w", req.URL.Path, err)
			}
			req = req.Clone(req.Context())
			req.URL, req.Host = u, u.Host
		}
	}
	return t.next.RoundTrip(req)
}

// jitter returns a wait in [b/2, b].
func jitter(b time.Duration) time.Duration {
	return b/2 + rand.N(b/2+1)
}
