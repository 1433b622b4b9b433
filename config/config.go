package config

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is herald's settings. Field tags are the config.yaml keys.
type Config struct {
	Model     Model     `yaml:"model"`
	Platforms Platforms `yaml:"platforms"`
	Agent     Agent     `yaml:"agent"`
	Tools     Tools     `yaml:"tools"`
	Media     Media     `yaml:"media"`
	STT       STT       `yaml:"stt"`
	// Inbound is the listener for endpoints that face the internet.
	Inbound Inbound `yaml:"inbound"`

	// BusyInputMode is interrupt|queue; Hermes' display.busy_input_mode is
	// read too.
	BusyInputMode string  `yaml:"busy_input_mode"`
	Display       Display `yaml:"display"`

	// UnauthorizedDM is pair|ignore; empty means "pair unless the platform
	// has an allowlist".
	UnauthorizedDM       string       `yaml:"unauthorized_dm"`
	Approvals            Approvals    `yaml:"approvals"`
	SessionReset         SessionReset `yaml:"session_reset"`
	GroupSessionsPerUser *bool        `yaml:"group_sessions_per_user"`
	Boot                 Boot         `yaml:"boot"`
	Cron                 Cron         `yaml:"cron"`
	Logging              Logging      `yaml:"logging"`
	ShutdownGrace        Duration     `yaml:"shutdown_grace"`

	// Store is where herald keeps its state: "" for SQLite in the home
	// (state.db), or a postgres:// URL shared by several replicas.
	// HERALD_DATABASE_URL, when set, wins.
	Store string `yaml:"store" secret:"true"`
	// ReplicaID names this process among the replicas of one PostgreSQL
	// store ("" or HERALD_REPLICA_ID unset: hostname-pid-random).
	ReplicaID string `yaml:"replica_id"`

	// Hooks is the raw hooks: block (Hermes' shell-hook format plus
	// herald's reserved sub-keys); the hooks package parses it.
	Hooks Raw `yaml:"hooks"`
	// HooksAutoAccept is kept raw: only true or the strings 1/true/yes/on
	// are consent, never an integer.
	HooksAutoAccept Raw `yaml:"hooks_auto_accept"`
	// Plugins is read for plugins.claude only (Hermes' plugins.enabled
	// and the like are Hermes settings).
	Plugins Plugins `yaml:"plugins"`
	// ClaudeSettings are Claude Code settings files (.claude/settings.json)
	// whose hooks block is loaded; relative to the home.
	ClaudeSettings Paths `yaml:"claude_settings"`

	// Filled by Load, not from YAML.
	Home    string            `yaml:"-"`
	Secrets map[string]string `yaml:"-"` // name → value, for redaction and scrubbing
	Env     map[string]string `yaml:"-"` // .env values, merged under the process environment

	// sources says where each setting that is not a default came from,
	// by key path (source.go).
	sources map[string]Source
}

// Model is the LLM endpoint. In YAML it is either a string (the model
// name) or a mapping, as in Hermes.
type Model struct {
	Name          string `yaml:"default"`
	BaseURL       string `yaml:"base_url"`
	APIKey        string `yaml:"api_key" secret:"true"`
	Provider      string `yaml:"provider"`
	ContextWindow int    `yaml:"context_window"`
	MaxTokens     int    `yaml:"max_tokens"`
	// Vision is true, false or auto (the default): whether images go to
	// the model as image parts. auto is true unless the model name is a
	// known text-only one (agent.SupportsVision).
	Vision string `yaml:"vision"`
}

// UnmarshalYAML accepts `model: name` and `model: {default|model: name, …}`.
func (m *Model) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil
		}
		m.Name = n.Value
		return nil
	case yaml.MappingNode:
		type plain Model
		var p struct {
			plain `yaml:",inline"`
			Alt   string `yaml:"model"`
		}
		p.plain = plain(*m)
		if err := n.Decode(&p); err != nil {
			return err
		}
		*m = Model(p.plain)
		hasDefault := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "default" {
				hasDefault = true
			}
		}
		if !hasDefault && p.Alt != "" {
			m.Name = p.Alt
		}
		return nil
	}
	return nodeError(n, "model must be a name or a mapping")
}

// Raw keeps a YAML value undecoded, with its line numbers, for the package
// that owns its format. Node is nil when the key is absent.
type Raw struct{ Node *yaml.Node }

func (r *Raw) UnmarshalYAML(n *yaml.Node) error {
	r.Node = n
	return nil
}

// Plugins are plugin settings. herald reads plugins.claude: Claude Code
// plugin directories whose hooks/hooks.json is loaded (relative to the
// home).
type Plugins struct {
	Claude Paths `yaml:"claude"`
}

// UnmarshalYAML reads a mapping; any other shape (a Hermes list of names)
// is left to Hermes, as the whole key used to be.
func (p *Plugins) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	type plain Plugins
	return n.Decode((*plain)(p))
}

// Paths is one path or a list of them.
type Paths []string

func (p *Paths) UnmarshalYAML(n *yaml.Node) error {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		*p = nil
	case n.Kind == yaml.ScalarNode:
		*p = Paths{n.Value}
	case n.Kind == yaml.SequenceNode:
		var out Paths
		for _, x := range n.Content {
			if x.Kind != yaml.ScalarNode || x.Value == "" {
				return nodeError(x, "expected a path")
			}
			out = append(out, x.Value)
		}
		*p = out
	default:
		return nodeError(n, "expected a path or a list of paths")
	}
	return nil
}

// Platforms holds each platform's settings.
type Platforms struct {
	Local    Local    `yaml:"local"`
	Telegram Telegram `yaml:"telegram"`
	Discord  Discord  `yaml:"discord"`
	Slack    Slack    `yaml:"slack"`
	Webhook  Webhook  `yaml:"webhook"`
	WhatsApp WhatsApp `yaml:"whatsapp"`
	Teams    Teams    `yaml:"teams"`
	Matrix   Matrix   `yaml:"matrix"`
}

// Common is what every platform shares.
type Common struct {
	AllowedUsers   []string `yaml:"allowed_users"`
	UnauthorizedDM string   `yaml:"unauthorized_dm"`
	HomeChannel    string   `yaml:"home_channel"`
	// RequireMention: in groups, answer only when mentioned or replied to.
	RequireMention *bool    `yaml:"require_mention"`
	DisabledTools  []string `yaml:"disabled_tools"`
	// Approvers are user ids who may answer any approval prompt's buttons
	// in this platform's chats, besides the person whose message needs
	// the approval.
	Approvers IDList `yaml:"approvers"`
	// Groups: channel policy and wake words (groups.go).
	Groups `yaml:",inline"`
}

// Local is the built-in HTTP platform.
type Local struct {
	Common           `yaml:",inline"`
	Listen           string   `yaml:"listen"`
	AllowedHosts     []string `yaml:"allowed_hosts"`
	MaxMessageLength int      `yaml:"max_message_length"`
}

// Telegram settings. The token comes from TELEGRAM_BOT_TOKEN.
type Telegram struct {
	Common        `yaml:",inline"`
	Enabled       *bool  `yaml:"enabled"`
	Token         string `yaml:"token" secret:"true"`
	APIEndpoint   string `yaml:"api_endpoint"`
	WebhookURL    string `yaml:"webhook_url"`
	WebhookListen string `yaml:"webhook_listen"`
	WebhookSecret string `yaml:"webhook_secret" secret:"true"`
	PollTimeout   int    `yaml:"poll_timeout"`
	// ReplyToMode: which messages of a reply in a group quote the
	// message answered (first|all|off, default first).
	ReplyToMode ReplyMode `yaml:"reply_to_mode"`
	// AllowedChats and FreeResponseChats are Hermes' Telegram names for
	// allowed_channels and free_response_channels (both are read).
	AllowedChats      IDList `yaml:"allowed_chats"`
	FreeResponseChats IDList `yaml:"free_response_chats"`
	// Reactions shows processing reactions on the messages herald
	// answers: 👀 while it works, then 👍 or 👎 (default off).
	Reactions *bool `yaml:"reactions"`
}

// Discord settings. The token comes from DISCORD_BOT_TOKEN.
type Discord struct {
	Common  `yaml:",inline"`
	Enabled *bool  `yaml:"enabled"`
	Token   string `yaml:"token" secret:"true"`
	APIBase string `yaml:"api_base"`
	// AllowBots is none|mentions|all (Hermes' DISCORD_ALLOW_BOTS): which
	// other bots' messages are let in.
	AllowBots string `yaml:"allow_bots"`
	// OpenTimeout bounds one gateway handshake (default 30s).
	OpenTimeout Duration `yaml:"open_timeout"`
	// MaxUploadMB is the largest file herald uploads, in MiB (default 10,
	// Discord's limit without a server boost; 25, 50 or 100 on boosted
	// servers).
	MaxUploadMB int `yaml:"max_upload_mb"`
	// ReplyToMode: as Telegram's.
	ReplyToMode ReplyMode `yaml:"reply_to_mode"`
	// AllowedRoles are role ids whose members may use the bot in the
	// server the message came from (besides allowed_users).
	AllowedRoles IDList `yaml:"allowed_roles"`
	// Reactions shows processing reactions on the messages herald
	// answers: 👀 while it works, then ✅ or ❌ (default off).
	Reactions *bool `yaml:"reactions"`
	// CommandGuilds are the server (guild) ids to register the slash
	// commands in; empty registers them globally.
	CommandGuilds IDList `yaml:"command_guilds"`
	// ShardID and ShardCount split the bot's servers among replicas:
	// this process connects as shard ShardID of ShardCount (0 <=
	// ShardID < ShardCount). ShardCount 0 (unset) is one connection
	// for every server.
	ShardID    int `yaml:"shard_id"`
	ShardCount int `yaml:"shard_count"`
}

// Slack settings. Tokens come from SLACK_BOT_TOKEN and SLACK_APP_TOKEN.
type Slack struct {
	Common        `yaml:",inline"`
	Enabled       *bool  `yaml:"enabled"`
	BotToken      string `yaml:"bot_token" secret:"true"`
	AppToken      string `yaml:"app_token" secret:"true"`
	SigningSecret string `yaml:"signing_secret" secret:"true"`
	APIURL        string `yaml:"api_url"`
	// Mode is socket (Socket Mode) or events (Events API over HTTP).
	Mode         string `yaml:"mode"`
	EventsListen string `yaml:"events_listen"`
	// Reactions shows processing reactions on the messages herald
	// answers: :eyes: while it works, then :white_check_mark: or :x:
	// (default off).
	Reactions *bool `yaml:"reactions"`
	// SlashReplies is where replies to a slash command go: channel (in
	// the channel it was typed in, the default) or ephemeral (shown only
	// to the user who typed it).
	SlashReplies string `yaml:"slash_replies"`
}

// WhatsApp settings (the WhatsApp Business Cloud API). Credentials come
// from WHATSAPP_ACCESS_TOKEN, WHATSAPP_PHONE_NUMBER_ID,
// WHATSAPP_VERIFY_TOKEN and WHATSAPP_APP_SECRET (or Hermes'
// WHATSAPP_CLOUD_* names).
type WhatsApp struct {
	Common        `yaml:",inline"`
	Enabled       *bool  `yaml:"enabled"`
	AccessToken   string `yaml:"access_token" secret:"true"`
	PhoneNumberID string `yaml:"phone_number_id"`
	VerifyToken   string `yaml:"verify_token" secret:"true"`
	AppSecret     string `yaml:"app_secret" secret:"true"`
	// APIBase is the Graph API with its version (default
	// https://graph.facebook.com/v21.0).
	APIBase string `yaml:"api_base"`
}

// Teams settings (the Bot Framework). The credentials come from
// MICROSOFT_APP_ID, MICROSOFT_APP_PASSWORD and MICROSOFT_APP_TENANT_ID;
// activities arrive at /api/messages on the inbound listener.
type Teams struct {
	Common      `yaml:",inline"`
	Enabled     *bool  `yaml:"enabled"`
	AppID       string `yaml:"app_id"`
	AppPassword string `yaml:"app_password" secret:"true"`
	TenantID    string `yaml:"tenant_id"`
	// OpenIDMetadataURL and TokenURL replace Microsoft's documented
	// endpoints (for tests; empty uses them).
	OpenIDMetadataURL string `yaml:"openid_metadata_url"`
	TokenURL          string `yaml:"token_url"`
}

// Matrix settings (the client-server API). Credentials come from
// MATRIX_ACCESS_TOKEN, or MATRIX_USER_ID and MATRIX_PASSWORD (Hermes'
// names); the homeserver from MATRIX_HOMESERVER.
type Matrix struct {
	Common      `yaml:",inline"`
	Enabled     *bool  `yaml:"enabled"`
	Homeserver  string `yaml:"homeserver"`
	AccessToken string `yaml:"access_token" secret:"true"`
	UserID      string `yaml:"user_id"`
	Password    string `yaml:"password" secret:"true"`
	// DeviceID is the device a password login reuses (default: the one
	// the first login got, kept in state.db).
	DeviceID string `yaml:"device_id"`
}

// Inbound is the shared listener of the endpoints that face the internet
// (the webhook platform's routes, Telegram's webhook, Slack's Events API),
// separate from the local API. It is opened only when some platform puts
// a route on it.
type Inbound struct {
	// Listen is its address (default DefaultInboundListen); bind it
	// publicly only behind a TLS proxy.
	Listen string `yaml:"listen"`
}

// Webhook is the webhook platform: routes that turn signed HTTP POSTs
// from other services (GitHub, GitLab, anything that signs its body)
// into agent turns or plain deliveries. Hermes nests the same keys under
// extra:; both forms are read.
type Webhook struct {
	Enabled         *bool `yaml:"enabled"`
	WebhookSettings `yaml:",inline"`
	// Extra is Hermes' platforms.webhook.extra block; a key set directly
	// under platforms.webhook wins over the same key here.
	Extra *WebhookSettings `yaml:"extra"`
}

// WebhookSettings are the webhook platform's settings.
type WebhookSettings struct {
	// Secret is the secret of routes that set none (Hermes' global
	// secret).
	Secret string `yaml:"secret" secret:"true"`
	// RateLimit is each route's default requests per minute
	// (DefaultWebhookRateLimit).
	RateLimit int `yaml:"rate_limit"`
	// MaxBodyBytes is each route's default body limit
	// (DefaultWebhookMaxBody).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// Routes are served at POST /webhooks/<name>.
	Routes map[string]WebhookRoute `yaml:"routes"`
}

// WebhookRoute is one webhook endpoint.
type WebhookRoute struct {
	// Secret checks each request: GitHub's X-Hub-Signature-256, GitLab's
	// X-Gitlab-Token, or X-Webhook-Signature-256 (HMAC-SHA256 of the raw
	// body). "${NAME}" reads it from the environment or .env.
	Secret string `yaml:"secret" secret:"true"`
	// InsecureNoAuth serves a route without a secret (for trying things
	// out on a loopback listener).
	InsecureNoAuth bool `yaml:"insecure_no_auth"`
	// Events, when set, lets through only these X-GitHub-Event /
	// X-Gitlab-Event values.
	Events []string `yaml:"events"`
	// Prompt is a template filled from the JSON payload: Go's
	// {{.pull_request.title}} or Hermes' {pull_request.title}.
	Prompt string `yaml:"prompt"`
	// Deliver is where the answer goes: a target such as
	// telegram:-100123 or local:c1 (default local:<route name>).
	Deliver string `yaml:"deliver"`
	// DeliverExtra is Hermes' deliver_extra: chat_id and thread_id
	// (message_thread_id) complete a bare platform in deliver; templates
	// as in prompt.
	DeliverExtra map[string]string `yaml:"deliver_extra"`
	// DeliverOnly sends the rendered prompt to Deliver without the model.
	DeliverOnly bool `yaml:"deliver_only"`
	// RateLimit and MaxBodyBytes override the platform's for this route.
	RateLimit    int   `yaml:"rate_limit"`
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// Skills is read for Hermes compatibility; herald has no skills and
	// warns when it is set.
	Skills []string `yaml:"skills"`

	// unresolved is set when Secret named a variable that is not set: the
	// route then has no secret, rather than the platform's.
	unresolved bool
}

// Agent settings.
type Agent struct {
	MaxIterations int      `yaml:"max_iterations"`
	Workdir       string   `yaml:"workdir"`
	AllowedPaths  []string `yaml:"allowed_paths"`
	DisabledTools []string `yaml:"disabled_tools"`
	SystemPrompt  string   `yaml:"system_prompt"`
	ToolTimeout   Duration `yaml:"tool_timeout"`
}

// Tools configures the built-in tools.
type Tools struct {
	Terminal TerminalTool `yaml:"terminal"`
	SendFile SendFileTool `yaml:"send_file"`
}

// SendFileTool configures the send_file tool and MEDIA: lines.
type SendFileTool struct {
	// AllowedDirs are directories, besides the working directory and the
	// media cache, whose files may be sent.
	AllowedDirs []string `yaml:"allowed_dirs"`
}

// Media configures inbound attachments.
type Media struct {
	// MaxBytes caps one attachment (default DefaultMediaMaxBytes).
	MaxBytes int64 `yaml:"max_bytes"`
}

// STT is speech-to-text for voice notes and audio, through the
// OpenAI-compatible audio API.
type STT struct {
	Enabled *bool  `yaml:"enabled"`
	Model   string `yaml:"model"`
	// BaseURL and APIKey default to the model's.
	BaseURL string `yaml:"base_url"`
	APIKey  string `yaml:"api_key" secret:"true"`
}

// TerminalTool configures the terminal tool.
type TerminalTool struct {
	// Sandbox is landlock|bubblewrap|none; empty (the default) is
	// landlock where the kernel offers it, none otherwise.
	Sandbox string `yaml:"sandbox"`
}

// Display mirrors Hermes' display block for the keys herald reads.
type Display struct {
	BusyInputMode string `yaml:"busy_input_mode"`
}

// Approvals for dangerous commands.
type Approvals struct {
	Mode    string   `yaml:"mode"` // ask|off|yolo
	Timeout Duration `yaml:"timeout"`
}

// SessionReset is the automatic reset policy.
type SessionReset struct {
	Mode        string `yaml:"mode"` // daily|idle|both|none
	AtHour      int    `yaml:"at_hour"`
	IdleMinutes int    `yaml:"idle_minutes"`
	Notify      *bool  `yaml:"notify"`
}

// Boot is the BOOT.md startup checklist.
type Boot struct {
	Enabled *bool `yaml:"enabled"`
}

// Cron is the scheduler.
type Cron struct {
	MaxParallelJobs int   `yaml:"max_parallel_jobs"`
	WrapResponse    *bool `yaml:"wrap_response"`
}

// Logging settings.
type Logging struct {
	Level string `yaml:"level"`
}

// Duration reads "30s", "5m" or a bare number of seconds. A negative, NaN,
// infinite or longer than 100 years value is an error naming its line.
type Duration time.Duration

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return nodeError(n, "expected a duration such as 30s")
	}
	v := strings.TrimSpace(n.Value)
	bad := func(format string) error {
		return nodeError(n, format, v)
	}
	var p time.Duration
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case math.IsNaN(secs) || math.IsInf(secs, 0):
			return bad("%q is not a duration (use e.g. 30s or 5m)")
		case secs < 0:
			return bad("duration %q is negative")
		case secs > maxDuration.Seconds():
			return bad("duration %q is too long")
		}
		p = time.Duration(secs * float64(time.Second))
	} else if p, err = time.ParseDuration(v); err != nil {
		return bad("%q is not a duration (use e.g. 30s or 5m)")
	}
	switch {
	case p < 0:
		return bad("duration %q is negative")
	case p > maxDuration:
		return bad("duration %q is too long")
	}
	*d = Duration(p)
	return nil
}

// maxDuration is the longest a duration setting may be: far beyond any
// sensible timeout, and short of time.Duration's overflow.
const maxDuration = 100 * 365 * 24 * time.Hour

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// On reports whether an optional switch is on, with def when unset.
func On(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// BusyMode returns the effective busy_input_mode.
func (c *Config) BusyMode() string {
	if c.BusyInputMode != "" && c.BusyInputMode != DefaultBusyInputMode {
		return c.BusyInputMode
	}
	if c.Display.BusyInputMode != "" {
		return c.Display.BusyInputMode
	}
	return c.BusyInputMode
}

// Endpoint is the resolved model endpoint: the one answer to "which
// model, where, with which key" that the gateway, herald chat, cron and
// BOOT.md all use.
type Endpoint struct {
	Model         string
	BaseURL       string
	APIKey        string
	Provider      string
	ContextWindow int
	MaxTokens     int
	// Offline is set when no credentials are configured: the built-in echo
	// model answers instead.
	Offline bool
}

// ResolveModel returns the endpoint for the configured model.
// Credentials come from model.api_key / OPENAI_API_KEY; a base URL alone
// (a local server that needs no key) is enough to leave offline mode.
func (c *Config) ResolveModel() Endpoint {
	e := Endpoint{
		Model: c.Model.Name, BaseURL: c.Model.BaseURL, APIKey: c.Model.APIKey,
		Provider: c.Model.Provider, ContextWindow: c.Model.ContextWindow, MaxTokens: c.Model.MaxTokens,
	}
	if e.Model == "" {
		e.Model = DefaultModelName
	}
	if e.APIKey == "" && e.BaseURL == "" {
		e.Offline = true
		e.Model = "echo"
		e.Provider = "offline"
	}
	if e.BaseURL == "" && !e.Offline {
		e.BaseURL = "https://api.openai.com/v1"
	}
	if e.Provider == "" {
		e.Provider = "openai-compatible"
	}
	return e
}

// STTEndpoint is the resolved speech-to-text endpoint; ok is false when
// stt.enabled is not true.
func (c *Config) STTEndpoint() (e Endpoint, ok bool) {
	if !On(c.STT.Enabled, false) {
		return Endpoint{}, false
	}
	m := c.ResolveModel()
	e = Endpoint{Model: c.STT.Model, BaseURL: c.STT.BaseURL, APIKey: c.STT.APIKey, Provider: "openai-compatible"}
	if e.Model == "" {
		e.Model = DefaultSTTModel
	}
	if e.BaseURL == "" {
		e.BaseURL = m.BaseURL
	}
	if e.BaseURL == "" {
		e.BaseURL = "https://api.openai.com/v1"
	}
	if e.APIKey == "" {
		e.APIKey = m.APIKey
	}
	return e, true
}

// Vision reports whether images go to the model as image parts
// (model.vision; auto asks supports, given the model name).
func (c *Config) Vision(supports func(model string) bool) bool {
	switch strings.ToLower(strings.TrimSpace(c.Model.Vision)) {
	case "true", "yes", "on":
		return true
	case "false", "no", "off":
		return false
	}
	return supports(c.ResolveModel().Model)
}
