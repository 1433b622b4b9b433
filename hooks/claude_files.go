package hooks

// Claude Code's hooks files, read where Claude Code keeps them: a plugin's
// hooks/hooks.json and the hooks block of a .claude/settings.json. Each
// command entry becomes a claude-dialect ShellSpec, under the same consent
// as the hooks: block of config.yaml.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/heraldgw/herald"
)

// ClaudeFile is one file of Claude Code hooks.
type ClaudeFile struct {
	// Path is the file to read; Name is how diagnostics and listings name
	// it (the path as configured).
	Path string
	Name string
	// PluginRoot is the plugin's directory (CLAUDE_PLUGIN_ROOT) when the
	// file is a plugin's hooks file.
	PluginRoot string
}

// ClaudePlugin finds the hooks file of the Claude Code plugin in dir (an
// absolute path): the "hooks" path of .claude-plugin/plugin.json when it
// names one, else hooks/hooks.json. ok is false when the plugin has no
// hooks (a plugin of only commands or skills); err says why dir is not
// a plugin directory at all.
func ClaudePlugin(dir, name string) (f ClaudeFile, ok bool, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return f, false, fmt.Errorf("plugin %s: %w", name, err)
	}
	if !st.IsDir() {
		return f, false, fmt.Errorf("plugin %s: not a directory", name)
	}
	rel := filepath.Join("hooks", "hooks.json")
	if b, err := herald.ReadRegularFile(filepath.Join(dir, ".claude-plugin", "plugin.json")); err == nil {
		var manifest struct {
			Hooks json.RawMessage `json:"hooks"`
		}
		var p string
		if json.Unmarshal(b, &manifest) == nil && json.Unmarshal(manifest.Hooks, &p) == nil && p != "" {
			rel = filepath.Clean(p)
		}
	}
	f = ClaudeFile{Path: filepath.Join(dir, rel), Name: filepath.Join(name, rel), PluginRoot: dir}
	if _, err := os.Stat(f.Path); errors.Is(err, os.ErrNotExist) {
		return f, false, nil
	}
	return f, true, nil
}

// LoadClaudeFile reads the hooks of a Claude Code hooks file:
// {"hooks": {"<Event>": [{"matcher": "…", "hooks": [{"type": "command",
// "command": "…", "timeout": N}]}]}}, other top-level keys ignored. A
// file that cannot be read or is not valid JSON is an error naming it
// (and the line and column); an entry herald cannot run is skipped with a
// warning naming file:line and the entry.
func LoadClaudeFile(f ClaudeFile) (specs []ShellSpec, warns []string, err error) {
	b, err := herald.ReadRegularFile(f.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return loadClaudeJSON(f, b)
}

func loadClaudeJSON(f ClaudeFile, b []byte) (specs []ShellSpec, warns []string, err error) {
	root, err := parseJSONTree(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w; its hooks are not loaded", f.Name, err)
	}
	if root.kind != '{' {
		return nil, nil, fmt.Errorf("%s:%d: not a JSON object; its hooks are not loaded", f.Name, root.line)
	}
	hooksV := root.get("hooks")
	if hooksV == nil || hooksV.kind == 'z' {
		return nil, nil, nil
	}
	warnf := func(line int, format string, a ...any) {
		warns = append(warns, fmt.Sprintf("%s:%d: ", f.Name, line)+fmt.Sprintf(format, a...))
	}
	if hooksV.kind != '{' {
		return nil, nil, fmt.Errorf("%s:%d: hooks must be an object of event names; its hooks are not loaded", f.Name, hooksV.line)
	}
	for _, ev := range hooksV.obj {
		event, ok := eventAliases[ev.key]
		if !ok || ev.key == "" || ev.key[0] < 'A' || ev.key[0] > 'Z' {
			warnf(ev.val.line, "hooks.%s: herald has no %s event; skipped (herald runs %s)", ev.key, ev.key, strings.Join(claudeEvents(), ", "))
			continue
		}
		if ev.val.kind != '[' {
			warnf(ev.val.line, "hooks.%s must be a list of matcher groups; skipped", ev.key)
			continue
		}
		pt, _ := Lookup(event)
		for gi, group := range ev.val.arr {
			gwhere := fmt.Sprintf("hooks.%s[%d]", ev.key, gi)
			if group.kind != '{' {
				warnf(group.line, "%s is not an object; skipped", gwhere)
				continue
			}
			matcher := ""
			if m := group.get("matcher"); m != nil && m.kind != 'z' {
				if m.kind != 's' {
					warnf(m.line, "%s.matcher must be a string; skipped", gwhere)
					continue
				}
				matcher = strings.TrimSpace(m.str)
			}
			list := group.get("hooks")
			if list == nil || list.kind != '[' {
				warnf(group.line, "%s.hooks must be a list of hooks; skipped", gwhere)
				continue
			}
			for hi, h := range list.arr {
				where := fmt.Sprintf("%s.hooks[%d]", gwhere, hi)
				s, w, ok := claudeEntry(h, where, event, ev.key, matcher, pt)
				for _, x := range w {
					warnf(h.line, "%s", x)
				}
				if ok {
					s.File, s.PluginRoot = f.Name, f.PluginRoot
					specs = append(specs, s)
				}
			}
		}
	}
	return specs, warns, nil
}

// claudeEntry reads one handler of a matcher group.
func claudeEntry(h *jsonValue, where, event, claudeEvent, matcher string, pt Point) (ShellSpec, []string, bool) {
	s := ShellSpec{Event: event, ClaudeEvent: claudeEvent, Where: where, Line: h.line, Dialect: "claude", Timeout: DefaultShellTimeout}
	if h.kind != '{' {
		return s, []string{where + " is not an object; skipped"}, false
	}
	var warns []string
	typ := "command"
	if t := h.get("type"); t != nil {
		typ = t.str
	}
	switch typ {
	case TypeCommand:
	case TypeHTTP, TypePrompt, TypeAgent:
		return claudeTypedEntry(h, s, typ, where, matcher, pt)
	default:
		return s, []string{fmt.Sprintf("%s: hooks of type %q are not run by herald (it runs command, http, prompt and agent); skipped", where, typ)}, false
	}
	if c := h.get("command"); c != nil && c.kind == 's' {
		s.Command = strings.TrimSpace(c.str)
	}
	if s.Command == "" {
		return s, []string{where + " is missing a non-empty 'command' field; skipped"}, false
	}
	if a := h.get("args"); a != nil && a.kind != 'z' {
		return s, []string{where + ": the exec form (args) is not run by herald, only the shell form (command alone); skipped"}, false
	}
	if sh := h.get("shell"); sh != nil && sh.kind == 's' {
		switch sh.str {
		case "", "sh":
		case "bash":
			s.ShellProgram = "bash"
		default:
			return s, []string{fmt.Sprintf("%s: shell %q is not available to herald's hooks; skipped", where, sh.str)}, false
		}
	}
	warns = append(warns, s.claudeMatcherAndTimeout(h, where, matcher, pt)...)
	if a := h.get("async"); a != nil && a.kind == 'b' && a.str == "true" {
		warns = append(warns, where+": async is not supported; the hook runs as a synchronous one")
	}
	if c := h.get("if"); c != nil && c.kind == 's' && c.str != "" {
		warns = append(warns, fmt.Sprintf("%s: the if filter %q is not applied by herald; the hook runs for every call its matcher takes", where, c.str))
	}
	return s, warns, true
}

// claudeTypedEntry reads a Claude Code hook of type http ({"url",
// "headers", "allowedEnvVars", "timeout"}), prompt or agent ({"prompt",
// "model", "timeout"}). It runs as herald's hook of that type, with
// Claude's payload as the body or the $ARGUMENTS, and an http answer read
// as a Claude command hook's output. A header value may name $VAR or
// ${VAR} only for the variables allowedEnvVars lists, as in Claude Code;
// any other reference is left empty. An http hook reaches loopback and
// private addresses only with herald's "allow_private": true.
func claudeTypedEntry(h *jsonValue, s ShellSpec, typ, where, matcher string, pt Point) (ShellSpec, []string, bool) {
	var warns []string
	s.Type, s.Timeout = typ, DefaultTimeout(typ)
	str := func(key string) (string, bool) {
		v := h.get(key)
		if v == nil || v.kind == 'z' {
			return "", true
		}
		return strings.TrimSpace(v.str), v.kind == 's'
	}
	if c, _ := str("command"); c != "" {
		warns = append(warns, fmt.Sprintf("%s: command applies to command hooks only (this one is type %s); ignored", where, typ))
	}
	switch typ {
	case TypeHTTP:
		u, ok := str("url")
		if !ok || u == "" {
			return s, []string{where + " is missing a non-empty 'url' field; skipped"}, false
		}
		if err := CheckHookURL(u); err != nil {
			return s, []string{fmt.Sprintf("%s: %v; skipped", where, err)}, false
		}
		s.URL = u
		allowed := map[string]bool{}
		if a := h.get("allowedEnvVars"); a != nil && a.kind == '[' {
			for _, v := range a.arr {
				if v.kind == 's' {
					allowed[v.str] = true
				}
			}
		}
		if hs := h.get("headers"); hs != nil && hs.kind != 'z' {
			if hs.kind != '{' {
				return s, []string{where + ".headers must be an object of strings; skipped"}, false
			}
			s.Headers = map[string]string{}
			for _, m := range hs.obj {
				if m.val.kind != 's' {
					warns = append(warns, fmt.Sprintf("%s.headers.%s is not a string; ignored", where, m.key))
					continue
				}
				s.Headers[m.key] = claudeHeaderValue(m.val.str, allowed)
			}
		}
		if a := h.get("allow_private"); a != nil && a.kind == 'b' {
			s.AllowPrivate = a.str == "true"
		}
	case TypePrompt, TypeAgent:
		p, ok := str("prompt")
		if !ok || p == "" {
			return s, []string{where + " is missing a non-empty 'prompt' field; skipped"}, false
		}
		s.Prompt = p
		if m, ok := str("model"); ok {
			s.Model = m
		}
		if typ == TypeAgent {
			s.MaxIterations = DefaultMaxIterations
		}
	}
	s.FailClosed = DefaultBlockOnFailure(typ) && CanBlockOnFailure(s.Event)
	warns = append(warns, s.claudeMatcherAndTimeout(h, where, matcher, pt)...)
	return s, warns, true
}

// claudeMatcherAndTimeout applies a group's matcher and an entry's timeout
// to s. Matchers filter tool events by tool name; SessionStart by source,
// SessionEnd by reason, SubagentStop by agent type.
func (s *ShellSpec) claudeMatcherAndTimeout(h *jsonValue, where, matcher string, pt Point) (warns []string) {
	if matcher != "" && matcher != "*" && (pt.Tool || claudeValueMatched(s.Event)) {
		if w := s.setClaudeMatcher(matcher); w != "" {
			warns = append(warns, where+": "+w)
		}
	}
	if t := h.get("timeout"); t != nil && t.kind != 'z' {
		var w string
		s.Timeout, w = shellTimeout(where, t.str, t.kind == 'n')
		if w != "" {
			warns = append(warns, w)
		}
	}
	return warns
}

// claudeEnvRef is a header's $VAR or ${VAR}, as Claude Code reads them.
var claudeEnvRef = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)

// claudeHeaderValue rewrites a Claude header value into herald's form:
// each reference to an allowed variable becomes ${VAR} (filled at each
// call), any other reference becomes empty.
func claudeHeaderValue(v string, allowed map[string]bool) string {
	return claudeEnvRef.ReplaceAllStringFunc(v, func(m string) string {
		sub := claudeEnvRef.FindStringSubmatch(m)
		name := sub[1] + sub[2]
		if allowed[name] {
			return "${" + name + "}"
		}
		return ""
	})
}

// jsonValue is a decoded JSON value that remembers its line: objects
// keep their keys in order. kind is '{', '[', 's' (string), 'n'
// (number), 'b' (true/false) or 'z' (null); str holds a scalar's text.
type jsonValue struct {
	kind byte
	line int
	str  string
	obj  []jsonMember
	arr  []*jsonValue
}

type jsonMember struct {
	key string
	val *jsonValue
}

// get returns the last member named key (JSON's last one wins).
func (v *jsonValue) get(key string) *jsonValue {
	var out *jsonValue
	for _, m := range v.obj {
		if m.key == key {
			out = m.val
		}
	}
	return out
}

// parseJSONTree decodes one JSON document; a syntax error names the line
// and column.
func parseJSONTree(b []byte) (*jsonValue, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	starts := []int{0} // where each line begins
	for i, c := range b {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	lineAt := func(off int64) (line, col int) {
		o := int(min(max(off, 0), int64(len(b))))
		line, _ = slices.BinarySearch(starts, o+1) // lines starting at or before o
		return line, o - starts[line-1] + 1
	}
	var walk func() (*jsonValue, error)
	walk = func() (*jsonValue, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		line, _ := lineAt(dec.InputOffset() - 1)
		v := &jsonValue{line: line}
		switch t := tok.(type) {
		case json.Delim:
			v.kind = byte(t)
			for dec.More() {
				if t == '{' {
					k, err := dec.Token()
					if err != nil {
						return nil, err
					}
					val, err := walk()
					if err != nil {
						return nil, err
					}
					v.obj = append(v.obj, jsonMember{key: k.(string), val: val})
				} else {
					val, err := walk()
					if err != nil {
						return nil, err
					}
					v.arr = append(v.arr, val)
				}
			}
			if _, err := dec.Token(); err != nil { // the closing delimiter
				return nil, err
			}
		case string:
			v.kind, v.str = 's', t
		case json.Number:
			v.kind, v.str = 'n', t.String()
		case bool:
			v.kind, v.str = 'b', fmt.Sprint(t)
		case nil:
			v.kind = 'z'
		}
		return v, nil
	}
	v, err := walk()
	if err == nil {
		end := dec.InputOffset()
		if _, extra := dec.Token(); extra != io.EOF {
			rest := b[end:]
			end += int64(len(rest) - len(bytes.TrimLeft(rest, " \t\r\n")))
			line, col := lineAt(end)
			return nil, fmt.Errorf("line %d, column %d: invalid JSON: data after the JSON document", line, col)
		}
	}
	if err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			line, col := lineAt(se.Offset)
			return nil, fmt.Errorf("line %d, column %d: invalid JSON: %v", line, col, se)
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			line, _ := lineAt(int64(len(b)))
			return nil, fmt.Errorf("line %d: invalid JSON: unexpected end of the file", line)
		}
		line, col := lineAt(dec.InputOffset())
		return nil, fmt.Errorf("line %d, column %d: invalid JSON: %v", line, col, err)
	}
	return v, nil
}

// DedupClaude runs identical claude-dialect hooks once, as Claude Code
// does: a hook whose event and command (variables filled in) repeat an
// earlier one is folded into it, which then also takes the calls the
// other's matcher takes. notes say which were folded.
func DedupClaude(specs []ShellSpec) (out []ShellSpec, notes []string) {
	first := map[string]int{}
	for _, s := range specs {
		if s.Dialect != "claude" {
			out = append(out, s)
			continue
		}
		key := s.Event + "\x00" + s.ClaudeEvent + "\x00" + s.Command
		i, seen := first[key]
		if !seen {
			first[key] = len(out)
			out = append(out, s)
			continue
		}
		kept := &out[i]
		if kept.Matcher != "" && kept.Matcher != "*" {
			dup := s
			kept.mergedMatchers = append(kept.mergedMatchers, &dup)
		}
		kept.Timeout = max(kept.Timeout, s.Timeout)
		notes = append(notes, fmt.Sprintf("%s runs once: it repeats %s (%s)", s.Origin(), kept.Origin(), s.Command))
	}
	return out, notes
}

// Origin names where a spec was written: "config.yaml: hooks.pre_tool_call[0]"
// or "<file>: hooks.PreToolUse[0].hooks[1]".
func (s *ShellSpec) Origin() string {
	file := s.File
	if file == "" {
		file = "config.yaml"
	}
	return file + ": " + s.Where
}

// At is where the entry is written: file:line: hooks.<event>[i].
func (s *ShellSpec) At() string {
	file := s.File
	if file == "" {
		file = "config.yaml"
	}
	return fmt.Sprintf("%s:%d: %s", file, s.Line, s.Where)
}
