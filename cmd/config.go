package cmd

// config.go: herald config check | show | path — what the configuration
// says, where each effective value came from, and where herald keeps its
// files. None of them creates the home or writes anything; secrets are
// masked in everything they print.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/boot"
	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/hooks"
)

func init() {
	registerCommand(command{name: "config", synopsis: "config <subcommand>",
		summary:     "check config.yaml, show its values and their sources, list herald's files",
		subcommands: []string{"check", "show", "path"},
		run:         func(ctx context.Context, e *env, a []string) error { return e.configCmd(ctx, a) }})
}

const configUsage = "usage: herald config check [--strict] | show [--effective] [--json] | path [--json]"

func (e *env) configCmd(_ context.Context, args []string) error {
	if len(args) == 0 {
		return usagef(configUsage)
	}
	switch args[0] {
	case "check":
		return e.configCheck(args[1:])
	case "show":
		return e.configShow(args[1:])
	case "path", "paths":
		return e.configPath(args[1:])
	}
	return usagef("unknown config command %q\n%s", args[0], configUsage)
}

// configArgs parses a config subcommand's flags (it takes no other
// arguments) and returns the home it reads, without creating it.
func (e *env) configArgs(fs *flag.FlagSet, args []string) (string, error) {
	if pos, err := parse(fs, args); err != nil {
		return "", err
	} else if len(pos) > 0 {
		return "", usagef(configUsage)
	}
	return config.Home(e.home, e.getenv)
}

// configCheck prints every warning and error of the configuration with
// its file and line, and fails on an error (on a warning too with
// --strict).
func (e *env) configCheck(args []string) error {
	fs := e.flags("config check")
	strict := fs.Bool("strict", false, "fail on warnings too")
	home, err := e.configArgs(fs, args)
	if err != nil {
		return err
	}
	cfg, warns, loadErr := config.Load(home, e.getenv)
	var errs []error
	if loadErr != nil {
		var ce *config.Error
		if !errors.As(loadErr, &ce) {
			return loadErr
		}
		errs = splitErrors(loadErr)
	}
	lines := make([]string, 0, len(warns))
	for _, w := range warns {
		lines = append(lines, "warning: "+w.String())
	}
	if cfg != nil {
		// the hooks: block is the hooks package's to read
		_, hookWarns, _ := hooks.ParseShellHooks(cfg.Hooks.Node)
		for _, w := range hookWarns {
			lines = append(lines, "warning: "+w)
		}
	}
	for _, err := range errs {
		lines = append(lines, "error: "+err.Error())
	}
	for _, l := range lines {
		fmt.Fprintln(e.stdout, l)
	}
	nWarn := len(lines) - len(errs)
	var checked []string
	for _, name := range []string{"config.yaml", ".env"} {
		if _, err := os.Lstat(filepath.Join(home, name)); !errors.Is(err, os.ErrNotExist) {
			checked = append(checked, filepath.Join(home, name))
		}
	}
	if len(checked) == 0 {
		fmt.Fprintf(e.stdout, "%s does not exist: herald runs on its defaults and the environment\n", filepath.Join(home, "config.yaml"))
	} else {
		fmt.Fprintf(e.stdout, "checked %s: %s, %s\n", strings.Join(checked, ", "), count(len(errs), "error"), count(nWarn, "warning"))
	}
	if len(errs) > 0 || *strict && nWarn > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// splitErrors are the errors joined in err, or err alone.
func splitErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func count(n int, what string) string {
	switch n {
	case 0:
		return "no " + what + "s"
	case 1:
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// configShow prints config.yaml as written, or with --effective every
// effective value and its source; secrets masked either way.
func (e *env) configShow(args []string) error {
	fs := e.flags("config show")
	effective := fs.Bool("effective", false, "every effective value, with where it came from")
	asJSON := fs.Bool("json", false, "print JSON")
	home, err := e.configArgs(fs, args)
	if err != nil {
		return err
	}
	cfg, warns, err := config.Load(home, e.getenv)
	if err != nil {
		return err
	}
	e.warnConfig(warns)
	var out bytes.Buffer
	if *effective {
		err = writeSettings(&out, cfg.Settings(), *asJSON)
	} else {
		err = e.writeConfigFile(&out, home, *asJSON)
	}
	if err != nil {
		return err
	}
	// the last guard behind the masking of the secret settings: every
	// value the configuration holds as a secret, wherever else it is
	// written (a token pasted into a URL, a prompt)
	red := herald.NewRedactor()
	for _, v := range cfg.Secrets {
		red.Add(v)
	}
	_, err = io.WriteString(e.stdout, red.Redact(out.String()))
	return err
}

// writeConfigFile writes config.yaml with its secrets masked, as written
// or as JSON.
func (e *env) writeConfigFile(w io.Writer, home string, asJSON bool) error {
	path := filepath.Join(home, "config.yaml")
	data, err := herald.ReadRegularFile(path)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(e.stderr, "herald: %s does not exist: herald runs on its defaults (herald config show --effective lists them)\n", path)
		if asJSON {
			fmt.Fprintln(w, "{}")
		}
		return nil
	}
	if err != nil {
		return err
	}
	masked, err := config.MaskFile(data)
	if err != nil {
		return err
	}
	if !asJSON {
		_, err = w.Write(masked)
		return err
	}
	var doc any
	if err := yaml.Unmarshal(masked, &doc); err != nil {
		return err
	}
	if doc == nil {
		doc = map[string]any{} // an empty file
	}
	return writeJSON(w, jsonable(doc))
}

// jsonable turns a decoded YAML document into what encoding/json takes:
// a mapping with keys that are not all strings (1: x) decodes as
// map[any]any, whose keys are written as text here.
func jsonable(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = jsonable(x)
		}
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[fmt.Sprint(k)] = jsonable(x)
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = jsonable(x)
		}
	}
	return v
}

// settingJSON is one setting in show --effective --json: the value, its
// source as text and as file, line, column and variable.
type settingJSON struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Env    string `json:"env,omitempty"`
	Secret bool   `json:"secret,omitempty"`
}

func writeSettings(w io.Writer, settings []config.Setting, asJSON bool) error {
	if asJSON {
		list := make([]settingJSON, len(settings))
		for i, s := range settings {
			src := s.Source
			list[i] = settingJSON{Key: s.Key, Value: s.Value, Source: src.String(), File: src.File, Line: src.Line,
				Column: src.Column, Env: src.Env, Secret: s.Secret}
		}
		return writeJSON(w, list)
	}
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, s := range settings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, settingText(s.Value), s.Source)
	}
	return tw.Flush()
}

// settingText is a value as one cell of the table.
func settingText(v any) string {
	switch v := v.(type) {
	case nil:
		return "(unset)"
	case string:
		if v == "" || strings.TrimSpace(v) != v || strings.ContainsAny(v, "\n\t") {
			return strconv.Quote(v)
		}
		return v
	case []string:
		return "[" + strings.Join(v, ", ") + "]"
	case map[string]string:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return fmt.Sprint(v)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// homeFiles are the files and directories herald keeps in its home, in
// the order config path prints them.
type homeFiles struct {
	Home   string `json:"home"`
	Config string `json:"config"`
	Env    string `json:"env"`
	State  string `json:"state"`
	Logs   string `json:"logs"`
	Boot   string `json:"boot"`
	Hooks  string `json:"hooks"`
	Token  string `json:"token"`
}

func filesOf(home string) homeFiles {
	in := func(name string) string { return filepath.Join(home, name) }
	return homeFiles{
		Home: home, Config: in("config.yaml"), Env: in(".env"), State: in("state.db"),
		Logs: in("logs"), Boot: in(boot.FileName), Hooks: in("hooks"), Token: in("local.token"),
	}
}

// configPath prints where herald keeps each of its files, one per line.
func (e *env) configPath(args []string) error {
	fs := e.flags("config path")
	asJSON := fs.Bool("json", false, "print JSON")
	home, err := e.configArgs(fs, args)
	if err != nil {
		return err
	}
	f := filesOf(home)
	if *asJSON {
		return writeJSON(e.stdout, f)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 2, 2, ' ', 0)
	for _, row := range [][2]string{
		{"home", f.Home}, {"config", f.Config}, {"env", f.Env}, {"state", f.State},
		{"logs", f.Logs}, {"boot", f.Boot}, {"hooks", f.Hooks}, {"token", f.Token},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	return tw.Flush()
}
