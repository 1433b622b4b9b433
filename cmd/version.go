package cmd

// version.go is `herald version`: the version set at build time, else the
// module's, with the commit and Go version the binary was built from.

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
)

// Version is herald's version, set at build time with
// -ldflags "-X github.com/heraldgw/herald/cmd.Version=…"; when it is left
// at devVersion, the module version `go install …@vX` recorded is used.
var Version = devVersion

const devVersion = "0.1.0-dev"

func init() {
	registerCommand(command{name: "version", synopsis: "version [--json]", summary: "print the version, commit and Go version",
		run: func(ctx context.Context, e *env, a []string) error { return e.version(a) }})
}

// buildInfo is what `herald version` reports.
type buildInfo struct {
	Version string `json:"version"`
	Module  string `json:"module,omitempty"`
	// ModuleVersion is the module's version as the go command recorded
	// it: "(devel)" for a build inside the repository.
	ModuleVersion string `json:"module_version,omitempty"`
	Commit        string `json:"commit,omitempty"`
	CommitTime    string `json:"commit_time,omitempty"`
	// Modified is set when the work tree had uncommitted changes.
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
}

// readBuildInfo combines Version with what the binary says of itself.
func readBuildInfo(version string, bi *debug.BuildInfo, ok bool) buildInfo {
	out := buildInfo{Version: version}
	if !ok {
		return out
	}
	out.Module, out.ModuleVersion, out.GoVersion = bi.Main.Path, bi.Main.Version, bi.GoVersion
	if version == devVersion && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		out.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			out.Commit = s.Value
		case "vcs.time":
			out.CommitTime = s.Value
		case "vcs.modified":
			out.Modified = s.Value == "true"
		}
	}
	return out
}

func (e *env) version(args []string) error {
	fs := e.flags("version")
	asJSON := fs.Bool("json", false, "print one JSON document")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	bi, ok := debug.ReadBuildInfo()
	info := readBuildInfo(Version, bi, ok)
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	fmt.Fprintf(e.stdout, "herald %s\n", info.Version)
	if info.Module != "" {
		fmt.Fprintf(e.stdout, "  module:  %s %s\n", info.Module, info.ModuleVersion)
	}
	if info.Commit != "" {
		commit := info.Commit
		if info.CommitTime != "" {
			commit += " (" + info.CommitTime + ")"
		}
		if info.Modified {
			commit += ", with uncommitted changes"
		}
		fmt.Fprintf(e.stdout, "  commit:  %s\n", commit)
	}
	if info.GoVersion != "" {
		fmt.Fprintf(e.stdout, "  go:      %s\n", info.GoVersion)
	}
	return nil
}
