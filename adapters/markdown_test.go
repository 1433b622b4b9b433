package adapters

import (
	"strings"
	"testing"
)

func TestCodeFence(t *testing.T) {
	lines := strings.Split("text\n```go\nx := 1\n```\n```\nunclosed", "\n")
	if lang, end, ok := CodeFence(lines, 1); !ok || lang != "go" || end != 3 {
		t.Fatalf("closed fence: %q %d %v", lang, end, ok)
	}
	if _, _, ok := CodeFence(lines, 0); ok {
		t.Fatal("plain text is not a fence")
	}
	if _, _, ok := CodeFence(lines, 4); ok {
		t.Fatal("an unclosed fence is text")
	}
}
