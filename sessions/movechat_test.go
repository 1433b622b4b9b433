package sessions

import (
	"testing"
)

func TestRekeyChat(t *testing.T) {
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{
		{"agent:main:telegram:group:-5", "agent:main:telegram:group:-9", true},
		{"agent:main:telegram:group:-5:7:42", "agent:main:telegram:group:-9:7:42", true},
		{"agent:main:telegram:dm:-5", "agent:main:telegram:dm:-9", true},
		{"agent:main:telegram:group:-55", "agent:main:telegram:group:-55", false},
		{"agent:main:telegram:group", "agent:main:telegram:group", false},
	} {
		got, ok := RekeyChat(tc.key, "-5", "-9")
		if got != tc.want || ok != tc.ok {
			t.Errorf("RekeyChat(%s) = %s, %v; want %s, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
}
