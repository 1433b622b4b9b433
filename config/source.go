package config

// source.go: where each effective setting came from. The loader records a
// Source per key path ("platforms.telegram.token") while it walks the
// config.yaml node tree and while it applies the environment; a key with
// no record is a default. Warnings about a value name its source, and
// `herald config show --effective` prints it beside each value.

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/heraldgw/herald"
)

// Source says where a setting came from: a line of config.yaml or .env,
// an environment variable, or (the zero Source) herald's default.
type Source struct {
	// File is "config.yaml" or ".env"; empty for a default or a variable
	// of the process environment.
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Env is the variable that set the value (in the environment, or in
	// .env when File is ".env").
	Env string `json:"env,omitempty"`
}

// IsDefault reports whether the value is herald's default.
func (s Source) IsDefault() bool { return s.File == "" && s.Env == "" }

// String is "default", "config.yaml:LINE", "environment (NAME)" or
// ".env:LINE (NAME)".
func (s Source) String() string {
	switch {
	case s.IsDefault():
		return "default"
	case s.File == "":
		return "environment (" + s.Env + ")"
	case s.Env != "":
		return fmt.Sprintf("%s:%d (%s)", s.File, s.Line, s.Env)
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// warning is a Warning about the value from s: file, line and column
// for a file, the variable for the environment.
func (s Source) warning(msg string) Warning {
	switch {
	case s.IsDefault():
		return Warning{File: "config.yaml", Msg: msg}
	case s.File == "":
		return Warning{File: "environment (" + s.Env + ")", Msg: msg}
	}
	return Warning{File: s.File, Line: s.Line, Column: s.Column, Msg: msg}
}

// Source returns where the setting at key (a dotted path of config.yaml
// keys, "approvals.mode") came from.
func (c *Config) Source(key string) Source { return c.sources[key] }

func (c *Config) setSource(key string, s Source) {
	if c.sources == nil {
		c.sources = map[string]Source{}
	}
	c.sources[key] = s
}

// keyWalker walks config.yaml's node tree beside Config's type: it warns
// about keys herald does not know and records where each known key is.
type keyWalker struct {
	warns   []Warning
	sources map[string]Source
}

var (
	rawType   = reflect.TypeOf(Raw{})
	nodeType  = reflect.TypeOf(yaml.Node{})
	modelType = reflect.TypeOf(Model{})
)

// at is the position of a key's value: the value itself when it is a
// scalar, else the key (a list or mapping starts on the lines below).
func at(k, v *yaml.Node) Source {
	n := k
	if v.Kind == yaml.ScalarNode || v.Kind == yaml.AliasNode {
		n = v
	}
	return Source{File: "config.yaml", Line: n.Line, Column: n.Column}
}

func (w *keyWalker) walk(n *yaml.Node, t reflect.Type, prefix string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == modelType && n.Kind == yaml.ScalarNode {
		w.sources[prefix+"default"] = Source{File: "config.yaml", Line: n.Line, Column: n.Column}
		return
	}
	if n.Kind == yaml.MappingNode && t.Kind() == reflect.Map && t.Key().Kind() == reflect.String {
		// a map of named entries (platforms.webhook.routes): each entry's keys
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			w.sources[prefix+k.Value] = at(k, v)
			w.walk(v, t.Elem(), prefix+k.Value+".")
		}
		return
	}
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct || t == nodeType || t == rawType {
		return
	}
	fields := structFields(t)
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := fields[k.Value]
		if !ok {
			w.unknown(prefix, k, names)
			continue
		}
		w.sources[prefix+k.Value] = at(k, v)
		w.walk(v, f.Type, prefix+k.Value+".")
	}
	// Hermes' model.model names the model when model.default does not
	if t == modelType {
		if _, ok := w.sources[prefix+"default"]; !ok {
			if s, ok := w.sources[prefix+"model"]; ok {
				w.sources[prefix+"default"] = s
			}
		}
	}
}

func (w *keyWalker) unknown(prefix string, k *yaml.Node, names []string) {
	key := prefix + k.Value
	msg := fmt.Sprintf("unknown key %q", key)
	closest := herald.Closest(k.Value, names)
	if prefix == "" && hermesKeys[k.Value] || prefix == "plugins." && closest == "" {
		msg = fmt.Sprintf("key %q is a Hermes setting herald does not use; ignored", key)
	} else if closest != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", prefix+closest)
	} else {
		msg += "; ignored"
	}
	w.warns = append(w.warns, Warning{File: "config.yaml", Line: k.Line, Msg: msg})
}

// secretTag marks a field whose value is a credential: never printed,
// always redacted.
const secretTag = "secret"

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

// Masked stands for a secret's value wherever settings are shown.
const Masked = herald.Mask

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

// SecretKey reports whether a config.yaml key (its last part) names a
// credential: token, secret, password, api_key and the like, in any
// case and with any prefix (bot_token, GITHUB_TOKEN, app_password).
func SecretKey(name string) bool {
	l := strings.ToLower(name)
	for _, suf := range []string{"token", "secret", "password", "passwd", "api_key", "apikey", "private_key", "credentials", "authorization"} {
		if strings.HasSuffix(l, suf) {
			return true
		}
	}
	return IsSecretName(name)
}

// MaskFile returns config.yaml's text with the value of every secret
// setting replaced by "[REDACTED]" (Masked, quoted so the text stays
// YAML): the fields herald keeps credentials in, and any key named like
// one (SecretKey), wherever it is (a hook's env:, a header). A "${NAME}"
// reference is kept: it names a variable, not a secret. The text keeps
// its layout and comments; where a secret is written in a way the text
// cannot be masked in place (a quoted or plain value over several lines),
// the document is written anew from its masked tree instead. Text that is
// not YAML is an *Error, as from Load.
func MaskFile(data []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(err, data)
	}
	lines := strings.SplitAfter(string(data), "\n")
	secrets := secretScalars(&root, lines)
	if len(secrets) == 0 {
		return data, nil
	}
	spans := make([]maskSpan, len(secrets))
	inPlace := true
	for i, sc := range secrets {
		spans[i] = scalarSpan(lines, sc.node, sc.keyColumn)
		inPlace = inPlace && spans[i].from >= 0
	}
	for _, sc := range secrets {
		sc.node.Value, sc.node.Style, sc.node.Tag = Masked, yaml.DoubleQuotedStyle, "!!str"
	}
	rewritten, err := yaml.Marshal(&root)
	if err != nil {
		return nil, &Error{File: "config.yaml", Msg: "cannot be shown with its secrets masked: " + err.Error()}
	}
	if inPlace {
		// kept only when it reads back as exactly the masked tree
		out := maskInPlace(lines, spans)
		var back yaml.Node
		if yaml.Unmarshal(out, &back) == nil {
			if again, err := yaml.Marshal(&back); err == nil && bytes.Equal(again, rewritten) {
				return out, nil
			}
		}
	}
	return rewritten, nil
}

// secretScalar is a secret's value node and the column of its key.
type secretScalar struct {
	node      *yaml.Node
	keyColumn int
}

// secretScalars finds the value of every secret setting in a config.yaml
// node tree, each once.
func secretScalars(root *yaml.Node, lines []string) []secretScalar {
	var out []secretScalar
	masked, seen := map[*yaml.Node]bool{}, map[*yaml.Node]bool{}
	var visit func(n *yaml.Node, t reflect.Type, secret bool, keyColumn int)
	visit = func(n *yaml.Node, t reflect.Type, secret bool, keyColumn int) {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			var et reflect.Type
			if t != nil && t.Kind() == reflect.Slice {
				et = t.Elem()
			}
			for _, x := range n.Content {
				visit(x, et, secret, keyColumn)
			}
		case yaml.MappingNode:
			var fields map[string]reflect.StructField
			if t != nil && t.Kind() == reflect.Struct {
				fields = structFields(t)
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				var ft reflect.Type
				tagged := false
				if f, ok := fields[k.Value]; ok {
					ft, tagged = f.Type, f.Tag.Get(secretTag) == "true"
				} else if t != nil && t.Kind() == reflect.Map {
					ft = t.Elem()
				}
				visit(v, ft, secret || tagged || SecretKey(k.Value), k.Column)
			}
		case yaml.ScalarNode:
			if secret && !masked[n] && n.Value != "" && n.Tag != "!!null" && !secretRef.MatchString(strings.TrimSpace(n.Value)) {
				masked[n] = true
				out = append(out, secretScalar{node: n, keyColumn: keyColumn})
			}
		case yaml.AliasNode:
			// the anchored value is written where the anchor is; each
			// anchor is looked into once (an alias may name its own
			// ancestor, or a thousand aliases one anchor)
			if secret && n.Alias != nil && !seen[n.Alias] {
				seen[n.Alias] = true
				visit(n.Alias, t, true, lineIndent(lines, n.Alias.Line)+1)
			}
		}
	}
	visit(root, reflect.TypeOf(Config{}), false, 0)
	return out
}

// maskSpan is where one secret scalar is written: runes [from, to) of its
// first line (from -1: not found), and with block the lines below that
// are indented more than its key (the content of a | or > scalar).
type maskSpan struct {
	line, from, to int
	block          bool
	keyColumn      int
}

func maskInPlace(lines []string, spans []maskSpan) []byte {
	lines = slices.Clone(lines)
	for _, s := range spans {
		l := lines[s.line-1]
		r := []rune(strings.TrimRight(l, "\r\n"))
		lines[s.line-1] = string(r[:s.from]) + `"` + Masked + `"` + string(r[s.to:]) + lineEnd(l)
		if !s.block {
			continue
		}
		for i := s.line; i < len(lines); i++ {
			l := lines[i]
			if strings.TrimSpace(l) == "" {
				continue
			}
			if lineIndent(lines, i+1) < s.keyColumn {
				break
			}
			lines[i] = ""
		}
	}
	return []byte(strings.Join(lines, ""))
}

// scalarSpan finds where n is written on its line. It gives up (from -1)
// on a value that goes on over more lines than a block scalar's.
func scalarSpan(lines []string, n *yaml.Node, keyColumn int) maskSpan {
	s := maskSpan{line: n.Line, from: -1, keyColumn: keyColumn}
	if n.Line < 1 || n.Line > len(lines) {
		return s
	}
	r := []rune(strings.TrimRight(lines[n.Line-1], "\r\n"))
	from := n.Column - 1
	if from < 0 || from > len(r) {
		return s
	}
	rest := r[from:]
	// an anchor or a tag before the value stays
	for len(rest) > 0 && (rest[0] == '&' || rest[0] == '!') {
		i := 0
		for i < len(rest) && rest[i] != ' ' && rest[i] != '\t' {
			i++
		}
		for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t') {
			i++
		}
		from, rest = from+i, rest[i:]
	}
	end := -1
	switch n.Style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		// the indicator and any comment after it; the content below
		s.from, s.to, s.block = from, len(r), true
		return s
	case yaml.DoubleQuotedStyle:
		for i := 1; i < len(rest) && end < 0; i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				end = i + 1
			}
		}
	case yaml.SingleQuotedStyle:
		for i := 1; i < len(rest) && end < 0; i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				end = i + 1
			}
		}
	default:
		if strings.HasPrefix(string(rest), n.Value) {
			end = len([]rune(n.Value))
		}
	}
	if end >= 0 {
		s.from, s.to = from, from+end
	}
	return s
}

// lineIndent is the number of spaces that start line n (1-based).
func lineIndent(lines []string, n int) int {
	if n < 1 || n > len(lines) {
		return 0
	}
	return len(lines[n-1]) - len(strings.TrimLeft(lines[n-1], " "))
}

func lineEnd(l string) string {
	if strings.HasSuffix(l, "\n") {
		return "\n"
	}
	return ""
}

// structFields maps a struct's config.yaml keys to its fields, inline
// structs' keys included.
func structFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-":
		case strings.Contains(opts, "inline"):
			for k, v := range structFields(f.Type) {
				out[k] = v
			}
		default:
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			out[name] = f
		}
	}
	if t == modelType {
		out["model"] = reflect.StructField{Name: "Alt", Type: reflect.TypeOf("")}
	}
	return out
}
