package hooks

import (
	"encoding/json"
	"strings"
	"testing"
)

// Any bytes as a Claude hooks file: no panic; invalid JSON is an error
// and valid JSON parses; every spec loaded is a runnable claude-dialect
// hook of a known event with a clamped timeout.
func FuzzClaudeHooksFile(f *testing.F) {
	f.Add([]byte(pluginHooksJSON))
	f.Add([]byte(`{"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "x", "timeout": 0}]}]}}`))
	f.Add([]byte(`{"hooks": {"Stop": [{"hooks": [{"command": "y", "timeout": "5"}]}], "SessionStart": [{"matcher": "compact", "hooks": [{"type":"command","command":"z","async":true,"if":"Bash(git *)"}]}]}}`))
	f.Add([]byte(`{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "a"}]}]}} `))
	f.Add([]byte("{\"hooks\": {\n\"PreToolUse\": [,]}}"))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		specs, _, err := loadClaudeJSON(ClaudeFile{Path: "f.json", Name: "f.json"}, b)
		_, perr := parseJSONTree(b)
		if json.Valid(b) != (perr == nil) {
			t.Fatalf("json.Valid = %v, parse error %v", json.Valid(b), perr)
		}
		if !json.Valid(b) && err == nil {
			t.Fatal("invalid JSON loaded")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "f.json") {
			t.Fatalf("error does not name the file: %v", err)
		}
		for _, s := range specs {
			missing := map[string]bool{TypeCommand: s.Command == "", TypeHTTP: s.URL == "", TypePrompt: s.Prompt == "", TypeAgent: s.Prompt == ""}
			if s.Dialect != "claude" || !Known(s.Event) || missing[s.Kind()] || s.Timeout < 1e9 || s.Timeout > MaxShellTimeout || !strings.HasPrefix(s.Where, "hooks.") || s.File != "f.json" {
				t.Fatalf("spec %+v", s)
			}
			s.Matches("terminal")
		}
	})
}
