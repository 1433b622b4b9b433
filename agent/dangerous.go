package agent

// The dangerous-command check: a terminal command is parsed as the shell
// would parse it (mvdan.cc/sh), and every command it would run is judged
// by its name after quotes, escapes and directories are taken away,
// through the wrappers that run another command (sudo, env, xargs,
// find -exec, sh -c, timeout, …). What cannot be known before it runs —
// a command name computed by $(…) or $VAR, code piped into a shell, a
// command that does not parse — needs approval too.

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Danger is one reason a terminal command needs approval. Key is the
// stable pattern key approvals are remembered by ("always", "session")
// and hooks see as pattern_key.
type Danger struct {
	Key         string
	Description string
}

// Each reason has its own key, so that approving "sudo" for a session
// does not approve "rm_rf". The order is the order DetectDangerous
// reports them in.
var dangers = []Danger{
	{"rm_rf", "recursive delete (rm -r/-rf)"},
	{"sudo", "runs as root (sudo/su/doas)"},
	{"mkfs", "formats a filesystem (mkfs)"},
	{"dd_of", "raw disk write (dd of=)"},
	{"chmod_777_recursive", "makes a tree world-writable (chmod -R 777)"},
	{"chown_recursive", "changes ownership of a tree (chown -R)"},
	{"pipe_to_shell", "runs code it cannot see: a download or a pipe fed to a shell or interpreter (curl … | sh)"},
	{"git_force_push", "rewrites remote history (git push --force)"},
	{"git_reset_hard", "discards local changes (git reset --hard / clean -f)"},
	{"block_device_write", "writes to a block device (> /dev/sd*)"},
	{"fork_bomb", "fork bomb"},
	{"system_power", "shuts down or reboots the machine"},
	{"kill_all", "kills every process (kill -9 -1)"},
	{"overwrite_system_file", "overwrites a system file (> /etc/…)"},
	{"find_delete", "bulk delete (find -delete / -exec rm, xargs rm)"},
	{"sql_destructive", "destroys database data (DROP/TRUNCATE)"},
	{"dynamic_command", "runs a command whose name is only known when it runs ($(…), $VAR)"},
	{"unparsable", "cannot be parsed, so it cannot be checked"},
}

var sqlDestructive = regexp.MustCompile(`(?i)\b(?:drop\s+(?:table|database|schema)|truncate\s+table)\b`)

// DetectDangerous returns every reason a command needs approval, in the
// order of the table above; an empty result means it runs without asking.
func DetectDangerous(command string) []Danger {
	if strings.TrimSpace(command) == "" {
		return nil
	}
	var c checker
	c.script(command, 0)
	if sqlDestructive.MatchString(command) {
		c.flag("sql_destructive")
	}
	var out []Danger
	for _, d := range dangers {
		if c.found[d.Key] {
			out = append(out, d)
		}
	}
	return out
}

func dangerKeys(ds []Danger) (keys []string, description string) {
	descs := make([]string, 0, len(ds))
	for _, d := range ds {
		keys = append(keys, d.Key)
		descs = append(descs, d.Description)
	}
	return keys, strings.Join(descs, "; ")
}

// maxNesting bounds sh -c inside sh -c inside …: deeper than this is
// treated as something nobody types by hand.
const maxNesting = 8

type checker struct {
	found map[string]bool
}

func (c *checker) flag(key string) {
	if c.found == nil {
		c.found = map[string]bool{}
	}
	c.found[key] = true
}

// script parses src as a shell script and checks everything in it.
func (c *checker) script(src string, depth int) {
	if depth > maxNesting {
		c.flag("unparsable")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		c.flag("unparsable")
		return
	}
	c.node(f, depth)
}

// node checks every command, redirection, pipe and function in n,
// including those inside substitutions.
func (c *checker) node(n syntax.Node, depth int) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			c.stmt(x, depth)
		case *syntax.CallExpr:
			if len(x.Args) > 0 {
				c.call(argsOf(x.Args), depth)
			}
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				if call, ok := x.Y.Cmd.(*syntax.CallExpr); ok && readsStdinAsCode(argsOf(call.Args)) {
					c.flag("pipe_to_shell")
				}
			}
		case *syntax.FuncDecl:
			if forksItself(x) {
				c.flag("fork_bomb")
			}
		}
		return true
	})
}

// stmt checks a statement's redirections: writes to devices and system
// files, and code fed to a shell through stdin.
func (c *checker) stmt(s *syntax.Stmt, depth int) {
	var call []arg
	if ce, ok := s.Cmd.(*syntax.CallExpr); ok {
		call = argsOf(ce.Args)
	}
	for _, r := range s.Redirs {
		target := wordArg(r.Word)
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.DplOut:
			c.writeTarget(target)
		case syntax.RdrIn:
			if readsStdinAsCode(call) && target.procSubst {
				c.flag("pipe_to_shell")
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if readsStdinAsCode(call) {
				c.codeWord(r.Hdoc, depth)
			}
		case syntax.WordHdoc:
			if readsStdinAsCode(call) {
				c.codeWord(r.Word, depth)
			}
		}
	}
}

// codeWord checks a word that a shell will run as a script: parsed when
// it is literal, unknown otherwise.
func (c *checker) codeWord(w *syntax.Word, depth int) {
	a := wordArg(w)
	if a.dynamic {
		c.flag("pipe_to_shell")
		return
	}
	c.script(a.s, depth+1)
}

var blockDevice = regexp.MustCompile(`^/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|dm-|md|loop)`)

// writeTarget flags a file about to be written that belongs to the
// system.
func (c *checker) writeTarget(a arg) {
	if a.dynamic {
		return
	}
	p := path.Clean(a.s)
	switch {
	case blockDevice.MatchString(p):
		c.flag("block_device_write")
	case systemFile(p):
		c.flag("overwrite_system_file")
	}
}

func systemFile(p string) bool {
	for _, d := range []string{"/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// arg is one word of a command after quote removal. A word with a
// parameter, command or arithmetic expansion in it is dynamic; its known
// parts are kept in s (the unknown ones as \x00).
type arg struct {
	s         string
	dynamic   bool
	procSubst bool // the whole word is <(…) or >(…)
	glob      bool // unquoted *, ?, [ or { that the shell may expand
}

func argsOf(words []*syntax.Word) []arg {
	out := make([]arg, len(words))
	for i, w := range words {
		out[i] = wordArg(w)
	}
	return out
}

func wordArg(w *syntax.Word) arg {
	if w == nil {
		return arg{dynamic: true}
	}
	var a arg
	if len(w.Parts) == 1 {
		if _, ok := w.Parts[0].(*syntax.ProcSubst); ok {
			a.procSubst = true
		}
	}
	var b strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "*?[{") {
			a.glob = true
		}
		s, dyn := partValue(p, false)
		b.WriteString(s)
		a.dynamic = a.dynamic || dyn
	}
	a.s = b.String()
	return a
}

// partValue is a word part's value after quote removal, with \x00 for
// what only running the command would tell.
func partValue(p syntax.WordPart, quoted bool) (string, bool) {
	switch x := p.(type) {
	case *syntax.Lit:
		if !quoted {
			return unescape(x.Value), false
		}
		return literal(&syntax.DblQuoted{Parts: []syntax.WordPart{x}})
	case *syntax.SglQuoted:
		return literal(x)
	case *syntax.DblQuoted:
		var b strings.Builder
		dyn := false
		for _, q := range x.Parts {
			s, d := partValue(q, true)
			b.WriteString(s)
			dyn = dyn || d
		}
		return b.String(), dyn
	}
	return "\x00", true
}

// literal is a quoted part's value ($'…' decoded, "…" unescaped).
func literal(p syntax.WordPart) (string, bool) {
	// a fresh Config each time: expand writes to the one it is given
	s, err := expand.Literal(&expand.Config{}, &syntax.Word{Parts: []syntax.WordPart{p}})
	if err != nil {
		return "\x00", true
	}
	return s, false
}

// unescape removes the backslashes of an unquoted word: \x is x, and a
// backslash-newline joins lines.
func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// call checks one command and what it runs.
func (c *checker) call(args []arg, depth int) {
	for len(args) > 0 {
		name := args[0]
		base, known := commandName(name)
		if !known {
			c.flag("dynamic_command")
			return
		}
		if name.s == "" {
			return
		}
		rest := args[1:]
		next, ok := c.command(base, rest, depth)
		if !ok {
			return
		}
		args = next
	}
}

// commandName is the base name of the program a command word runs, and
// whether it is known before the command runs. "$HOME/bin/tool" is
// known (tool, in a directory only the shell knows); $CMD, $(…), /bin/r?
// and {rm,x} are not.
func commandName(a arg) (string, bool) {
	if a.procSubst {
		return "", false
	}
	if !a.dynamic {
		return path.Base(a.s), !a.glob
	}
	i := strings.LastIndex(a.s, "/")
	if i < 0 {
		return "", false
	}
	base := a.s[i+1:]
	if base == "" || strings.ContainsAny(base, "\x00*?[{") {
		return "", false
	}
	return base, true
}

// command judges one command by its base name. When it is a wrapper that
// runs another command, it returns that command's words and true.
func (c *checker) command(base string, args []arg, depth int) ([]arg, bool) {
	switch {
	case base == "rm":
		if rmRecursive(args) {
			c.flag("rm_rf")
		}
	case base == "sudo" || base == "doas" || base == "run0" || base == "pkexec":
		c.flag("sudo")
		return skipOptions(args, sudoValueOpts), true
	case base == "su":
		c.flag("sudo")
		for i, a := range args {
			if (a.s == "-c" || a.s == "--command") && i+1 < len(args) {
				c.inline(args[i+1], depth)
			} else if v, ok := strings.CutPrefix(a.s, "--command="); ok {
				c.inline(arg{s: v, dynamic: a.dynamic}, depth)
			}
		}
	case base == "mkfs" || strings.HasPrefix(base, "mkfs.") || base == "mke2fs" || base == "mkswap" || base == "wipefs":
		c.flag("mkfs")
	case base == "dd":
		for _, a := range args {
			if strings.HasPrefix(a.s, "of=") {
				c.flag("dd_of")
				c.writeTarget(arg{s: a.s[3:], dynamic: a.dynamic})
			}
		}
	case base == "chmod":
		if hasRecursiveOpt(args) && slices.ContainsFunc(args, func(a arg) bool {
			return a.s == "777" || a.s == "0777" || strings.HasSuffix(a.s, "+rwx") && !strings.HasPrefix(a.s, "u")
		}) {
			c.flag("chmod_777_recursive")
		}
	case base == "chown" || base == "chgrp":
		if hasRecursiveOpt(args) {
			c.flag("chown_recursive")
		}
	case base == "git":
		c.git(args)
	case base == "shutdown" || base == "reboot" || base == "halt" || base == "poweroff":
		c.flag("system_power")
	case base == "init" || base == "telinit":
		if len(args) > 0 && (args[0].s == "0" || args[0].s == "6") {
			c.flag("system_power")
		}
	case base == "systemctl":
		if slices.ContainsFunc(args, func(a arg) bool {
			return a.s == "poweroff" || a.s == "reboot" || a.s == "halt" || a.s == "kexec"
		}) {
			c.flag("system_power")
		}
	case base == "kill":
		if killsAll(args) {
			c.flag("kill_all")
		}
	case base == "pkill":
		if slices.ContainsFunc(args, func(a arg) bool { return a.s == "-9" || a.s == "-KILL" || a.s == "-SIGKILL" }) {
			c.flag("kill_all")
		}
	case base == "killall" || base == "killall5":
		c.flag("kill_all")
	case base == "tee":
		for _, a := range args {
			if !strings.HasPrefix(a.s, "-") {
				c.writeTarget(a)
			}
		}
	case base == "cp" || base == "mv" || base == "install" || base == "ln" || base == "rsync":
		if n := len(args); n > 1 {
			c.writeTarget(args[n-1])
		}
	case base == "sed" || base == "truncate" || base == "shred":
		if base != "sed" || slices.ContainsFunc(args, func(a arg) bool { return strings.HasPrefix(a.s, "-i") || strings.HasPrefix(a.s, "--in-place") }) {
			for _, a := range args {
				if !strings.HasPrefix(a.s, "-") {
					c.writeTarget(a)
				}
			}
		}
	case base == "find":
		return nil, c.find(args, depth)
	case base == "xargs":
		cmd := skipOptions(args, xargsValueOpts)
		if len(cmd) > 0 && path.Base(cmd[0].s) == "rm" {
			c.flag("find_delete")
		}
		return cmd, true
	case base == "env":
		return c.env(args, depth)
	case base == "eval":
		c.inline(joinArgs(args), depth)
	case base == "watch":
		c.inline(joinArgs(skipOptions(args, watchValueOpts)), depth)
	case base == "alias":
		for _, a := range args {
			if _, v, ok := strings.Cut(a.s, "="); ok {
				c.inline(arg{s: v, dynamic: a.dynamic}, depth)
			}
		}
	case base == "." || base == "source":
		if len(args) > 0 && (args[0].procSubst || args[0].dynamic) {
			c.flag("pipe_to_shell")
		}
	case base == "command":
		if slices.ContainsFunc(args, func(a arg) bool { return a.s == "-v" || a.s == "-V" }) {
			return nil, false
		}
		return skipOptions(args, nil), true
	case base == "exec":
		return skipOptions(args, map[string]bool{"-a": true}), true
	case base == "busybox" || base == "nohup" || base == "time" || base == "builtin" || base == "unbuffer" || base == "setsid" || base == "stdbuf" || base == "ionice" || base == "nice" || base == "chrt" || base == "taskset" || base == "flock" || base == "chroot" || base == "timeout":
		return c.wrapped(base, args, depth)
	case isShell(base):
		c.shell(args, depth)
	}
	return nil, false
}

// wrapped returns the command that a prefix command runs.
func (c *checker) wrapped(base string, args []arg, depth int) ([]arg, bool) {
	rest := skipOptions(args, wrapperValueOpts[base])
	switch base {
	case "timeout", "chroot", "taskset":
		// a duration, a new root or a CPU mask comes first
		if len(rest) > 0 {
			rest = rest[1:]
		}
	case "chrt":
		if len(rest) > 0 && len(args) > 0 && !slices.ContainsFunc(args, func(a arg) bool { return a.s == "-p" }) {
			rest = rest[1:]
		}
	case "flock":
		// flock FILE COMMAND… or flock FILE -c STRING
		if len(rest) > 0 {
			rest = rest[1:]
		}
		if len(rest) > 1 && (rest[0].s == "-c" || rest[0].s == "--command") {
			c.inline(rest[1], depth)
			return nil, false
		}
	}
	return rest, true
}

// env skips env's options and assignments; -S splits a string into the
// command line.
func (c *checker) env(args []arg, depth int) ([]arg, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.s == "--":
			return args[i+1:], true
		case a.s == "-S" || a.s == "--split-string":
			if i+1 < len(args) {
				c.inline(joinArgs(args[i+1:]), depth)
			}
			return nil, false
		case strings.HasPrefix(a.s, "-S") || strings.HasPrefix(a.s, "--split-string="):
			s := strings.TrimPrefix(strings.TrimPrefix(a.s, "--split-string="), "-S")
			c.inline(joinArgs(append([]arg{{s: s, dynamic: a.dynamic}}, args[i+1:]...)), depth)
			return nil, false
		case a.s == "-u" || a.s == "-C" || a.s == "--unset" || a.s == "--chdir":
			i++
		case strings.HasPrefix(a.s, "-"):
		case strings.Contains(a.s, "=") && !a.dynamic:
		default:
			return args[i:], true
		}
	}
	return nil, false
}

// inline checks a string another program will run as shell code.
func (c *checker) inline(a arg, depth int) {
	if a.dynamic {
		c.flag("dynamic_command")
		return
	}
	c.script(a.s, depth+1)
}

func joinArgs(args []arg) arg {
	var a arg
	parts := make([]string, len(args))
	for i, x := range args {
		parts[i] = x.s
		a.dynamic = a.dynamic || x.dynamic
	}
	a.s = strings.Join(parts, " ")
	return a
}

var shellName = regexp.MustCompile(`^(?:(?:ba|z|da|k|mk|a|fi|c|tc|y|o|po)?sh|sh[0-9.]*)$`)
var interpreterName = regexp.MustCompile(`^(?:python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|deno|bun|php[0-9.]*|lua[0-9.]*|luajit|tclsh[0-9.]*|osascript|Rscript|julia)$`)

// shellOption is a cluster of single-letter options; anything else is
// the script (or its file).
var (
	shellOption     = regexp.MustCompile(`^[-+][a-zA-Z]+$`)
	shellLongOption = regexp.MustCompile(`^--[a-zA-Z][a-zA-Z-]*$`)
)

func isShell(base string) bool { return shellName.MatchString(base) }

// shell checks sh/bash/…: -c's string is parsed; a script that is a
// process substitution is downloaded code.
func (c *checker) shell(args []arg, depth int) {
	inline := false
	for i, a := range args {
		switch {
		case a.s == "--" || a.s == "-":
			continue
		case a.s == "-o" || a.s == "+o" || a.s == "-O" || a.s == "+O" || a.s == "--rcfile" || a.s == "--init-file":
			continue
		case shellLongOption.MatchString(a.s) && !a.dynamic:
			continue
		case shellOption.MatchString(a.s) && !a.dynamic:
			if strings.ContainsRune(a.s[1:], 'c') {
				inline = true
			}
			continue
		}
		if i > 0 && (args[i-1].s == "-o" || args[i-1].s == "+o" || args[i-1].s == "-O" || args[i-1].s == "+O" || args[i-1].s == "--rcfile" || args[i-1].s == "--init-file") {
			continue
		}
		if inline {
			c.inline(a, depth)
		} else if a.procSubst || a.dynamic {
			c.flag("pipe_to_shell")
		}
		return
	}
}

// readsStdinAsCode reports whether a command runs what it reads on stdin:
// a shell or interpreter without a script or inline code.
func readsStdinAsCode(args []arg) bool {
	for len(args) > 0 {
		base := path.Base(args[0].s)
		rest := args[1:]
		switch {
		case base == "sudo" || base == "doas":
			args = skipOptions(rest, sudoValueOpts)
			continue
		case base == "env":
			args = skipEnv(rest)
			continue
		case base == "busybox":
			args = rest
			continue
		case base == "exec" || base == "command" || base == "nohup" || base == "time" || base == "nice" || base == "stdbuf" || base == "setsid":
			args = skipOptions(rest, wrapperValueOpts[base])
			continue
		case isShell(base) || interpreterName.MatchString(base):
			for _, a := range rest {
				switch {
				case a.s == "-" || a.s == "/dev/stdin" || a.s == "-s":
					return true
				case a.s == "-c" || a.s == "-e" || a.s == "-E" || a.s == "-m" || a.s == "-r":
					return false
				case len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && isShell(base) && strings.ContainsRune(a.s, 'c'):
					return false
				case strings.HasPrefix(a.s, "-") || strings.HasPrefix(a.s, "+"):
				default:
					return false // a script file
				}
			}
			return true
		}
		return false
	}
	return false
}

func skipEnv(args []arg) []arg {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.s == "--":
			return args[i+1:]
		case a.s == "-u" || a.s == "-C":
			i++
		case strings.HasPrefix(a.s, "-") || strings.Contains(a.s, "="):
		default:
			return args[i:]
		}
	}
	return nil
}

var (
	sudoValueOpts = map[string]bool{"-u": true, "-g": true, "-C": true, "-D": true, "-h": true, "-p": true,
		"-r": true, "-t": true, "-T": true, "-U": true, "--user": true, "--group": true, "--chdir": true,
		"--prompt": true, "--role": true, "--type": true, "--host": true, "--close-from": true, "--other-user": true,
		"--command-timeout": true}
	xargsValueOpts = map[string]bool{"-a": true, "-d": true, "-E": true, "-I": true, "-L": true, "-n": true,
		"-P": true, "-s": true, "--arg-file": true, "--delimiter": true, "--max-args": true, "--max-procs": true,
		"--max-lines": true, "--max-chars": true, "--process-slot-var": true}
	watchValueOpts   = map[string]bool{"-n": true, "--interval": true, "-q": true, "--equexit": true}
	wrapperValueOpts = map[string]map[string]bool{
		"timeout": {"-s": true, "-k": true, "--signal": true, "--kill-after": true},
		"nice":    {"-n": true, "--adjustment": true},
		"ionice":  {"-c": true, "-n": true, "-p": true, "-P": true, "-u": true, "--class": true, "--classdata": true},
		"stdbuf":  {"-i": true, "-o": true, "-e": true},
		"taskset": {},
		"chroot":  {"--userspec": true, "--groups": true},
		"flock":   {"-w": true, "-E": true, "--timeout": true, "--conflict-exit-code": true},
		"chrt":    {},
		"exec":    {"-a": true},
	}
)

// skipOptions drops leading options (and the values of those in
// withValue) up to the first operand, or past "--".
func skipOptions(args []arg, withValue map[string]bool) []arg {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.s == "--":
			return args[i+1:]
		case withValue[a.s]:
			i++
		case strings.HasPrefix(a.s, "-") && len(a.s) > 1 && !a.dynamic:
		default:
			return args[i:]
		}
	}
	return nil
}

// rmRecursive: -r, -R, --recursive (or an abbreviation), in any cluster
// or quoting; an option that is only known when the command runs counts
// too, since it may be -rf.
func rmRecursive(args []arg) bool {
	for _, a := range args {
		switch {
		case a.s == "--":
			return false
		case a.dynamic && (a.s == "" || strings.HasPrefix(a.s, "\x00") || strings.HasPrefix(a.s, "-")):
			return true
		case strings.HasPrefix(a.s, "--"):
			opt := a.s[2:]
			if opt != "" && strings.HasPrefix("recursive", opt) || opt == "no-preserve-root" {
				return true
			}
		case strings.HasPrefix(a.s, "-") && strings.ContainsAny(a.s, "rR"):
			return true
		}
	}
	return false
}

func hasRecursiveOpt(args []arg) bool {
	for _, a := range args {
		switch {
		case a.s == "--":
			return false
		case strings.HasPrefix(a.s, "--"):
			if opt := a.s[2:]; opt != "" && strings.HasPrefix("recursive", opt) {
				return true
			}
		case strings.HasPrefix(a.s, "-") && strings.ContainsRune(a.s, 'R'):
			return true
		}
	}
	return false
}

// killsAll: kill with a KILL signal and -1 as the process ("every process
// I may signal").
func killsAll(args []arg) bool {
	kill9, all := false, false
	for i, a := range args {
		switch a.s {
		case "-9", "-KILL", "-SIGKILL", "-kill", "-sigkill":
			kill9 = true
		case "-s", "-n", "--signal":
			if i+1 < len(args) {
				switch strings.ToUpper(strings.TrimPrefix(strings.ToUpper(args[i+1].s), "SIG")) {
				case "9", "KILL":
					kill9 = true
				}
			}
		case "-1":
			// the first "-1" may be signal 1 (HUP); one after a signal or
			// "--" is the process
			if i > 0 {
				all = true
			}
		}
	}
	return kill9 && all
}

func (c *checker) git(args []arg) {
	// skip git's own options: -C dir, -c key=value, --git-dir=…
	i := 0
	for i < len(args) {
		s := args[i].s
		if s == "-C" || s == "-c" || s == "--git-dir" || s == "--work-tree" || s == "--namespace" {
			i += 2
			continue
		}
		if strings.HasPrefix(s, "-") {
			i++
			continue
		}
		break
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i].s, args[i+1:]
	switch sub {
	case "push":
		for _, a := range rest {
			switch {
			case a.s == "--force" || strings.HasPrefix(a.s, "--force-with-lease") || a.s == "--force-if-includes" || a.s == "--mirror" || a.s == "--delete":
				c.flag("git_force_push")
			case strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.ContainsRune(a.s, 'f'):
				c.flag("git_force_push")
			case strings.HasPrefix(a.s, "+") || strings.HasPrefix(a.s, ":"):
				c.flag("git_force_push")
			}
		}
	case "reset":
		if slices.ContainsFunc(rest, func(a arg) bool { return a.s == "--hard" }) {
			c.flag("git_reset_hard")
		}
	case "clean":
		if slices.ContainsFunc(rest, func(a arg) bool {
			return a.s == "--force" || strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.ContainsRune(a.s, 'f')
		}) {
			c.flag("git_reset_hard")
		}
	}
}

// find: -delete deletes; -exec/-execdir/-ok/-okdir run a command, which
// is checked like any other (rm among them is a bulk delete).
func (c *checker) find(args []arg, depth int) bool {
	for i := 0; i < len(args); i++ {
		switch args[i].s {
		case "-delete":
			c.flag("find_delete")
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].s != ";" && args[j].s != "+" {
				j++
			}
			cmd := args[i+1 : j]
			if len(cmd) > 0 && !cmd[0].dynamic && path.Base(cmd[0].s) == "rm" {
				c.flag("find_delete")
			}
			c.call(cmd, depth)
			i = j
		}
	}
	return false
}

// forksItself: a function that calls itself in a pipe or in the
// background, the shape of :(){ :|:& };:.
func forksItself(f *syntax.FuncDecl) bool {
	if f.Name == nil || f.Body == nil {
		return false
	}
	name := f.Name.Value
	found := false
	syntax.Walk(f.Body, func(n syntax.Node) bool {
		var s *syntax.Stmt
		switch x := n.(type) {
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				found = found || callsName(x.X, name) || callsName(x.Y, name)
			}
		case *syntax.Stmt:
			s = x
			if s.Background && callsName(s, name) {
				found = true
			}
		}
		return !found
	})
	return found
}

func callsName(s *syntax.Stmt, name string) bool {
	found := false
	syntax.Walk(s, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 && ce.Args[0].Lit() == name {
			found = true
		}
		return !found
	})
	return found
}
