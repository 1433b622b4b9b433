package hooks

// verdict.go: reading a prompt or agent hook's answer, and OpenHarness'
// fnmatch matchers.

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// fenced finds ```json … ``` (or bare ```) blocks.
var fenced = regexp.MustCompile("(?s)```[A-Za-z]*[ \t]*\r?\n?(.*?)```")

// maxVerdictObjects bounds how many '{' ParseVerdict tries per candidate,
// so a long answer of garbage costs little.
const maxVerdictObjects = 64

// ParseVerdict reads a model's {"ok": true} or {"ok": false, "reason":
// "…"}: the object may sit in a ```json fenced block or among prose; the
// first object with a boolean "ok" wins. An answer with none is an error.
func ParseVerdict(answer string) (ok bool, reason string, err error) {
	var cands []string
	for _, m := range fenced.FindAllStringSubmatch(answer, 8) {
		cands = append(cands, m[1])
	}
	cands = append(cands, answer)
	for _, c := range cands {
		tries := 0
		for i := strings.IndexByte(c, '{'); i >= 0 && tries < maxVerdictObjects; tries++ {
			var v struct {
				OK     *bool           `json:"ok"`
				Reason json.RawMessage `json:"reason"`
			}
			if json.NewDecoder(strings.NewReader(c[i:])).Decode(&v) == nil && v.OK != nil {
				var r string
				if json.Unmarshal(v.Reason, &r) != nil && len(v.Reason) > 0 {
					r = string(v.Reason)
				}
				return *v.OK, r, nil
			}
			next := strings.IndexByte(c[i+1:], '{')
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
	snippet := strings.TrimSpace(answer)
	if r := []rune(snippet); len(r) > 200 {
		snippet = string(r[:200]) + "…"
	}
	if snippet == "" {
		return false, "", errors.New(`the model's answer is empty (expected {"ok": true} or {"ok": false, "reason": "…"})`)
	}
	return false, "", fmt.Errorf(`the model's answer has no {"ok": …} verdict: %q`, snippet)
}

// Fnmatch compiles an OpenHarness matcher (Python's fnmatch: * any run of
// characters, ? one, [seq] and [!seq] sets) into an anchored expression.
func Fnmatch(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			j := i + 1
			if j < len(rs) && rs[j] == '!' {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				b.WriteString(`\[`) // no closing ]: a literal [, as in Python
				continue
			}
			set := string(rs[i+1 : j])
			i = j
			neg := strings.HasPrefix(set, "!")
			if neg {
				set = set[1:]
			}
			set = strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(set)
			if strings.HasPrefix(set, "^") {
				set = `\` + set
			}
			if neg {
				b.WriteString(`[^` + set + `]`)
			} else {
				b.WriteString(`[` + set + `]`)
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`$`)
	return regexp.Compile(b.String())
}

// globSubject is what an OpenHarness matcher is compared with, as
// OpenHarness does: the tool's name on tool events, the user's message on
// pre_llm_call, the event's name elsewhere.
func globSubject(event string, payload any) string {
	if tn, ok := payload.(ToolNamer); ok {
		return tn.HookToolName()
	}
	if p, ok := payload.(*PreLLMCall); ok {
		return p.UserMessage
	}
	return event
}

// globMatches compares an OpenHarness-form matcher with subject.
func (s *ShellSpec) globMatches(subject string) bool {
	if s.matchRe != nil {
		return s.matchRe.MatchString(subject)
	}
	return subject == s.Matcher
}

// globAccept is the payload filter of an OpenHarness-form matcher (a
// filter that, like every Accept, also keeps out the events herald emits
// for Claude Code's dialect only).
func globAccept(event string, match func(string) bool) func(any) bool {
	return func(payload any) bool {
		if p, ok := payload.(*SessionStarted); ok && p.ClaudeOnly {
			return false
		}
		return match(globSubject(event, payload))
	}
}
