package config

// settings.go: every effective setting as a list, with its source, for
// `herald config show --effective`; a secret's value is never in it.

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Setting is one effective value and where it came from.
type Setting struct {
	Key string `json:"key"`
	// Value is a string, int64, bool, []string or map[string]string; nil
	// when the setting is unset (herald's built-in behaviour applies).
	// A secret's value is Masked, or "" when it is empty.
	Value  any    `json:"value"`
	Source Source `json:"-"`
	Secret bool   `json:"secret,omitempty"`
}

// Settings lists every effective setting in config.yaml's order of keys,
// with its source. Secrets are masked: no value of a field tagged secret
// is in the result.
func (c *Config) Settings() []Setting {
	var out []Setting
	c.settingsOf(reflect.ValueOf(c).Elem(), "", false, &out)
	for i := range out {
		s := &out[i]
		if s.Secret {
			if v, _ := s.Value.(string); v != "" {
				s.Value = Masked
			}
		}
		switch {
		case s.Key == "busy_input_mode":
			s.Value, s.Source = c.BusyMode(), c.Source(c.busyModeKey())
		case strings.HasPrefix(s.Key, "platforms.") && strings.HasSuffix(s.Key, ".enabled") && s.Value == nil:
			name := strings.TrimSuffix(strings.TrimPrefix(s.Key, "platforms."), ".enabled")
			s.Value, s.Source = c.derivedEnabled(name)
		}
	}
	return out
}

// secretSettings are the values of every field tagged secret, by key,
// unmasked (for the redactor).
func (c *Config) secretSettings() map[string]string {
	var all []Setting
	c.settingsOf(reflect.ValueOf(c).Elem(), "", false, &all)
	out := map[string]string{}
	for _, s := range all {
		if v, _ := s.Value.(string); s.Secret && v != "" {
			out[s.Key] = v
		}
	}
	return out
}

var durationType = reflect.TypeOf(Duration(0))

func (c *Config) settingsOf(v reflect.Value, prefix string, secret bool, out *[]Setting) {
	t := v.Type()
	add := func(value any) {
		key := strings.TrimSuffix(prefix, ".")
		*out = append(*out, Setting{Key: key, Value: value, Source: c.Source(key), Secret: secret})
	}
	switch {
	case t == durationType:
		add(time.Duration(v.Int()).String())
		return
	case t == rawType:
		n := v.Interface().(Raw).Node
		switch {
		case n == nil || n.Tag == "!!null":
			add(nil)
		case n.Kind == yaml.ScalarNode:
			add(n.Value)
		default:
			add("(a block; herald config show prints it)")
		}
		return
	case t == reflect.TypeOf(Patterns(nil)):
		var ps []string
		for _, re := range v.Interface().(Patterns) {
			ps = append(ps, strings.TrimPrefix(re.String(), "(?i)"))
		}
		add(ps)
		return
	}
	switch t.Kind() {
	case reflect.String:
		add(v.String())
	case reflect.Bool:
		add(v.Bool())
	case reflect.Int, reflect.Int64:
		add(v.Int())
	case reflect.Pointer:
		switch {
		case v.IsNil() && t.Elem().Kind() == reflect.Struct:
		case v.IsNil():
			add(nil)
		default:
			c.settingsOf(v.Elem(), prefix, secret, out)
		}
	case reflect.Slice:
		list := make([]string, v.Len())
		for i := range list {
			list[i] = fmt.Sprint(v.Index(i).Interface())
		}
		add(list)
	case reflect.Map:
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		if t.Elem().Kind() == reflect.String {
			m := map[string]string{}
			for _, k := range keys {
				m[k] = v.MapIndex(reflect.ValueOf(k)).String()
			}
			add(m)
			return
		}
		for _, k := range keys {
			c.settingsOf(v.MapIndex(reflect.ValueOf(k)), prefix+k+".", secret, out)
		}
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			fieldPrefix := prefix
			if !strings.Contains(opts, "inline") {
				if name == "" {
					name = strings.ToLower(f.Name)
				}
				fieldPrefix += name + "."
			}
			c.settingsOf(v.Field(i), fieldPrefix, secret || f.Tag.Get(secretTag) == "true", out)
		}
	}
}

// busyModeKey is the key BusyMode reads its answer from.
func (c *Config) busyModeKey() string {
	if c.BusyInputMode != "" && c.BusyInputMode != DefaultBusyInputMode || c.Display.BusyInputMode == "" {
		return "busy_input_mode"
	}
	return "display.busy_input_mode"
}

// platformCredentials are the settings whose presence turns a platform on
// when its enabled: is not set.
var platformCredentials = map[string]string{
	"telegram": "platforms.telegram.token",
	"discord":  "platforms.discord.token",
	"slack":    "platforms.slack.bot_token",
	"whatsapp": "platforms.whatsapp.access_token",
	"teams":    "platforms.teams.app_id",
	"matrix":   "platforms.matrix.homeserver",
	"webhook":  "platforms.webhook.routes",
}

// PlatformEnabled reports whether the gateway starts a platform: its
// enabled: setting when given, else whether its credential (a token, an
// app id, a homeserver, a webhook route) is set. The local platform is
// always on.
func (c *Config) PlatformEnabled(name string) bool {
	on, _ := c.derivedEnabled(name)
	return on
}

func (c *Config) derivedEnabled(name string) (bool, Source) {
	p := &c.Platforms
	var explicit *bool
	var credential bool
	switch name {
	case "local":
		return true, Source{}
	case "telegram":
		explicit, credential = p.Telegram.Enabled, p.Telegram.Token != ""
	case "discord":
		explicit, credential = p.Discord.Enabled, p.Discord.Token != ""
	case "slack":
		explicit, credential = p.Slack.Enabled, p.Slack.BotToken != ""
	case "whatsapp":
		explicit, credential = p.WhatsApp.Enabled, p.WhatsApp.AccessToken != ""
	case "teams":
		explicit, credential = p.Teams.Enabled, p.Teams.AppID != ""
	case "matrix":
		explicit, credential = p.Matrix.Enabled, p.Matrix.Homeserver != ""
	case "webhook":
		explicit, credential = p.Webhook.Enabled, len(p.Webhook.Routes) > 0
	default:
		return false, Source{}
	}
	if explicit != nil {
		return *explicit, c.Source("platforms." + name + ".enabled")
	}
	if !credential {
		return false, Source{}
	}
	return true, c.Source(platformCredentials[name])
}
