package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/heraldgw/herald"
)

// Error is a config problem a user must fix; its text names the file and
// line ("config.yaml:12: …").
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Warning is a problem that does not stop herald (an unknown key, a
// Hermes setting herald ignores).
type Warning struct {
	File string
	Line int
	Msg  string
}

func (w Warning) String() string {
	if w.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Msg)
	}
	return fmt.Sprintf("%s: %s", w.File, w.Msg)
}

// Home returns the herald home: flag value, else $HERALD_HOME (through
// getenv, os.Getenv when nil), else ~/.herald.
func Home(flagValue string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	h := flagValue
	if h == "" {
		h = getenv("HERALD_HOME")
	}
	if h == "" {
		uh, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("config: no home directory for ~/.herald (set HERALD_HOME): %w", err)
		}
		h = filepath.Join(uh, ".herald")
	}
	if strings.HasPrefix(h, "~/") {
		if uh, err := os.UserHomeDir(); err == nil {
			h = filepath.Join(uh, h[2:])
		}
	}
	abs, err := filepath.Abs(h)
	if err != nil {
		return "", fmt.Errorf("config: home %s: %w", h, err)
	}
	return abs, nil
}

// EnsureHome creates the home directory (0700) and its logs/ and hooks/.
func EnsureHome(home string) error {
	for _, d := range []string{home, filepath.Join(home, "logs"), filepath.Join(home, "hooks")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("config: create %s: %w", d, err)
		}
	}
	return nil
}

// Load reads home/config.yaml (optional) and home/.env (optional), applies
// environment overrides from getenv (os.Getenv when nil) and validates.
// A returned error is an *Error for bad YAML or a wrong type.
func Load(home string, getenv func(string) string) (*Config, []Warning, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg := Defaults()
	cfg.Home = home
	var warns []Warning

	dotenv, err := readDotEnv(filepath.Join(home, ".env"))
	if err != nil {
		return nil, nil, err
	}
	cfg.Env = dotenv
	lookup := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return dotenv[k]
	}

	path := filepath.Join(home, "config.yaml")
	data, err := herald.ReadRegularFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, nil, &Error{File: "config.yaml", Msg: err.Error()}
	default:
		w, err := decode(data, cfg)
		if err != nil {
			return nil, nil, err
		}
		warns = append(warns, w...)
	}

	applyEnv(cfg, lookup)
	if err := checkStore(cfg, getenv("HERALD_DATABASE_URL") != ""); err != nil {
		return nil, nil, err
	}
	mergeWebhookExtra(&cfg.Platforms.Webhook)
	warns = append(warns, expandWebhookSecrets(&cfg.Platforms.Webhook, lookup)...)
	warns = append(warns, validate(cfg)...)
	cfg.Secrets = collectSecrets(cfg, lookup)
	return cfg, warns, nil
}

// Parse decodes config.yaml text over the defaults, without environment;
// it is what Load uses and what tests call.
func Parse(data []byte) (*Config, []Warning, error) {
	cfg := Defaults()
	w, err := decode(data, cfg)
	if err != nil {
		return nil, nil, err
	}
	mergeWebhookExtra(&cfg.Platforms.Webhook)
	return cfg, append(w, validate(cfg)...), nil
}

var lineRe = regexp.MustCompile(`^line (\d+): (.*)$`)

func decode(data []byte, cfg *Config) ([]Warning, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(err)
	}
	if len(root.Content) == 0 {
		return nil, nil // empty file
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		if doc.Tag == "!!null" {
			return nil, nil
		}
		return nil, &Error{File: "config.yaml", Line: doc.Line, Msg: "the top level must be a mapping of settings"}
	}
	if err := doc.Decode(cfg); err != nil {
		return nil, yamlError(err)
	}
	var warns []Warning
	unknownKeys(doc, reflect.TypeOf(*cfg), "", &warns)
	return warns, nil
}

func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		if m := lineRe.FindStringSubmatch(te.Errors[0]); m != nil {
			n, _ := strconv.Atoi(m[1])
			return &Error{File: "config.yaml", Line: n, Msg: m[2]}
		}
		return &Error{File: "config.yaml", Msg: te.Errors[0]}
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := lineRe.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{File: "config.yaml", Line: n, Msg: m[2]}
	}
	return &Error{File: "config.yaml", Msg: msg}
}

// hermesKeys are top-level keys of a Hermes config.yaml that herald reads
// no meaning from; they get a quieter warning than a typo.
var hermesKeys = map[string]bool{
	"toolsets": true, "terminal": true, "browser": true, "compression": true, "memory": true,
	"agent": false, "delegation": true, "tts": true, "stt": true, "voice": true, "skills": true,
	"plugins": false, "mcp_servers": true, "providers": true, "fallback_model": true, "auxiliary": true,
	"smart_model_routing": true, "checkpoints": true, "honcho": true, "security": true, "privacy": true,
	"code_execution": true, "quick_commands": true, "personalities": true, "streaming": true,
	"timezone": true, "human_delay": true, "web": true, "session_search": true, "kanban": true,
	"custom_providers": true, "credential_pool": true, "gateway": true, "whatsapp": true, "platform_toolsets": true,
	"approval": true, "context": true, "prompt_caching": true, "file_read_max_chars": true, "_config_version": true,
}

func unknownKeys(n *yaml.Node, t reflect.Type, prefix string, warns *[]Warning) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.MappingNode && t.Kind() == reflect.Map && t.Key().Kind() == reflect.String {
		// a map of named entries (platforms.webhook.routes): each entry's keys
		for i := 0; i+1 < len(n.Content); i += 2 {
			unknownKeys(n.Content[i+1], t.Elem(), prefix+n.Content[i].Value+".", warns)
		}
		return
	}
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct || t == reflect.TypeOf(yaml.Node{}) || t == reflect.TypeOf(Raw{}) {
		return
	}
	fields := map[string]reflect.Type{}
	collectFields(t, fields)
	if t == reflect.TypeOf(Model{}) {
		fields["model"] = reflect.TypeOf("")
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ft, ok := fields[k.Value]
		if !ok {
			key := prefix + k.Value
			msg := fmt.Sprintf("unknown key %q", key)
			if prefix == "" && hermesKeys[k.Value] || prefix == "plugins." && herald.Closest(k.Value, names) == "" {
				msg = fmt.Sprintf("key %q is a Hermes setting herald does not use; ignored", key)
			} else if s := herald.Closest(k.Value, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", prefix+s)
			} else {
				msg += "; ignored"
			}
			*warns = append(*warns, Warning{File: "config.yaml", Line: k.Line, Msg: msg})
			continue
		}
		unknownKeys(v, ft, prefix+k.Value+".", warns)
	}
}

func collectFields(t reflect.Type, out map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			collectFields(f.Type, out)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
}

func readDotEnv(path string) (map[string]string, error) {
	out := map[string]string{}
	data, err := herald.ReadRegularFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, &Error{File: ".env", Msg: err.Error()}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		s = strings.TrimPrefix(s, "export ")
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return nil, &Error{File: ".env", Line: line, Msg: "expected NAME=value"}
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{File: ".env", Line: line, Msg: err.Error()}
	}
	return out, nil
}

func applyEnv(c *Config, get func(string) string) {
	set := func(dst *string, names ...string) {
		for _, n := range names {
			if v := get(n); v != "" {
				*dst = v
				return
			}
		}
	}
	set(&c.Model.APIKey, "OPENAI_API_KEY")
	set(&c.Model.BaseURL, "OPENAI_BASE_URL")
	set(&c.Model.Name, "HERALD_MODEL")
	set(&c.Platforms.Local.Listen, "HERALD_LOCAL_LISTEN")
	set(&c.Inbound.Listen, "HERALD_INBOUND_LISTEN")
	set(&c.Store, "HERALD_DATABASE_URL")
	set(&c.ReplicaID, "HERALD_REPLICA_ID")
	if v := get("HERALD_MAX_ITERATIONS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			c.Agent.MaxIterations = n
		}
	}
	set(&c.Platforms.Telegram.Token, "TELEGRAM_BOT_TOKEN")
	set(&c.Platforms.Discord.Token, "DISCORD_BOT_TOKEN")
	set(&c.Platforms.Slack.BotToken, "SLACK_BOT_TOKEN")
	set(&c.Platforms.Slack.AppToken, "SLACK_APP_TOKEN")
	set(&c.Platforms.Slack.SigningSecret, "SLACK_SIGNING_SECRET")
	set(&c.Platforms.Telegram.WebhookSecret, "TELEGRAM_WEBHOOK_SECRET")
	set(&c.Platforms.Discord.AllowBots, "DISCORD_ALLOW_BOTS")
	wa := &c.Platforms.WhatsApp
	set(&wa.AccessToken, "WHATSAPP_ACCESS_TOKEN", "WHATSAPP_CLOUD_ACCESS_TOKEN")
	set(&wa.PhoneNumberID, "WHATSAPP_PHONE_NUMBER_ID", "WHATSAPP_CLOUD_PHONE_NUMBER_ID")
	set(&wa.VerifyToken, "WHATSAPP_VERIFY_TOKEN", "WHATSAPP_CLOUD_VERIFY_TOKEN")
	set(&wa.AppSecret, "WHATSAPP_APP_SECRET", "WHATSAPP_CLOUD_APP_SECRET")
	set(&c.Platforms.Teams.AppID, "MICROSOFT_APP_ID")
	set(&c.Platforms.Teams.AppPassword, "MICROSOFT_APP_PASSWORD")
	set(&c.Platforms.Teams.TenantID, "MICROSOFT_APP_TENANT_ID")
	mx := &c.Platforms.Matrix
	set(&mx.Homeserver, "MATRIX_HOMESERVER")
	set(&mx.AccessToken, "MATRIX_ACCESS_TOKEN")
	set(&mx.UserID, "MATRIX_USER_ID")
	set(&mx.Password, "MATRIX_PASSWORD")
	set(&mx.DeviceID, "MATRIX_DEVICE_ID")
	set(&mx.HomeChannel, "MATRIX_HOME_ROOM")
	if b, err := strconv.ParseBool(strings.TrimSpace(get("MATRIX_REQUIRE_MENTION"))); err == nil {
		mx.RequireMention = &b
	}
	if v := get("MATRIX_FREE_RESPONSE_ROOMS"); v != "" {
		mx.FreeResponseChannels = splitList(v)
	}
	if v := get("MATRIX_ALLOWED_ROOMS"); v != "" {
		mx.AllowedChannels = splitList(v)
	}
	if v := get("HERALD_GATEWAY_BUSY_INPUT_MODE"); v != "" {
		c.BusyInputMode = v
	}
	for name, p := range map[string]*Common{
		"TELEGRAM": &c.Platforms.Telegram.Common, "DISCORD": &c.Platforms.Discord.Common,
		"SLACK": &c.Platforms.Slack.Common, "LOCAL": &c.Platforms.Local.Common,
		"WHATSAPP": &c.Platforms.WhatsApp.Common,
		"TEAMS":    &c.Platforms.Teams.Common,
		"MATRIX":   &c.Platforms.Matrix.Common,
	} {
		if v := get(name + "_ALLOWED_USERS"); v != "" {
			p.AllowedUsers = splitList(v)
		}
		set(&p.HomeChannel, name+"_HOME_CHANNEL")
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// secretEnvNames are the environment variables herald treats as secrets
// beyond the *_TOKEN/*_KEY/*_SECRET/*_PASSWORD rule of IsSecretName.
var secretEnvNames = []string{
	"OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN", "SLACK_BOT_TOKEN",
	"SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "TELEGRAM_WEBHOOK_SECRET", "ANTHROPIC_API_KEY",
	"OPENROUTER_API_KEY", "HERALD_LOCAL_TOKEN", "HERALD_DATABASE_URL", "PGPASSWORD",
}

// IsSecretName reports whether an environment variable name looks like it
// holds a credential; such variables are scrubbed from hook environments.
func IsSecretName(name string) bool {
	u := strings.ToUpper(name)
	for _, n := range secretEnvNames {
		if u == n {
			return true
		}
	}
	for _, suf := range []string{"_TOKEN", "_API_KEY", "_APIKEY", "_SECRET", "_PASSWORD", "_PASSWD", "_CREDENTIALS", "_PRIVATE_KEY"} {
		if strings.HasSuffix(u, suf) {
			return true
		}
	}
	return false
}

func collectSecrets(c *Config, get func(string) string) map[string]string {
	out := map[string]string{}
	add := func(name, v string) {
		if v != "" {
			out[name] = v
		}
	}
	for _, n := range secretEnvNames {
		add(n, get(n))
	}
	for k, v := range c.Env {
		if IsSecretName(k) {
			add(k, v)
		}
	}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && IsSecretName(k) {
			add(k, v)
		}
	}
	add("model.api_key", c.Model.APIKey)
	add("store", c.Store)
	if u, err := url.Parse(c.Store); err == nil && u.User != nil {
		pw, _ := u.User.Password()
		add("store.password", pw)
	}
	add("stt.api_key", c.STT.APIKey)
	add("platforms.telegram.token", c.Platforms.Telegram.Token)
	add("platforms.discord.token", c.Platforms.Discord.Token)
	add("platforms.slack.bot_token", c.Platforms.Slack.BotToken)
	add("platforms.slack.app_token", c.Platforms.Slack.AppToken)
	add("platforms.slack.signing_secret", c.Platforms.Slack.SigningSecret)
	add("platforms.telegram.webhook_secret", c.Platforms.Telegram.WebhookSecret)
	add("platforms.webhook.secret", c.Platforms.Webhook.Secret)
	add("platforms.whatsapp.access_token", c.Platforms.WhatsApp.AccessToken)
	add("platforms.whatsapp.verify_token", c.Platforms.WhatsApp.VerifyToken)
	add("platforms.whatsapp.app_secret", c.Platforms.WhatsApp.AppSecret)
	add("platforms.teams.app_password", c.Platforms.Teams.AppPassword)
	add("platforms.matrix.access_token", c.Platforms.Matrix.AccessToken)
	add("platforms.matrix.password", c.Platforms.Matrix.Password)
	for name, r := range c.Platforms.Webhook.Routes {
		add("platforms.webhook.routes."+name+".secret", r.Secret)
	}
	return out
}

// checkStore refuses a store that is neither empty (SQLite) nor a
// PostgreSQL URL: falling back to SQLite would split replicas that
// believe they share one database. fromEnv says HERALD_DATABASE_URL set
// it, for the message.
func checkStore(c *Config, fromEnv bool) error {
	if c.Store == "" {
		return nil
	}
	where := "config.yaml"
	if fromEnv {
		where = "HERALD_DATABASE_URL"
	}
	u, err := url.Parse(c.Store)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		// the value may hold a password: it is not repeated
		return &Error{File: where, Msg: "store: want a postgres://user:password@host:port/database URL (or nothing, for SQLite in the home)"}
	}
	return nil
}

func validate(c *Config) []Warning {
	var w []Warning
	warn := func(format string, a ...any) {
		w = append(w, Warning{File: "config.yaml", Msg: fmt.Sprintf(format, a...)})
	}
	switch c.BusyMode() {
	case "interrupt", "queue":
	case "steer":
		warn("busy_input_mode %q is not supported by herald; using queue", c.BusyMode())
		c.BusyInputMode = "queue"
		c.Display.BusyInputMode = ""
	default:
		warn("busy_input_mode %q is not one of interrupt|queue; using interrupt", c.BusyMode())
		c.BusyInputMode, c.Display.BusyInputMode = "interrupt", ""
	}
	switch c.Approvals.Mode {
	case "ask", "off", "yolo":
	default:
		warn("approvals.mode %q is not one of ask|off|yolo; using ask", c.Approvals.Mode)
		c.Approvals.Mode = DefaultApprovalMode
	}
	switch c.Tools.Terminal.Sandbox {
	case "", "landlock", "bubblewrap", "none":
	default:
		warn("tools.terminal.sandbox %q is not one of landlock|bubblewrap|none; using the default (landlock where the kernel offers it)", c.Tools.Terminal.Sandbox)
		c.Tools.Terminal.Sandbox = DefaultTerminalSandbox
	}
	switch c.SessionReset.Mode {
	case "daily", "idle", "both", "none":
	default:
		warn("session_reset.mode %q is not one of daily|idle|both|none; using both", c.SessionReset.Mode)
		c.SessionReset.Mode = DefaultResetMode
	}
	if c.SessionReset.AtHour < 0 || c.SessionReset.AtHour > 23 {
		warn("session_reset.at_hour %d is not 0–23; using %d", c.SessionReset.AtHour, DefaultResetAtHour)
		c.SessionReset.AtHour = DefaultResetAtHour
	}
	if c.SessionReset.IdleMinutes <= 0 {
		c.SessionReset.IdleMinutes = DefaultResetIdleMinutes
	}
	if c.Agent.MaxIterations <= 0 {
		c.Agent.MaxIterations = DefaultMaxIterations
	}
	if c.Model.ContextWindow <= 0 {
		c.Model.ContextWindow = DefaultContextWindow
	}
	switch strings.ToLower(strings.TrimSpace(c.Model.Vision)) {
	case "", "auto", "true", "false", "yes", "no", "on", "off":
	default:
		warn("model.vision %q is not one of true|false|auto; using auto", c.Model.Vision)
		c.Model.Vision = DefaultVision
	}
	if c.Media.MaxBytes <= 0 {
		if c.Media.MaxBytes < 0 {
			warn("media.max_bytes %d is negative; using %d", c.Media.MaxBytes, DefaultMediaMaxBytes)
		}
		c.Media.MaxBytes = DefaultMediaMaxBytes
	}
	w = append(w, validateWebhook(&c.Platforms.Webhook)...)
	if c.Cron.MaxParallelJobs <= 0 {
		c.Cron.MaxParallelJobs = DefaultCronMaxParallel
	}
	for _, m := range []struct{ name, v string }{{"unauthorized_dm", c.UnauthorizedDM}, {"platforms.telegram.unauthorized_dm", c.Platforms.Telegram.UnauthorizedDM}, {"platforms.discord.unauthorized_dm", c.Platforms.Discord.UnauthorizedDM}, {"platforms.slack.unauthorized_dm", c.Platforms.Slack.UnauthorizedDM}, {"platforms.local.unauthorized_dm", c.Platforms.Local.UnauthorizedDM}} {
		if m.v != "" && m.v != "pair" && m.v != "ignore" {
			warn("%s %q is not one of pair|ignore; ignored", m.name, m.v)
		}
	}
	return w
}

// mergeWebhookExtra fills the webhook settings left unset from Hermes'
// extra: block, routes by name.
func mergeWebhookExtra(wh *Webhook) {
	x := wh.Extra
	if x == nil {
		return
	}
	if wh.Secret == "" {
		wh.Secret = x.Secret
	}
	if wh.RateLimit == 0 {
		wh.RateLimit = x.RateLimit
	}
	if wh.MaxBodyBytes == 0 {
		wh.MaxBodyBytes = x.MaxBodyBytes
	}
	for name, r := range x.Routes {
		if _, ok := wh.Routes[name]; ok {
			continue
		}
		if wh.Routes == nil {
			wh.Routes = map[string]WebhookRoute{}
		}
		wh.Routes[name] = r
	}
	wh.Extra = nil
}

// secretRef is a whole-value reference to a variable: "${NAME}".
var secretRef = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// expandWebhookSecrets replaces "${NAME}" secrets by the variable's value
// (environment first, then .env). A variable that is not set leaves the
// secret empty, with a warning naming both: the route is then skipped as
// one without a secret.
func expandWebhookSecrets(wh *Webhook, get func(string) string) []Warning {
	var w []Warning
	expand := func(where string, v *string) (resolved bool) {
		m := secretRef.FindStringSubmatch(strings.TrimSpace(*v))
		if m == nil {
			return true
		}
		*v = get(m[1])
		if *v == "" {
			w = append(w, Warning{File: "config.yaml", Msg: fmt.Sprintf("%s refers to ${%s}, which is not set", where, m[1])})
			return false
		}
		return true
	}
	expand("platforms.webhook.secret", &wh.Secret)
	for name, r := range wh.Routes {
		r.unresolved = !expand("platforms.webhook.routes."+name+".secret", &r.Secret)
		wh.Routes[name] = r
	}
	return w
}

// validateWebhook fills the webhook platform's defaults: each route's
// rate limit and body limit from the platform's, the platform's from
// the defaults.
func validateWebhook(wh *Webhook) []Warning {
	var w []Warning
	warn := func(format string, a ...any) {
		w = append(w, Warning{File: "config.yaml", Msg: fmt.Sprintf(format, a...)})
	}
	if wh.RateLimit < 0 {
		warn("platforms.webhook.rate_limit %d is negative; using %d", wh.RateLimit, DefaultWebhookRateLimit)
	}
	if wh.RateLimit <= 0 {
		wh.RateLimit = DefaultWebhookRateLimit
	}
	if wh.MaxBodyBytes < 0 {
		warn("platforms.webhook.max_body_bytes %d is negative; using %d", wh.MaxBodyBytes, DefaultWebhookMaxBody)
	}
	if wh.MaxBodyBytes <= 0 {
		wh.MaxBodyBytes = DefaultWebhookMaxBody
	}
	for name, r := range wh.Routes {
		where := "platforms.webhook.routes." + name
		if r.RateLimit < 0 {
			warn("%s.rate_limit %d is negative; using %d", where, r.RateLimit, wh.RateLimit)
		}
		if r.RateLimit <= 0 {
			r.RateLimit = wh.RateLimit
		}
		if r.MaxBodyBytes < 0 {
			warn("%s.max_body_bytes %d is negative; using %d", where, r.MaxBodyBytes, wh.MaxBodyBytes)
		}
		if r.MaxBodyBytes <= 0 {
			r.MaxBodyBytes = wh.MaxBodyBytes
		}
		if r.Secret == "" && !r.unresolved {
			r.Secret = wh.Secret
		}
		if len(r.Skills) > 0 {
			warn("%s.skills: herald has no skills; ignored", where)
		}
		wh.Routes[name] = r
	}
	return w
}
