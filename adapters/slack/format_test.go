package slack

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

func TestMrkdwnGolden(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("testdata", "mrkdwn.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "mrkdwn.golden", toMrkdwn(string(md)))
}

func TestMrkdwnInline(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"**b**", "*b*"},
		{"*i*", "_i_"},
		{"_i_", "_i_"},
		{"a_b_c", "a_b_c"},
		{"** not bold **", "** not bold **"},
		{"`x<y`", "`x&lt;y`"},
		{"[t](u)", "<u|t>"},
		{"[t](u v)", "[t](u v)"},
		{"<@U1> & <!here>", "&lt;@U1&gt; &amp; &lt;!here&gt;"},
		{"~~s~~", "~s~"},
		{"# h", "*h*"},
		{"#nothead", "#nothead"},
		{"", ""},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			if got := toMrkdwn(tc.in); got != tc.want {
				t.Errorf("toMrkdwn(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
