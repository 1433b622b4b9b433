package hooks

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzClaudePayload: whatever a tool returns and whatever arguments the
// model gave, a Claude PostToolUse stdin is a JSON object whose
// tool_response is an object, and whose file_path (a file tool's) is
// absolute.
func FuzzClaudePayload(f *testing.F) {
	f.Add("terminal", `{"command":"ls"}`, `{"output":"a\n","exit_code":0,"error":null}`, "")
	f.Add("read_file", `{"path":"a/b.txt"}`, `{"content":"x","from_line":1,"to_line":1,"total_lines":1,"path":"/w/a/b.txt"}`, "")
	f.Add("write_file", `{"path":"~/x"}`, `not json`, "")
	f.Add("patch", `{"path":""}`, `{"error":"boom"}`, "boom")
	f.Add("custom", `null`, `[1,2]`, "")
	f.Fuzz(func(t *testing.T, tool, args, result, failure string) {
		var a map[string]any
		json.Unmarshal([]byte(args), &a)
		b, err := ClaudePayload(PostToolCallHook, &ToolResult{ToolName: tool, Args: a, Result: result, Failure: failure, Claude: Claude{Cwd: "/w"}})
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("not a JSON object: %s", b)
		}
		if failure == "" {
			if _, ok := out["tool_response"].(map[string]any); !ok {
				t.Fatalf("tool_response is not an object: %s", b)
			}
		} else if out["hook_event_name"] != "PostToolUseFailure" {
			t.Fatalf("a failure is %v", out["hook_event_name"])
		}
		in, _ := out["tool_input"].(map[string]any)
		if fp, ok := in["file_path"].(string); ok && fp != "" && isFileTool(tool) && !filepath.IsAbs(fp) && !strings.HasPrefix(fp, "~") {
			t.Fatalf("file_path %q is not absolute", fp)
		}
	})
}
