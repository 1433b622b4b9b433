package hooks

import (
	"sort"
	"strings"

	"github.com/heraldgw/herald"
)

// Kind says how a hook point is delivered.
type Kind int

const (
	// Observer points are fire and forget: delivered off the hot path,
	// in order per subscriber, their results ignored.
	Observer Kind = iota
	// Interceptor points are awaited with a timeout and their results
	// combined into a decision.
	Interceptor
)

func (k Kind) String() string {
	if k == Interceptor {
		return "interceptor"
	}
	return "observer"
}

// Point is one entry of the catalogue.
type Point struct {
	Name string
	Kind Kind
	// Tool is set for points whose payload names a tool (matchers apply).
	Tool bool
	// Gateway is set for Hermes' gateway events (the "base:name" family);
	// the rest are Hermes' plugin hooks.
	Gateway bool
}

// The catalogue: every hook point herald emits, one name each.
const (
	GatewayStartup = "gateway:startup"
	SessionStartEv = "session:start"
	SessionEndEv   = "session:end"
	SessionResetEv = "session:reset"
	AgentStartEv   = "agent:start"
	AgentStepEv    = "agent:step"
	AgentEndEv     = "agent:end"
	// CommandPrefix + canonical name, e.g. "command:new".
	CommandPrefix = "command:"

	PreToolCallHook             = "pre_tool_call"
	PostToolCallHook            = "post_tool_call"
	PreLLMCallHook              = "pre_llm_call"
	PostLLMCallHook             = "post_llm_call"
	PreAPIRequestHook           = "pre_api_request"
	PostAPIRequestHook          = "post_api_request"
	OnSessionStartHook          = "on_session_start"
	OnSessionEndHook            = "on_session_end"
	OnSessionFinalizeHook       = "on_session_finalize"
	OnSessionResetHook          = "on_session_reset"
	SubagentStopHook            = "subagent_stop"
	PreGatewayDispatchHook      = "pre_gateway_dispatch"
	PreApprovalRequestHook      = "pre_approval_request"
	PostApprovalResponseHook    = "post_approval_response"
	TransformToolResultHook     = "transform_tool_result"
	TransformTerminalOutputHook = "transform_terminal_output"
	TransformLLMOutputHook      = "transform_llm_output"
	// The context window's trims (OpenHarness' names; Claude Code's
	// PreCompact and PostCompact).
	PreCompactHook  = "pre_compact"
	PostCompactHook = "post_compact"
)

var catalogue = []Point{
	{Name: GatewayStartup, Kind: Observer, Gateway: true},
	{Name: SessionStartEv, Kind: Observer, Gateway: true},
	{Name: SessionEndEv, Kind: Observer, Gateway: true},
	{Name: SessionResetEv, Kind: Observer, Gateway: true},
	{Name: AgentStartEv, Kind: Observer, Gateway: true},
	{Name: AgentStepEv, Kind: Observer, Gateway: true},
	{Name: AgentEndEv, Kind: Observer, Gateway: true},
	{Name: CommandPrefix + "*", Kind: Interceptor, Gateway: true},

	{Name: PreToolCallHook, Kind: Interceptor, Tool: true},
	{Name: PostToolCallHook, Kind: Observer, Tool: true},
	{Name: PreLLMCallHook, Kind: Interceptor},
	{Name: PostLLMCallHook, Kind: Observer},
	{Name: PreAPIRequestHook, Kind: Observer},
	{Name: PostAPIRequestHook, Kind: Observer},
	{Name: OnSessionStartHook, Kind: Observer},
	{Name: OnSessionEndHook, Kind: Observer},
	{Name: OnSessionFinalizeHook, Kind: Observer},
	{Name: OnSessionResetHook, Kind: Observer},
	{Name: SubagentStopHook, Kind: Observer},
	{Name: PreGatewayDispatchHook, Kind: Interceptor},
	{Name: PreApprovalRequestHook, Kind: Observer},
	{Name: PostApprovalResponseHook, Kind: Observer},
	{Name: TransformToolResultHook, Kind: Interceptor, Tool: true},
	{Name: TransformTerminalOutputHook, Kind: Interceptor},
	{Name: TransformLLMOutputHook, Kind: Interceptor},
	// pre_compact only informs (a trim keeps the request within the
	// model's window, so nothing may cancel it); post_compact is awaited:
	// its answers' context is kept as compaction notes.
	{Name: PreCompactHook, Kind: Observer},
	{Name: PostCompactHook, Kind: Interceptor},
}

var byName = func() map[string]Point {
	m := make(map[string]Point, len(catalogue))
	for _, p := range catalogue {
		m[p.Name] = p
	}
	return m
}()

// Catalogue returns every hook point, gateway events first.
func Catalogue() []Point { return append([]Point(nil), catalogue...) }

// Names returns every catalogue name, sorted.
func Names() []string {
	out := make([]string, 0, len(catalogue))
	for _, p := range catalogue {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// Lookup finds the point an event name belongs to: "command:new" is the
// command:* point. ok is false for names not in the catalogue.
func Lookup(name string) (Point, bool) {
	if p, ok := byName[name]; ok {
		return p, true
	}
	if strings.HasPrefix(name, CommandPrefix) && len(name) > len(CommandPrefix) {
		return byName[CommandPrefix+"*"], true
	}
	return Point{}, false
}

// Known reports whether a subscription pattern names a catalogue point
// (including "base:*" wildcards of gateway events, and "*").
func Known(pattern string) bool {
	if pattern == "*" {
		return true
	}
	if _, ok := Lookup(pattern); ok {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, ":*"); ok {
		for _, p := range catalogue {
			if strings.HasPrefix(p.Name, base+":") {
				return true
			}
		}
	}
	return false
}

// Suggest returns the closest catalogue name to an unknown one, or "".
func Suggest(name string) string { return herald.Closest(name, Names()) }
