package runs

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldgw/herald"
)

// FuzzHookPoint: any hook point context either is not the run's, or is
// logged (with the run's own events it makes) as valid JSON under the
// next ids; the log stays gapless and the run still ends.
func FuzzHookPoint(f *testing.F) {
	for _, s := range []struct{ name, ctx string }{
		{"agent:start", `{"platform":"runs","chat_id":"c1","session_id":"s1"}`},
		{"pre_tool_call", `{"tool_name":"terminal","tool_call_id":"x","session_id":"s1","args":{"command":"ls"}}`},
		{"post_tool_call", `{"tool_name":"terminal","session_id":"s1","duration_ms":"12"}`},
		{"pre_approval_request", `{"command":"rm -rf /","description":"d","session_key":"k1"}`},
		{"post_approval_response", `{"command":7,"choice":"deny","session_key":"k1"}`},
		{"pre_gateway_dispatch", `{"event":{"source":{"platform":"runs","chat_id":"c1"}}}`},
		{"agent:end", `{"platform":"runs","chat_id":"c1","failed":"yes","error":null}`},
		{"session:start", `{"session_key":"k1","session_id":"s2"}`},
		{"agent:step", `[1,2]`},
		{"agent:step", `{"session_id":"s1"`},
	} {
		f.Add(s.name, s.ctx)
	}
	f.Fuzz(func(t *testing.T, name, ctx string) {
		a := New(Config{SessionKey: func(herald.Source) string { return "k1" }})
		src := herald.Source{Platform: Platform, ChatID: "c1", ChatType: herald.ChatDM, UserID: "api"}
		r := a.newRun(src, "s1")
		a.runs[r.id], a.byChat["c1"], a.bySession["s1"], a.byKey["k1"] = r, r, r, r
		a.hookPoint(HookPoint{Name: name, Context: json.RawMessage(ctx), Time: time.Now()})
		a.hookPoint(HookPoint{Name: "post_tool_call", Context: json.RawMessage(`{"session_id":"s1","tool_name":"t"}`), Time: time.Now()})
		r.finish(StatusCompleted, "")
		r.mu.Lock()
		defer r.mu.Unlock()
		evs, missed := r.log.since(0)
		if missed != 0 || len(evs) == 0 || evs[len(evs)-1].name != "run.completed" || r.log.final != evs[len(evs)-1].seq {
			t.Fatalf("log = %+v (missed %d)", evs, missed)
		}
		for i, e := range evs {
			if e.seq != int64(i+1) || !json.Valid(e.data) {
				t.Fatalf("event %d: %d %s %s", i, e.seq, e.name, e.data)
			}
		}
		if a.byChat["c1"] != nil || a.bySession["s1"] != nil {
			t.Fatal("a finished run is still active")
		}
	})
}
