package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// platforms.<name>.approvers: user ids as strings or YAML numbers (a
// Telegram id), on every platform.
func TestApprovers(t *testing.T) {
	cfg, warns, err := Parse([]byte(`
platforms:
  telegram:
    approvers: [123456789, "-42"]
  discord:
    approvers: "1491973769726791812, 22"
  slack:
    approvers: [U0123ABCD]
  local:
    approvers: [ops]
`))
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse = %v, %v", warns, err)
	}
	p := cfg.Platforms
	for name, tc := range map[string]struct{ got, want []string }{
		"telegram": {p.Telegram.Approvers, []string{"123456789", "-42"}},
		"discord":  {p.Discord.Approvers, []string{"1491973769726791812", "22"}},
		"slack":    {p.Slack.Approvers, []string{"U0123ABCD"}},
		"local":    {p.Local.Approvers, []string{"ops"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s approvers = %q, want %q", name, tc.got, tc.want)
		}
	}
	if d := Defaults(); len(d.Platforms.Telegram.Approvers) != 0 {
		t.Errorf("default approvers %q", d.Platforms.Telegram.Approvers)
	}
}

func TestApproversBadInput(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		line int
		msg  string
	}{
		{"platforms:\n  telegram:\n    approvers:\n      - 1\n      - {id: 2}\n", 5, "expected an id"},
		{"platforms:\n  slack:\n    approvers: {a: 1}\n", 3, "expected an id or a list of ids"},
	} {
		_, _, err := Parse([]byte(tc.yaml))
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != tc.line || !strings.Contains(ce.Msg, tc.msg) || !strings.Contains(err.Error(), "config.yaml") {
			t.Errorf("%q: err = %v; want config.yaml:%d: …%s…", tc.yaml, err, tc.line, tc.msg)
		}
	}
}
