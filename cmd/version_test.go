package cmd

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/heraldgw/herald", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}}}
	cases := []struct {
		name, ldflags string
		bi            *debug.BuildInfo
		ok            bool
		want          buildInfo
	}{
		{"go install @v1.2.3", devVersion, bi, true, buildInfo{Version: "v1.2.3", Module: "github.com/heraldgw/herald", ModuleVersion: "v1.2.3",
			Commit: "abc123", CommitTime: "2026-01-02T03:04:05Z", Modified: true, GoVersion: "go1.26.0"}},
		{"-ldflags version wins", "2.0.0", bi, true, buildInfo{Version: "2.0.0", Module: "github.com/heraldgw/herald", ModuleVersion: "v1.2.3",
			Commit: "abc123", CommitTime: "2026-01-02T03:04:05Z", Modified: true, GoVersion: "go1.26.0"}},
		{"built in the repository", devVersion, &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "m", Version: "(devel)"}}, true,
			buildInfo{Version: devVersion, Module: "m", ModuleVersion: "(devel)", GoVersion: "go1.26.0"}},
		{"no build info", devVersion, nil, false, buildInfo{Version: devVersion}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := readBuildInfo(c.ldflags, c.bi, c.ok); got != c.want {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out, getenv: func(string) string { return "" }}
	if err := e.version(nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "herald "+Version+"\n") || !strings.Contains(out.String(), "go:      "+runtime.Version()) {
		t.Fatalf("version:\n%s", out.String())
	}
	out.Reset()
	if err := e.version([]string{"--json"}); err != nil {
		t.Fatal(err)
	}
	var got buildInfo
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Version != Version || got.GoVersion != runtime.Version() {
		t.Fatalf("version --json: %v %q", err, out.String())
	}
}
