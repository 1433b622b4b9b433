package hooks

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ShellSpec is one shell hook: an entry of the hooks: block of
// config.yaml, or of a Claude Code hooks file (claude_files.go).
type ShellSpec struct {
	// Event is the catalogue name (aliases already resolved).
	Event string
	// ClaudeEvent is the Claude Code event an entry of a Claude hooks file
	// was written for (PostToolUseFailure is one of post_tool_call's).
	ClaudeEvent string
	// Where names the entry in diagnostics: hooks.<event>[i], or for a
	// Claude hooks file hooks.<Event>[i].hooks[j].
	Where string
	// File is the Claude hooks file the entry came from ("" for
	// config.yaml) and Line its line there.
	File    string
	Line    int
	Matcher string
	matchRe *regexp.Regexp
	// matchNames is a claude-dialect matcher that is a name or a list.
	matchNames []string
	// mergedMatchers are the matchers of identical claude-dialect hooks
	// folded into this one (Claude Code runs identical commands once).
	mergedMatchers []*ShellSpec
	// Command is the command line. For the claude dialect it is the
	// command with ${CLAUDE_PLUGIN_ROOT} and $CLAUDE_PROJECT_DIR filled in
	// (SetProjectDir); Shell keeps it as written, for sh -c.
	Command string
	Shell   string
	// ShellProgram runs a claude-dialect command: "" is /bin/sh, "bash"
	// is bash from PATH (Claude Code's shell: bash).
	ShellProgram string
	// PluginRoot is the Claude Code plugin directory a hook came from
	// (CLAUDE_PLUGIN_ROOT); ProjectDir is the gateway's working
	// directory (CLAUDE_PROJECT_DIR), where claude-dialect hooks run.
	PluginRoot string
	ProjectDir string
	Timeout    time.Duration
	// FailClosed blocks the tool call when the hook fails (pre_tool_call
	// only).
	FailClosed bool
	// Dialect is "" (Hermes' payload) or "claude" (Claude Code's).
	Dialect string
	// Env names variables passed through although they look like secrets.
	Env []string
	// Persistent hooks are started once and answer one JSON line per
	// request; Concurrency of them serve calls side by side.
	Persistent  bool
	Concurrency int

	// TypeSpec is the entry's type (command unless type: says http,
	// prompt or agent) and that type's fields.
	TypeSpec
	// Priority orders the attachments of one event: higher first.
	Priority int
	// OpenHarness is a `type: command` entry whose command says
	// $ARGUMENTS (OpenHarness' form): it runs under /bin/sh -c with
	// $ARGUMENTS replaced by the payload JSON as one quoted word, and
	// OPENHARNESS_HOOK_EVENT and OPENHARNESS_HOOK_PAYLOAD set.
	OpenHarness bool
	// glob marks an OpenHarness-form matcher (an entry with type:):
	// fnmatch, compared with globSubject.
	glob bool

	argv     []string // the split command, once a handler is made
	extraEnv []string // per-call variables (OpenHarness form)
}

// Key is what the allowlist records for the entry (TypeSpec.ConsentKey).
func (s *ShellSpec) Key() string { return s.ConsentKey(s.Command) }

// Name names the entry in logs and listings: its command, or its type
// and URL or prompt.
func (s *ShellSpec) Name() string { return s.Label(s.Command) }

// Shell-hook timeouts, as Hermes clamps them.
const (
	DefaultShellTimeout = 60 * time.Second
	MaxShellTimeout     = 300 * time.Second
)

// reservedShellKeys are sub-keys of hooks: that are not events.
var reservedShellKeys = map[string]bool{"python": true, "output_spill": true, "outbound": true}

// Matches reports whether the spec applies to a (herald) tool name: no
// matcher matches everything; otherwise the regular expression must match
// the whole name (or, if it is not a valid expression, equal it). In the
// claude dialect the matcher is Claude Code's, compared with the tool's
// Claude name (terminal is Bash): see setClaudeMatcher. A claude-dialect
// matcher written with herald's name (terminal) still takes the tool, as
// it did before; the two sets of names never collide.
func (s *ShellSpec) Matches(tool string) bool {
	if s.glob {
		if p, _ := Lookup(s.Event); !p.Tool || s.Matcher == "" {
			return true
		}
		return s.globMatches(tool)
	}
	if s.Dialect == "claude" {
		c := ClaudeToolName(tool)
		return s.claudeMatches(c) || c != tool && s.claudeMatches(tool)
	}
	if s.Matcher == "" {
		return true
	}
	if s.matchRe != nil {
		return s.matchRe.MatchString(tool)
	}
	return tool == s.Matcher
}

// ParseShellHooks reads the hooks: block as Hermes does: bad entries are
// skipped with a warning naming hooks.<event>[i], never an error. infos
// are notes such as an alias being used.
func ParseShellHooks(n *yaml.Node) (specs []ShellSpec, warns, infos []string) {
	if n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil, nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, []string{fmt.Sprintf("config.yaml:%d: hooks must be a mapping of event names to lists of hooks; ignored", n.Line)}, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if reservedShellKeys[name] {
			continue
		}
		event := name
		if alias, ok := eventAliases[name]; ok {
			event = alias
			infos = append(infos, fmt.Sprintf("hooks.%s is an alias of %s", name, alias))
		}
		if !Known(event) || event == "*" {
			msg := fmt.Sprintf("config.yaml:%d: unknown hook event %q in hooks: config", k.Line, name)
			if s := Suggest(name); s != "" {
				msg += fmt.Sprintf(" — did you mean %q?", s)
			} else {
				names := Names()
				sort.Strings(names)
				msg += " (valid: " + strings.Join(names, ", ") + ")"
			}
			warns = append(warns, msg+"; skipped")
			continue
		}
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			continue
		}
		if v.Kind != yaml.SequenceNode {
			warns = append(warns, fmt.Sprintf("config.yaml:%d: hooks.%s must be a list of hook definitions; skipped", v.Line, name))
			continue
		}
		pt, _ := Lookup(event)
		for idx, e := range v.Content {
			where := fmt.Sprintf("hooks.%s[%d]", name, idx)
			spec, w, ok := parseShellEntry(e, event, where, pt)
			if _, claude := claudeNameSet[name]; claude {
				spec.ClaudeEvent = name // PostToolUseFailure is not PostToolUse
			}
			for _, x := range w {
				warns = append(warns, fmt.Sprintf("config.yaml:%d: %s", e.Line, x))
			}
			if ok {
				specs = append(specs, spec)
			}
		}
	}
	return specs, warns, infos
}

func parseShellEntry(e *yaml.Node, event, where string, pt Point) (ShellSpec, []string, bool) {
	var warns []string
	s := ShellSpec{Event: event, Where: where, Line: e.Line, Timeout: DefaultShellTimeout}
	if e.Kind != yaml.MappingNode {
		return s, []string{where + " is not a mapping; skipped"}, false
	}
	fields := entryFields(e)
	ts, tw, fatal := readTypeFields(fields, where)
	if fatal != nil {
		return s, []string{fatal.Msg + "; skipped"}, false
	}
	for _, w := range tw {
		warns = append(warns, w.Msg)
	}
	s.TypeSpec = ts
	kind := ts.Kind()
	s.Timeout = DefaultTimeout(kind)
	if c := fields["command"]; c != nil && c.Kind == yaml.ScalarNode {
		s.Command = strings.TrimSpace(c.Value)
	}
	if kind != TypeCommand {
		if s.Command != "" {
			warns = append(warns, fmt.Sprintf("%s.command applies to command hooks only (this one is type %s); ignored", where, kind))
			s.Command = ""
		}
	} else if s.Command == "" {
		return s, []string{where + " is missing a non-empty 'command' field; skipped"}, false
	}
	// a claude-dialect command is sh -c's to parse, as in Claude Code
	claude := fields["dialect"] != nil && strings.EqualFold(strings.TrimSpace(fields["dialect"].Value), "claude")
	// an entry that says type: is written in OpenHarness' form: its
	// matcher is fnmatch, on any event
	s.glob = fields["type"] != nil && !claude
	s.OpenHarness = s.glob && kind == TypeCommand && strings.Contains(s.Command, "$ARGUMENTS")
	if kind == TypeCommand && !s.OpenHarness {
		if _, err := SplitCommand(s.Command); err != nil && !claude {
			return s, []string{fmt.Sprintf("%s: %v; skipped", where, err)}, false
		}
	}
	if m := fields["matcher"]; m != nil {
		if m.Kind != yaml.ScalarNode {
			warns = append(warns, where+".matcher must be a string; ignored")
		} else if mv := strings.TrimSpace(m.Value); mv != "" && s.glob {
			s.Matcher = mv
			if re, err := Fnmatch(mv); err == nil {
				s.matchRe = re
			} else {
				warns = append(warns, fmt.Sprintf("%s: matcher %q is not a valid pattern (%v); it is compared literally", where, mv, err))
			}
		} else if mv != "" {
			if claude && claudeValueMatched(event) {
				// Claude Code matches SessionStart's source, SessionEnd's
				// reason and SubagentStop's agent type
				if w := s.setClaudeMatcher(mv); w != "" {
					warns = append(warns, where+": "+w)
				}
			} else if !pt.Tool {
				warns = append(warns, fmt.Sprintf("%s: matcher=%q will be ignored at runtime (matchers apply to tool events only)", where, mv))
			} else if claude {
				if w := s.setClaudeMatcher(mv); w != "" {
					warns = append(warns, where+": "+w)
				}
			} else {
				s.Matcher = mv
				if re, err := regexp.Compile(`^(?:` + mv + `)$`); err == nil {
					s.matchRe = re
				} else {
					warns = append(warns, fmt.Sprintf("%s: matcher %q is not a valid regular expression (%v); it is compared literally", where, mv, err))
				}
			}
		}
	}
	for _, key := range []string{"timeout", "timeout_seconds"} {
		if t := fields[key]; t != nil {
			var w string
			s.Timeout, w = shellTimeout(where+"."+key, t.Value, t.Kind == yaml.ScalarNode)
			if w != "" {
				warns = append(warns, w)
			}
			break
		}
	}
	on, set, _ := readBlockOnFailure(fields)
	if !set {
		on = DefaultBlockOnFailure(kind)
	}
	if !CanBlockOnFailure(event) {
		if set && on {
			key := "block_on_failure"
			if fields[key] == nil {
				key = "fail_closed"
			}
			warns = append(warns, fmt.Sprintf("%s.%s only applies to pre_tool_call and pre_llm_call (elsewhere a failure is only logged); ignored", where, key))
		}
		on = false
	}
	s.FailClosed = on
	if p, prob := readPriority(fields, where); prob != nil {
		warns = append(warns, prob.Msg+"; using 0")
	} else {
		s.Priority = p
	}
	if d := fields["dialect"]; d != nil {
		switch strings.ToLower(strings.TrimSpace(d.Value)) {
		case "", "hermes":
		case "claude":
			s.Dialect = "claude"
		default:
			warns = append(warns, fmt.Sprintf("%s.dialect %q is not hermes or claude; using hermes", where, d.Value))
		}
	}
	if env := fields["env"]; env != nil {
		if env.Kind != yaml.SequenceNode {
			warns = append(warns, where+".env must be a list of variable names; ignored")
		} else {
			for _, x := range env.Content {
				if x.Value != "" {
					s.Env = append(s.Env, x.Value)
				}
			}
		}
	}
	if p := fields["persistent"]; p != nil {
		s.Persistent = Truthy(p.Tag, p.Value)
		if s.Persistent && (kind != TypeCommand || s.OpenHarness) {
			warns = append(warns, where+".persistent applies to command hooks without $ARGUMENTS only; ignored")
			s.Persistent = false
		}
	}
	if c := fields["concurrency"]; c != nil {
		n, err := strconv.Atoi(strings.TrimSpace(c.Value))
		switch {
		case err != nil || n < 1:
			warns = append(warns, fmt.Sprintf("%s.concurrency %q is not a positive whole number; using 1", where, c.Value))
		case !s.Persistent:
			warns = append(warns, where+".concurrency applies to persistent hooks only; ignored")
		case n > 64:
			warns = append(warns, fmt.Sprintf("%s.concurrency %d is over the limit; clamping to 64", where, n))
			s.Concurrency = 64
		default:
			s.Concurrency = n
		}
	}
	return s, warns, true
}

// shellTimeout reads an entry's timeout in whole seconds, as Hermes
// clamps it: not a number or not positive is 60, over 300 is 300, each
// with a warning naming where (the field: hooks.x[0].timeout).
func shellTimeout(where, value string, scalar bool) (time.Duration, string) {
	if !strings.HasSuffix(where, ".timeout") && !strings.HasSuffix(where, ".timeout_seconds") {
		where += ".timeout"
	}
	secs, err := strconv.Atoi(strings.TrimSpace(value))
	switch {
	case err != nil || !scalar:
		return DefaultShellTimeout, fmt.Sprintf("%s %q is not a whole number of seconds; using 60", where, value)
	case secs < 1:
		return DefaultShellTimeout, fmt.Sprintf("%s %d is not positive; using 60", where, secs)
	case time.Duration(secs)*time.Second > MaxShellTimeout:
		return MaxShellTimeout, fmt.Sprintf("%s %d is over the limit; clamping to 300", where, secs)
	}
	return time.Duration(secs) * time.Second, ""
}
