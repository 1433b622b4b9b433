package telegram

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// Each raw update in testdata/updates translates to the herald.Message in
// its .golden file (or "ignored").
func TestTranslateGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/updates/*.json")
	if len(files) == 0 {
		t.Fatal("no updates in testdata")
	}
	bot := botIdentity{ID: 1000, UserName: "herald_test_bot"}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			id, m, ok, err := translate(raw, bot)
			if err != nil {
				t.Fatal(err)
			}
			out := []byte("ignored\n")
			if ok {
				b, _ := json.MarshalIndent(struct {
					UpdateID int `json:"update_id"`
					Message  any `json:"message"`
				}{id, m}, "", "  ")
				out = append(b, '\n')
			}
			golden(t, strings.TrimSuffix(f, ".json")+".golden", out)
		})
	}
}

func TestTranslateMalformed(t *testing.T) {
	for _, raw := range []string{`not json`, `{"update_id":"x"}`, `{"update_id":1,"message":{"chat":"nope"}}`} {
		if _, _, _, err := translate([]byte(raw), botIdentity{}); err == nil {
			t.Errorf("%s: no error", raw)
		}
	}
}

func TestFormatGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/format/*.md")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			md, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, strings.TrimSuffix(f, ".md")+".html", []byte(toHTML(string(md))))
		})
	}
}

func TestFormatInline(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"**a**", "<b>a</b>"},
		{"a ** b", "a ** b"},
		{"**a *b* c**", "<b>a <i>b</i> c</b>"},
		{"x_y_z", "x_y_z"},
		{"`a*b*`", "<code>a*b*</code>"},
		{"[t](javascript:alert(1))", "[t](javascript:alert(1))"},
		{"<script>", "&lt;script&gt;"},
		{"### h", "<b>h</b>"},
		{"#hashtag", "#hashtag"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := toHTML(tc.in); got != tc.want {
				t.Errorf("toHTML(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
