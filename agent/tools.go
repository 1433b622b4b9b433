package agent

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
)

// Tool is one tool the model may call.
type Tool interface {
	Name() string
	Description() string
	// Schema is the JSON schema of the arguments object.
	Schema() json.RawMessage
	// Run executes the tool. Its result string goes back to the model
	// (JSON by convention: {"error": …} for failures).
	Run(ctx context.Context, call *Call) (string, error)
}

// Call is one tool invocation with its context.
type Call struct {
	ID        string
	Args      map[string]any
	SessionID string
	Turn      *Turn
}

// Tools is a registry of tools; safe for concurrent use.
type Tools struct {
	mu    sync.RWMutex
	tools map[string]Tool
}

// NewTools returns a registry holding tools.
func NewTools(tools ...Tool) *Tools {
	t := &Tools{tools: map[string]Tool{}}
	for _, x := range tools {
		t.Add(x)
	}
	return t
}

// Add registers (or replaces) a tool.
func (t *Tools) Add(tool Tool) {
	t.mu.Lock()
	t.tools[tool.Name()] = tool
	t.mu.Unlock()
}

// Get returns a tool by name.
func (t *Tools) Get(name string) (Tool, bool) {
	if t == nil {
		return nil, false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	x, ok := t.tools[name]
	return x, ok
}

// List returns the tools, by name, without those in disabled.
func (t *Tools) List(disabled ...string) []Tool {
	if t == nil {
		return nil
	}
	off := map[string]bool{}
	for _, d := range disabled {
		off[d] = true
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]Tool, 0, len(t.tools))
	for n, x := range t.tools {
		if !off[n] {
			out = append(out, x)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}
