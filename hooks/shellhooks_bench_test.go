package hooks

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Shell-hook overhead, side by side in one run (scripts/bench-hooks
// prints them as ratios): a bare spawn of a script versus the same script
// as a pre_tool_call shell hook through the registry, and four 100 ms
// hooks on one event versus one.

func benchScript(b *testing.B, body string) string {
	p := filepath.Join(b.TempDir(), "h.sh")
	os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755)
	return p
}

// BenchmarkShellBareSpawn is the floor: the script spawned with the same
// payload on stdin and its output captured, as any hook protocol needs,
// with nothing else around it.
func BenchmarkShellBareSpawn(b *testing.B) {
	p := benchScript(b, "cat >/dev/null; echo '{}'\n")
	in, _ := ShellPayload(PreToolCallHook, &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": "ls"}, SessionID: "s"})
	for b.Loop() {
		var out, errb bytes.Buffer
		c := exec.Command(p)
		c.Stdin, c.Stdout, c.Stderr = bytes.NewReader(in), &out, &errb
		if err := c.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func shellRegistry(b *testing.B, n int, body string) *Registry {
	reg := NewRegistry(nil)
	b.Cleanup(func() { reg.Close(context.Background()) })
	sh := &ShellHooks{Registry: reg, Runner: &ShellRunner{Environ: os.Environ()}, Consent: &Consent{List: Allowlist{Path: filepath.Join(b.TempDir(), AllowlistFile)}, Accept: true}}
	var specs []ShellSpec
	for i := 0; i < n; i++ {
		p := filepath.Join(b.TempDir(), "h.sh")
		os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755)
		specs = append(specs, ShellSpec{Event: PreToolCallHook, Command: p, Timeout: 10 * time.Second})
	}
	sh.Register(specs)
	return reg
}

func BenchmarkShellHookCall(b *testing.B) {
	reg := shellRegistry(b, 1, "cat >/dev/null; echo '{}'\n")
	p := &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": "ls"}, SessionID: "s"}
	for b.Loop() {
		reg.PreToolCall(context.Background(), p)
	}
}

func BenchmarkShellOneSlowHook(b *testing.B) {
	reg := shellRegistry(b, 1, "cat >/dev/null; sleep 0.1; echo '{}'\n")
	p := &PreToolCall{ToolName: "terminal", SessionID: "s"}
	for b.Loop() {
		reg.PreToolCall(context.Background(), p)
	}
}

func BenchmarkShellFourSlowHooks(b *testing.B) {
	reg := shellRegistry(b, 4, "cat >/dev/null; sleep 0.1; echo '{}'\n")
	p := &PreToolCall{ToolName: "terminal", SessionID: "s"}
	for b.Loop() {
		reg.PreToolCall(context.Background(), p)
	}
}

// persistentPy is a persistent guard in Python (the language most
// persistent hooks are written in): it blocks `rm` commands.
const persistentPy = `#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    cmd = (req.get("tool_input") or {}).get("command", "")
    ans = {"id": req["id"]}
    if cmd.startswith("rm"):
        ans = {"id": req["id"], "action": "block", "message": "no rm"}
    print(json.dumps(ans), flush=True)
`

// BenchmarkShellPersistentRoundTrip is one pre_tool_call through the
// registry to a persistent hook and back; it reports the median.
func BenchmarkShellPersistentRoundTrip(b *testing.B) {
	p := filepath.Join(b.TempDir(), "guard.py")
	os.WriteFile(p, []byte(persistentPy), 0o755)
	reg := NewRegistry(nil)
	b.Cleanup(func() { reg.Close(context.Background()) })
	sh := &ShellHooks{Registry: reg, Runner: &ShellRunner{Environ: os.Environ()}, Consent: &Consent{List: Allowlist{Path: filepath.Join(b.TempDir(), AllowlistFile)}, Accept: true}}
	sh.Register([]ShellSpec{{Event: PreToolCallHook, Command: p, Timeout: time.Minute, Persistent: true}})
	call := &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": "rm -rf /"}, SessionID: "s"}
	if d := reg.PreToolCall(context.Background(), call); d.Action != "block" {
		b.Fatalf("decision %+v", d)
	}
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		reg.PreToolCall(context.Background(), call)
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
}

// BenchmarkShellHookVsSpawn alternates a bare spawn and a shell-hook call
// of the same script in one loop, so both see the same machine load, and
// reports the ratio of their medians.
func BenchmarkShellHookVsSpawn(b *testing.B) {
	body := "cat >/dev/null; echo '{}'\n"
	p := benchScript(b, body)
	reg := shellRegistryAt(b, p)
	call := &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": "ls"}, SessionID: "s"}
	in, _ := ShellPayload(PreToolCallHook, call)
	var bare, hook []time.Duration
	for b.Loop() {
		t0 := time.Now()
		var out, errb bytes.Buffer
		c := exec.Command(p)
		c.Stdin, c.Stdout, c.Stderr = bytes.NewReader(in), &out, &errb
		if err := c.Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		reg.PreToolCall(context.Background(), call)
		hook, bare = append(hook, time.Since(t1)), append(bare, t1.Sub(t0))
	}
	slices.Sort(bare)
	slices.Sort(hook)
	b.ReportMetric(float64(bare[len(bare)/2].Microseconds()), "bare-p50-µs")
	b.ReportMetric(float64(hook[len(hook)/2].Microseconds()), "hook-p50-µs")
	b.ReportMetric(float64(hook[len(hook)/2])/float64(bare[len(bare)/2]), "ratio")
}

func shellRegistryAt(b *testing.B, script string) *Registry {
	reg := NewRegistry(nil)
	b.Cleanup(func() { reg.Close(context.Background()) })
	sh := &ShellHooks{Registry: reg, Runner: &ShellRunner{Environ: os.Environ()}, Consent: &Consent{List: Allowlist{Path: filepath.Join(b.TempDir(), AllowlistFile)}, Accept: true}}
	sh.Register([]ShellSpec{{Event: PreToolCallHook, Command: script, Timeout: 10 * time.Second}})
	return reg
}
