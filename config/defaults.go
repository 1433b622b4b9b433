package config

import "time"

// The defaults, in one place. Anything not written here is the zero value.
const (
	DefaultLocalListen   = "127.0.0.1:8642"
	DefaultInboundListen = "127.0.0.1:8644"
	// DefaultWebhookRateLimit is a webhook route's requests per minute
	// (Hermes' default).
	DefaultWebhookRateLimit = 30
	// DefaultWebhookMaxBody bounds a webhook request's body.
	DefaultWebhookMaxBody    = 1 << 20
	DefaultModelName         = "gpt-4o-mini"
	DefaultContextWindow     = 128000
	DefaultMaxIterations     = 90
	DefaultToolTimeout       = 180 * time.Second
	DefaultBootMaxIterations = 20
	DefaultBusyInputMode     = "interrupt"
	DefaultApprovalMode      = "ask"
	DefaultApprovalTimeout   = 5 * time.Minute
	DefaultResetMode         = "both"
	DefaultResetAtHour       = 4
	DefaultResetIdleMinutes  = 1440
	DefaultShutdownGrace     = 10 * time.Second
	DefaultCronMaxParallel   = 4
	DefaultLogLevel          = "info"
	DefaultHookTimeout       = 60 * time.Second
	DefaultGoHookTimeout     = 30 * time.Second
	DefaultTelegramAPI       = "https://api.telegram.org/bot%s/%s"
	DefaultDiscordAPI        = "https://discord.com/api/v9/"
	DefaultSlackAPI          = "https://slack.com/api/"
	// DefaultTerminalSandbox "" is landlock where the kernel offers it,
	// none otherwise (decided at start).
	DefaultTerminalSandbox = ""
	// DefaultMediaMaxBytes caps one inbound attachment (media.max_bytes).
	DefaultMediaMaxBytes = 20 << 20
	DefaultSTTModel      = "whisper-1"
	DefaultVision        = "auto"
)

// Defaults returns a Config with every default set.
func Defaults() *Config {
	t := true
	return &Config{
		Model:   Model{Name: DefaultModelName, ContextWindow: DefaultContextWindow, Vision: DefaultVision},
		Media:   Media{MaxBytes: DefaultMediaMaxBytes},
		STT:     STT{Model: DefaultSTTModel},
		Inbound: Inbound{Listen: DefaultInboundListen},
		Platforms: Platforms{
			Local:    Local{Listen: DefaultLocalListen},
			Telegram: Telegram{APIEndpoint: DefaultTelegramAPI, Common: Common{RequireMention: &t}, ReplyToMode: ReplyFirst},
			Discord:  Discord{APIBase: DefaultDiscordAPI, Common: Common{RequireMention: &t}, ReplyToMode: ReplyFirst},
			Slack:    Slack{APIURL: DefaultSlackAPI, Mode: "socket", Common: Common{RequireMention: &t}},
		},
		Agent:         Agent{MaxIterations: DefaultMaxIterations, ToolTimeout: Duration(DefaultToolTimeout)},
		BusyInputMode: DefaultBusyInputMode,
		Approvals:     Approvals{Mode: DefaultApprovalMode, Timeout: Duration(DefaultApprovalTimeout)},
		SessionReset: SessionReset{
			Mode: DefaultResetMode, AtHour: DefaultResetAtHour, IdleMinutes: DefaultResetIdleMinutes, Notify: &t,
		},
		GroupSessionsPerUser: &t,
		Boot:                 Boot{Enabled: &t},
		Cron:                 Cron{MaxParallelJobs: DefaultCronMaxParallel, WrapResponse: &t},
		Logging:              Logging{Level: DefaultLogLevel},
		ShutdownGrace:        Duration(DefaultShutdownGrace),
	}
}
