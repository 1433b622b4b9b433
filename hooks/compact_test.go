package hooks

import "testing"

// post_compact answers in Hermes', OpenHarness' and Claude Code's shapes
// all give the compaction notes as context.
func TestParseAnswerPostCompact(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{`{"context":"keep: never touch /etc"}`, "keep: never touch /etc"},
		{`{"hookSpecificOutput":{"hookEventName":"PostCompact","additionalContext":"the deploy is frozen"}}`, "the deploy is frozen"},
		{`{}`, ""},
		{``, ""},
	} {
		v, err := ParseAnswer(PostCompactHook, []byte(tc.out))
		if err != nil {
			t.Fatalf("%s: %v", tc.out, err)
		}
		got := ""
		if fb, ok := v.(*Feedback); ok {
			got = fb.Context
		} else if v != nil {
			t.Fatalf("%s: answer %T", tc.out, v)
		}
		if got != tc.want {
			t.Errorf("%s: context %q, want %q", tc.out, got, tc.want)
		}
	}
	for _, alias := range []string{"PreCompact", "PostCompact", "pre_compact", "post_compact"} {
		if c := CanonicalEvent(alias); !Known(c) {
			t.Errorf("%s → %s is not in the catalogue", alias, c)
		}
	}
}
