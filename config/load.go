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

// Error is a config problem a user must fix; its text names the file,
// line and, where the decoder knows it, column ("config.yaml:12:7: …").
type Error struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *Error) Error() string { return where(e.File, e.Line, e.Column) + e.Msg }

// Warning is a problem that does not stop herald (an unknown key, a
// Hermes setting herald ignores, a value out of range that herald
// replaces by its default).
type Warning struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (w Warning) String() string { return where(w.File, w.Line, w.Column) + w.Msg }

// where is "file:line:column: ", as much of it as is known.
func where(file string, line, column int) string {
	switch {
	case line > 0 && column > 0:
		return fmt.Sprintf("%s:%d:%d: ", file, line, column)
	case line > 0:
		return fmt.Sprintf("%s:%d: ", file, line)
	}
	return file + ": "
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
// A returned error is an *Error for bad YAML or a wrong type; the
// warnings found before it (unknown keys) are returned with it.
func Load(home string, getenv func(string) string) (*Config, []Warning, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg := Defaults()
	cfg.Home = home
	var warns []Warning

	dotenv, dotenvLines, err := readDotEnv(filepath.Join(home, ".env"))
	if err != nil {
		return nil, nil, err
	}
	cfg.Env = dotenv
	lookupSource := func(k string) (string, Source) {
		if v := getenv(k); v != "" {
			return v, Source{Env: k}
		}
		if v := dotenv[k]; v != "" {
			return v, Source{File: ".env", Line: dotenvLines[k], Env: k}
		}
		return "", Source{}
	}
	lookup := func(k string) string {
		v, _ := lookupSource(k)
		return v
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
			return nil, w, err
		}
		warns = append(warns, w...)
	}

	applyEnv(cfg, lookupSource)
	if err := checkStore(cfg, getenv("HERALD_DATABASE_URL") != ""); err != nil {
		return nil, nil, err
	}
	if err := applyShardEnv(cfg, lookupSource); err != nil {
		return nil, nil, err
	}
	if err := checkShards(cfg); err != nil {
		return nil, nil, err
	}
	mergeWebhookExtra(cfg)
	warns = append(warns, expandWebhookSecrets(cfg, lookup)...)
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
		return nil, w, err
	}
	if err := checkShards(cfg); err != nil {
		return nil, w, err
	}
	mergeWebhookExtra(cfg)
	return cfg, append(w, validate(cfg)...), nil
}

// decode decodes config.yaml's text over cfg and records where each key
// is. It returns the warnings about unknown keys even when a value has
// the wrong type (the error).
func decode(data []byte, cfg *Config) ([]Warning, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(err, data)
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
	w := keyWalker{sources: map[string]Source{}}
	w.walk(doc, reflect.TypeOf(*cfg), "")
	if err := doc.Decode(cfg); err != nil {
		return w.warns, yamlError(err, data)
	}
	for k, s := range w.sources {
		cfg.setSource(k, s)
	}
	return w.warns, nil
}

// lineRe is how go-yaml places a problem: "line N: …", or "line N:C: …"
// in the messages of herald's own types.
var lineRe = regexp.MustCompile(`^line (\d+)(?::(\d+))?: (.*)$`)

// yamlError turns go-yaml's error into an *Error naming config.yaml's
// line (and column where it is known); every type error after the first
// is joined to it. data is the text, for the problems go-yaml places
// badly: a tab in the indentation.
func yamlError(err error, data []byte) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		errs := make([]error, len(te.Errors))
		for i, msg := range te.Errors {
			errs[i] = placed(msg)
		}
		if len(errs) == 1 {
			return errs[0]
		}
		return errors.Join(errs...)
	}
	e := placed(strings.TrimPrefix(err.Error(), "yaml: "))
	if line, col := tabAt(data, e); line > 0 {
		e.Line, e.Column = line, col
		e.Msg = "a tab in the indentation: YAML indents with spaces only (" + e.Msg + ")"
	}
	return e
}

// nodeError is an error of herald's own decoding placed at n's line and
// column, in the form placed reads.
func nodeError(n *yaml.Node, format string, a ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d:%d: ", n.Line, n.Column) + fmt.Sprintf(format, a...)}}
}

// placed reads go-yaml's "line N: msg" (or herald's "line N:C: msg").
func placed(msg string) *Error {
	m := lineRe.FindStringSubmatch(msg)
	if m == nil {
		return &Error{File: "config.yaml", Msg: msg}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	return &Error{File: "config.yaml", Line: line, Column: col, Msg: m[3]}
}

// tabAt finds the tab behind a go-yaml syntax error, if a tab is its
// cause: the line and column of a tab in a line's indentation. go-yaml
// counts a problem on the first line as no line; "cannot start any
// token" is then on the line it names (or the first), and a tab that
// "violates indentation" on that line or one below it (go-yaml names the
// line of what encloses it).
func tabAt(data []byte, e *Error) (line, column int) {
	from := max(e.Line, 1)
	switch {
	case strings.Contains(e.Msg, "tab character"):
		return indentTab(data, from, 0)
	case strings.Contains(e.Msg, "cannot start any token"):
		return indentTab(data, from, from)
	}
	return 0, 0
}

// indentTab finds the first line from line `from` on (up to line `to`, 0
// for the end) whose indentation holds a tab, and the tab's column.
func indentTab(data []byte, from, to int) (line, column int) {
	for i, l := range strings.Split(string(data), "\n") {
		if i+1 < from {
			continue
		}
		if to > 0 && i+1 > to {
			break
		}
		indent := len(l) - len(strings.TrimLeft(l, " \t"))
		rest := strings.TrimSpace(l[indent:])
		if rest == "" || strings.HasPrefix(rest, "#") {
			continue
		}
		if t := strings.IndexByte(l[:indent], '\t'); t >= 0 {
			return i + 1, t + 1
		}
	}
	return 0, 0
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

// readDotEnv reads NAME=value lines, and the line of each name.
func readDotEnv(path string) (map[string]string, map[string]int, error) {
	out, lines := map[string]string{}, map[string]int{}
	data, err := herald.ReadRegularFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, lines, nil
	}
	if err != nil {
		return nil, nil, &Error{File: ".env", Msg: err.Error()}
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
			return nil, nil, &Error{File: ".env", Line: line, Msg: "expected NAME=value"}
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		out[k], lines[k] = v, line
	}
	if err := sc.Err(); err != nil {
		return nil, nil, &Error{File: ".env", Line: line, Msg: err.Error()}
	}
	return out, lines, nil
}

// applyEnv applies the environment's settings (get answers with the
// value and where it is set) and records each one's source.
func applyEnv(c *Config, get func(string) (string, Source)) {
	// first returns the first of names that is set
	first := func(names ...string) (string, Source) {
		for _, n := range names {
			if v, src := get(n); v != "" {
				return v, src
			}
		}
		return "", Source{}
	}
	set := func(key string, dst *string, names ...string) {
		if v, src := first(names...); v != "" {
			*dst = v
			c.setSource(key, src)
		}
	}
	setList := func(key string, dst func([]string), name string) {
		if v, src := get(name); v != "" {
			dst(splitList(v))
			c.setSource(key, src)
		}
	}
	set("model.api_key", &c.Model.APIKey, "OPENAI_API_KEY")
	set("model.base_url", &c.Model.BaseURL, "OPENAI_BASE_URL")
	set("model.default", &c.Model.Name, "HERALD_MODEL")
	set("platforms.local.listen", &c.Platforms.Local.Listen, "HERALD_LOCAL_LISTEN")
	set("inbound.listen", &c.Inbound.Listen, "HERALD_INBOUND_LISTEN")
	set("store", &c.Store, "HERALD_DATABASE_URL")
	set("replica_id", &c.ReplicaID, "HERALD_REPLICA_ID")
	if v, src := get("HERALD_MAX_ITERATIONS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			c.Agent.MaxIterations = n
			c.setSource("agent.max_iterations", src)
		}
	}
	set("platforms.telegram.token", &c.Platforms.Telegram.Token, "TELEGRAM_BOT_TOKEN")
	set("platforms.discord.token", &c.Platforms.Discord.Token, "DISCORD_BOT_TOKEN")
	set("platforms.slack.bot_token", &c.Platforms.Slack.BotToken, "SLACK_BOT_TOKEN")
	set("platforms.slack.app_token", &c.Platforms.Slack.AppToken, "SLACK_APP_TOKEN")
	set("platforms.slack.signing_secret", &c.Platforms.Slack.SigningSecret, "SLACK_SIGNING_SECRET")
	set("platforms.telegram.webhook_secret", &c.Platforms.Telegram.WebhookSecret, "TELEGRAM_WEBHOOK_SECRET")
	set("platforms.discord.allow_bots", &c.Platforms.Discord.AllowBots, "DISCORD_ALLOW_BOTS")
	wa := &c.Platforms.WhatsApp
	set("platforms.whatsapp.access_token", &wa.AccessToken, "WHATSAPP_ACCESS_TOKEN", "WHATSAPP_CLOUD_ACCESS_TOKEN")
	set("platforms.whatsapp.phone_number_id", &wa.PhoneNumberID, "WHATSAPP_PHONE_NUMBER_ID", "WHATSAPP_CLOUD_PHONE_NUMBER_ID")
	set("platforms.whatsapp.verify_token", &wa.VerifyToken, "WHATSAPP_VERIFY_TOKEN", "WHATSAPP_CLOUD_VERIFY_TOKEN")
	set("platforms.whatsapp.app_secret", &wa.AppSecret, "WHATSAPP_APP_SECRET", "WHATSAPP_CLOUD_APP_SECRET")
	set("platforms.teams.app_id", &c.Platforms.Teams.AppID, "MICROSOFT_APP_ID")
	set("platforms.teams.app_password", &c.Platforms.Teams.AppPassword, "MICROSOFT_APP_PASSWORD")
	set("platforms.teams.tenant_id", &c.Platforms.Teams.TenantID, "MICROSOFT_APP_TENANT_ID")
	mx := &c.Platforms.Matrix
	set("platforms.matrix.homeserver", &mx.Homeserver, "MATRIX_HOMESERVER")
	set("platforms.matrix.access_token", &mx.AccessToken, "MATRIX_ACCESS_TOKEN")
	set("platforms.matrix.user_id", &mx.UserID, "MATRIX_USER_ID")
	set("platforms.matrix.password", &mx.Password, "MATRIX_PASSWORD")
	set("platforms.matrix.device_id", &mx.DeviceID, "MATRIX_DEVICE_ID")
	set("platforms.matrix.home_channel", &mx.HomeChannel, "MATRIX_HOME_ROOM")
	if v, src := get("MATRIX_REQUIRE_MENTION"); v != "" {
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			mx.RequireMention = &b
			c.setSource("platforms.matrix.require_mention", src)
		}
	}
	setList("platforms.matrix.free_response_channels", func(l []string) { mx.FreeResponseChannels = l }, "MATRIX_FREE_RESPONSE_ROOMS")
	setList("platforms.matrix.allowed_channels", func(l []string) { mx.AllowedChannels = l }, "MATRIX_ALLOWED_ROOMS")
	set("busy_input_mode", &c.BusyInputMode, "HERALD_GATEWAY_BUSY_INPUT_MODE")
	for name, p := range map[string]*Common{
		"TELEGRAM": &c.Platforms.Telegram.Common, "DISCORD": &c.Platforms.Discord.Common,
		"SLACK": &c.Platforms.Slack.Common, "LOCAL": &c.Platforms.Local.Common,
		"WHATSAPP": &c.Platforms.WhatsApp.Common,
		"TEAMS":    &c.Platforms.Teams.Common,
		"MATRIX":   &c.Platforms.Matrix.Common,
	} {
		key := "platforms." + strings.ToLower(name) + "."
		setList(key+"allowed_users", func(l []string) { p.AllowedUsers = l }, name+"_ALLOWED_USERS")
		set(key+"home_channel", &p.HomeChannel, name+"_HOME_CHANNEL")
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
	// every field tagged secret, by its key
	for k, v := range c.secretSettings() {
		add(k, v)
	}
	if u, err := url.Parse(c.Store); err == nil && u.User != nil {
		pw, _ := u.User.Password()
		add("store.password", pw)
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

// validate checks the values herald reads as one of a set or a range:
// a bad one is a warning naming where it was set, and the default
// replaces it.
func validate(c *Config) []Warning {
	var w []Warning
	// warn warns about the value at key; a value replaced by the default
	// is then the default's
	warn := func(key string, replaced bool, format string, a ...any) {
		w = append(w, c.Source(key).warning(fmt.Sprintf(format, a...)))
		if replaced {
			delete(c.sources, key)
		}
	}
	busyKey := c.busyModeKey()
	switch c.BusyMode() {
	case "interrupt", "queue":
	case "steer":
		warn(busyKey, false, "%s %q is not supported by herald; using queue", busyKey, c.BusyMode())
		c.BusyInputMode = "queue"
		c.Display.BusyInputMode = ""
		c.setSource("busy_input_mode", c.Source(busyKey))
	default:
		warn(busyKey, true, "%s %q is not one of interrupt|queue; using interrupt", busyKey, c.BusyMode())
		c.BusyInputMode, c.Display.BusyInputMode = "interrupt", ""
		delete(c.sources, "busy_input_mode")
	}
	switch c.Approvals.Mode {
	case "ask", "off", "yolo":
	default:
		warn("approvals.mode", true, "approvals.mode %q is not one of ask|off|yolo; using ask", c.Approvals.Mode)
		c.Approvals.Mode = DefaultApprovalMode
	}
	switch c.Tools.Terminal.Sandbox {
	case "", "landlock", "bubblewrap", "none":
	default:
		warn("tools.terminal.sandbox", true, "tools.terminal.sandbox %q is not one of landlock|bubblewrap|none; using the default (landlock where the kernel offers it)", c.Tools.Terminal.Sandbox)
		c.Tools.Terminal.Sandbox = DefaultTerminalSandbox
	}
	switch c.SessionReset.Mode {
	case "daily", "idle", "both", "none":
	default:
		warn("session_reset.mode", true, "session_reset.mode %q is not one of daily|idle|both|none; using both", c.SessionReset.Mode)
		c.SessionReset.Mode = DefaultResetMode
	}
	if c.SessionReset.AtHour < 0 || c.SessionReset.AtHour > 23 {
		warn("session_reset.at_hour", true, "session_reset.at_hour %d is not 0–23; using %d", c.SessionReset.AtHour, DefaultResetAtHour)
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
		warn("model.vision", true, "model.vision %q is not one of true|false|auto; using auto", c.Model.Vision)
		c.Model.Vision = DefaultVision
	}
	if c.Media.MaxBytes <= 0 {
		if c.Media.MaxBytes < 0 {
			warn("media.max_bytes", true, "media.max_bytes %d is negative; using %d", c.Media.MaxBytes, DefaultMediaMaxBytes)
		}
		c.Media.MaxBytes = DefaultMediaMaxBytes
	}
	w = append(w, validateWebhook(c)...)
	if c.Cron.MaxParallelJobs <= 0 {
		c.Cron.MaxParallelJobs = DefaultCronMaxParallel
	}
	for _, m := range []struct{ name, v string }{{"unauthorized_dm", c.UnauthorizedDM}, {"platforms.telegram.unauthorized_dm", c.Platforms.Telegram.UnauthorizedDM}, {"platforms.discord.unauthorized_dm", c.Platforms.Discord.UnauthorizedDM}, {"platforms.slack.unauthorized_dm", c.Platforms.Slack.UnauthorizedDM}, {"platforms.local.unauthorized_dm", c.Platforms.Local.UnauthorizedDM}} {
		if m.v != "" && m.v != "pair" && m.v != "ignore" {
			warn(m.name, false, "%s %q is not one of pair|ignore; ignored", m.name, m.v)
		}
	}
	return w
}

// mergeWebhookExtra fills the webhook settings left unset from Hermes'
// extra: block, routes by name; each takes its source along.
func mergeWebhookExtra(c *Config) {
	wh := &c.Platforms.Webhook
	x := wh.Extra
	if x == nil {
		return
	}
	const direct, extra = "platforms.webhook.", "platforms.webhook.extra."
	from := func(key string) { c.setSource(direct+key, c.Source(extra+key)) }
	if wh.Secret == "" && x.Secret != "" {
		wh.Secret = x.Secret
		from("secret")
	}
	if wh.RateLimit == 0 && x.RateLimit != 0 {
		wh.RateLimit = x.RateLimit
		from("rate_limit")
	}
	if wh.MaxBodyBytes == 0 && x.MaxBodyBytes != 0 {
		wh.MaxBodyBytes = x.MaxBodyBytes
		from("max_body_bytes")
	}
	if len(wh.Routes) == 0 && len(x.Routes) > 0 {
		from("routes")
	}
	for name, r := range x.Routes {
		if _, ok := wh.Routes[name]; ok {
			continue
		}
		if wh.Routes == nil {
			wh.Routes = map[string]WebhookRoute{}
		}
		wh.Routes[name] = r
		prefix := "routes." + name
		for k := range c.sources {
			if k == extra+prefix || strings.HasPrefix(k, extra+prefix+".") {
				from(strings.TrimPrefix(k, extra))
			}
		}
	}
	wh.Extra = nil
}

// secretRef is a whole-value reference to a variable: "${NAME}".
var secretRef = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// expandWebhookSecrets replaces "${NAME}" secrets by the variable's value
// (environment first, then .env). A variable that is not set leaves the
// secret empty, with a warning naming both: the route is then skipped as
// one without a secret.
func expandWebhookSecrets(c *Config, get func(string) string) []Warning {
	wh := &c.Platforms.Webhook
	var w []Warning
	expand := func(where string, v *string) (resolved bool) {
		m := secretRef.FindStringSubmatch(strings.TrimSpace(*v))
		if m == nil {
			return true
		}
		*v = get(m[1])
		if *v == "" {
			w = append(w, c.Source(where).warning(fmt.Sprintf("%s refers to ${%s}, which is not set", where, m[1])))
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
func validateWebhook(c *Config) []Warning {
	wh := &c.Platforms.Webhook
	var w []Warning
	warn := func(key, format string, a ...any) {
		w = append(w, c.Source(key).warning(fmt.Sprintf(format, a...)))
	}
	if wh.RateLimit < 0 {
		warn("platforms.webhook.rate_limit", "platforms.webhook.rate_limit %d is negative; using %d", wh.RateLimit, DefaultWebhookRateLimit)
	}
	if wh.RateLimit <= 0 {
		wh.RateLimit = DefaultWebhookRateLimit
	}
	if wh.MaxBodyBytes < 0 {
		warn("platforms.webhook.max_body_bytes", "platforms.webhook.max_body_bytes %d is negative; using %d", wh.MaxBodyBytes, DefaultWebhookMaxBody)
	}
	if wh.MaxBodyBytes <= 0 {
		wh.MaxBodyBytes = DefaultWebhookMaxBody
	}
	for name, r := range wh.Routes {
		where := "platforms.webhook.routes." + name
		if r.RateLimit < 0 {
			warn(where+".rate_limit", "%s.rate_limit %d is negative; using %d", where, r.RateLimit, wh.RateLimit)
		}
		if r.RateLimit <= 0 {
			r.RateLimit = wh.RateLimit
		}
		if r.MaxBodyBytes < 0 {
			warn(where+".max_body_bytes", "%s.max_body_bytes %d is negative; using %d", where, r.MaxBodyBytes, wh.MaxBodyBytes)
		}
		if r.MaxBodyBytes <= 0 {
			r.MaxBodyBytes = wh.MaxBodyBytes
		}
		if r.Secret == "" && !r.unresolved {
			r.Secret = wh.Secret
		}
		if len(r.Skills) > 0 {
			warn(where+".skills", "%s.skills: herald has no skills; ignored", where)
		}
		wh.Routes[name] = r
	}
	return w
}
