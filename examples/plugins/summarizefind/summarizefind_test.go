package summarizefind_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/summarizefind"
	"github.com/heraldgw/herald/hooks"
)

func TestSummarisesHugeFind(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 1500; i++ {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-with-a-rather-long-name-%05d.txt", i)), nil, 0o600)
	}
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{summarizefind.Plugin}})
	r := g.Say(t, "f", "run: find "+dir+" -type f")
	if !strings.Contains(r.Text(), "[summary: 1500 paths total, showing first 40]") {
		t.Fatalf("reply = %.400q", r.Text())
	}
	if n := strings.Count(r.Text(), "file-with-a-rather-long-name"); n != 40 {
		t.Fatalf("reply lists %d paths, want 40", n)
	}
	// small output passes through untouched
	r = g.Say(t, "f", "run: find "+dir+" -name file-with-a-rather-long-name-00007.txt")
	if strings.Contains(r.Text(), "[summary:") || !strings.Contains(r.Text(), "00007") {
		t.Fatalf("small find: %q", r.Text())
	}
}
