package cmd

// doctor.go is `herald doctor`: one screen of checks over everything a
// gateway needs — the home and its permissions, state.db, disk space, the
// configuration, each platform's credentials (doctor_platforms.go), the
// model endpoint, hooks (through `herald hooks doctor`), BOOT.md and the
// cron jobs. Each line is ok, warn or FAIL with a short reason; the exit
// status is 0 only when nothing FAILs. Doctor never creates a home that
// does not exist, and never prints a secret: every line passes through
// the redactor.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/boot"
	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/cron"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

func init() {
	registerCommand(command{name: "doctor", synopsis: "doctor [--json]", summary: "check the home, config, credentials, model, hooks, BOOT.md and cron",
		run: func(ctx context.Context, e *env, a []string) error { return e.doctor(ctx, a) }})
}

// The three verdicts of a check.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "FAIL"
)

// Free space below which the disk check warns, and fails.
const (
	diskWarnBytes = 1 << 30
	diskFailBytes = 100 << 20
)

// doctorTimeout bounds each call doctor makes to a platform or the model.
const doctorTimeout = 15 * time.Second

// doctorCheck is one line of the report.
type doctorCheck struct {
	Section string `json:"section"`
	Status  string `json:"status"`
	Detail  string `json:"detail"`
}

// doctorReport is the whole report, as --json prints it.
type doctorReport struct {
	Home   string        `json:"home"`
	Checks []doctorCheck `json:"checks"`
	Fails  int           `json:"fails"`
	Warns  int           `json:"warns"`

	red *herald.Redactor
	// store is config.yaml's store: (a PostgreSQL URL), "" for SQLite
	store *config.Config
}

func (r *doctorReport) add(section, status, format string, a ...any) {
	detail := r.red.Redact(strings.Join(strings.Fields(fmt.Sprintf(format, a...)), " "))
	r.Checks = append(r.Checks, doctorCheck{Section: section, Status: status, Detail: detail})
	switch status {
	case checkFail:
		r.Fails++
	case checkWarn:
		r.Warns++
	}
}

func (e *env) doctor(ctx context.Context, args []string) error {
	flags := e.flags("doctor")
	asJSON := flags.Bool("json", false, "print one JSON document")
	if _, err := parse(flags, args); err != nil {
		return err
	}
	home, err := config.Home(e.home, e.getenv)
	if err != nil {
		return err
	}
	rep := &doctorReport{Home: home, Checks: []doctorCheck{}, red: herald.NewRedactor()}
	// the configuration first, so that its secrets are redacted from every
	// line, the home's included
	cfg, warns, cfgErr := config.Load(home, e.getenv)
	if cfg != nil {
		for _, v := range cfg.Secrets {
			rep.red.Add(v)
		}
		if cfg.Store != "" {
			rep.store = cfg
		}
	}
	homeExists := rep.checkHome(ctx, home)
	rep.checkConfig(cfg, warns, cfgErr)
	if cfg != nil {
		rep.checkPlatforms(ctx, e, cfg)
		rep.checkModel(ctx, cfg)
	} else {
		rep.add("config", checkWarn, "the platforms, the model, hooks and BOOT.md are not checked until config.yaml loads")
	}
	if cfg != nil && homeExists {
		rep.checkHooks(ctx, e)
		rep.checkBoot(cfg)
	}
	rep.checkCron(ctx, home)

	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		rep.write(e.stdout)
	}
	if rep.Fails > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// write prints the report for a person: one line per check.
func (r *doctorReport) write(w io.Writer) {
	fmt.Fprintf(w, "herald doctor: %s\n\n", r.Home)
	for _, c := range r.Checks {
		fmt.Fprintf(w, "  %-4s  %-9s  %s\n", c.Status, c.Section, c.Detail)
	}
	fmt.Fprintln(w)
	switch {
	case r.Fails == 0 && r.Warns == 0:
		fmt.Fprintln(w, "Everything checked is ok.")
	case r.Fails == 0:
		fmt.Fprintf(w, "No failures; %d warning(s).\n", r.Warns)
	default:
		fmt.Fprintf(w, "%d failure(s), %d warning(s).\n", r.Fails, r.Warns)
	}
}

// privateFiles are the files of the home that hold secrets or
// conversations: each must be readable by its owner only.
var privateFiles = []string{"local.token", ".env", "state.db", "state.db-wal", "state.db-shm", hooks.DirAllowlistFile}

// checkHome checks the home directory, the permissions of what it holds,
// state.db's integrity and the free disk space. It reports whether the
// home exists.
func (r *doctorReport) checkHome(ctx context.Context, home string) bool {
	st, err := os.Stat(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.add("home", checkWarn, "%s does not exist yet (the first herald gateway or herald chat creates it)", home)
		return false
	case err != nil:
		r.add("home", checkFail, "%v", err)
		return false
	case !st.IsDir():
		r.add("home", checkFail, "%s is not a directory", home)
		return false
	}
	r.checkDirMode("home", home, st.Mode())
	if st, err := os.Stat(filepath.Join(home, "logs")); err == nil && st.Mode().Perm()&0o077 != 0 {
		r.checkDirMode("home", filepath.Join(home, "logs"), st.Mode())
	}
	files := slices.Clone(privateFiles)
	logs, _ := filepath.Glob(filepath.Join(home, "logs", "*.log"))
	for _, l := range logs {
		files = append(files, filepath.Join("logs", filepath.Base(l)))
	}
	private := 0
	for _, name := range files {
		st, err := os.Stat(filepath.Join(home, name))
		if err != nil {
			continue
		}
		if perm := st.Mode().Perm(); perm&0o077 != 0 {
			r.add("home", checkFail, "%s is mode %04o: other users may read it (chmod 600 %s)", name, perm, filepath.Join(home, name))
			continue
		}
		private++
	}
	if st, err := os.Stat(filepath.Join(home, "config.yaml")); err == nil && st.Mode().Perm()&0o077 != 0 {
		r.add("home", checkWarn, "config.yaml is mode %04o: other users may read it; keep secrets in .env or the environment, or chmod 600 it", st.Mode().Perm())
	}
	if private > 0 {
		r.add("home", checkOK, "%d file(s) with secrets or conversations readable by their owner only", private)
	}
	r.checkStore(ctx, home)
	r.checkDisk(home)
	return true
}

// checkDirMode wants a directory private: writable by others fails
// (they could replace what herald reads), readable by others warns.
func (r *doctorReport) checkDirMode(section, dir string, mode fs.FileMode) {
	perm := mode.Perm()
	switch {
	case perm&0o022 != 0:
		r.add(section, checkFail, "%s is mode %04o: other users may change what is in it (chmod 700 %s)", dir, perm, dir)
	case perm&0o077 != 0:
		r.add(section, checkWarn, "%s is mode %04o: other users may list it (chmod 700 %s)", dir, perm, dir)
	default:
		r.add(section, checkOK, "%s, mode %04o", dir, perm)
	}
}

// checkStore runs SQLite's quick_check over state.db when there is one.
func (r *doctorReport) checkStore(ctx context.Context, home string) {
	if r.store != nil {
		st, err := openStore(r.store)
		if err != nil {
			r.add("store", checkFail, "cannot open the PostgreSQL store: %v", err)
			return
		}
		defer st.Close()
		if err := st.Check(ctx); err != nil {
			r.add("store", checkFail, "%v", err)
			return
		}
		r.add("store", checkOK, "PostgreSQL: connected, schema version current")
		return
	}
	p := filepath.Join(home, "state.db")
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		r.add("state.db", checkOK, "not created yet")
		return
	}
	st, err := sessions.Open(p)
	if err != nil {
		r.add("state.db", checkFail, "cannot open: %v", err)
		return
	}
	defer st.Close()
	if err := st.Check(ctx); err != nil {
		r.add("state.db", checkFail, "%v (stop the gateway and restore a backup, or move state.db away to start afresh)", err)
		return
	}
	r.add("state.db", checkOK, "quick_check: ok")
}

func (r *doctorReport) checkDisk(home string) {
	var fsst syscall.Statfs_t
	if err := syscall.Statfs(home, &fsst); err != nil {
		r.add("disk", checkWarn, "cannot tell the free space: %v", err)
		return
	}
	free := int64(fsst.Bavail) * int64(fsst.Bsize)
	switch {
	case free < diskFailBytes:
		r.add("disk", checkFail, "%s free on the home's file system: state.db and the logs cannot grow", bytesText(free))
	case free < diskWarnBytes:
		r.add("disk", checkWarn, "%s free on the home's file system", bytesText(free))
	default:
		r.add("disk", checkOK, "%s free", bytesText(free))
	}
}

// bytesText is n in the largest binary unit that keeps it above 1.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// checkConfig reports config.yaml: loaded, its warnings with file:line as
// the config package gives them, or the error that stops it.
func (r *doctorReport) checkConfig(cfg *config.Config, warns []config.Warning, err error) {
	if err != nil {
		r.add("config", checkFail, "%v", err)
		return
	}
	for _, w := range warns {
		r.add("config", checkWarn, "%s", w)
	}
	what := "config.yaml loaded"
	if _, err := os.Stat(filepath.Join(cfg.Home, "config.yaml")); err != nil {
		what = "no config.yaml: the defaults and the environment"
	}
	if len(warns) == 0 {
		r.add("config", checkOK, "%s, no warnings", what)
	} else {
		r.add("config", checkOK, "%s, %d warning(s) above", what, len(warns))
	}
}

// checkModel asks the model endpoint for GET /models with the key.
func (r *doctorReport) checkModel(ctx context.Context, cfg *config.Config) {
	ep := cfg.ResolveModel()
	if ep.Offline {
		r.add("model", checkWarn, "no model configured: the offline echo model answers (set OPENAI_API_KEY, and OPENAI_BASE_URL or model.base_url for another endpoint)")
		return
	}
	base := strings.TrimSuffix(ep.BaseURL, "/")
	hdr := map[string]string{}
	if ep.APIKey != "" {
		hdr["Authorization"] = "Bearer " + ep.APIKey
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	res, err := probe(ctx, http.MethodGet, base+"/models", hdr, nil, &list)
	switch {
	case err != nil && res.code == 0:
		r.add("model", checkFail, "%s: %v", base, err)
	case res.code == http.StatusUnauthorized || res.code == http.StatusForbidden:
		r.add("model", checkFail, "%s: the API key was refused (%s)%s", base, res.status, res.reason())
	case res.code == http.StatusNotFound:
		r.add("model", checkWarn, "%s answers no GET /models (404): the endpoint is there, the model %s is not checked", base, ep.Model)
	case res.code != http.StatusOK:
		r.add("model", checkFail, "%s: GET /models answered %s%s", base, res.status, res.reason())
	case err != nil:
		r.add("model", checkWarn, "%s: GET /models answered something else than a model list: %v", base, err)
	default:
		ids := make([]string, len(list.Data))
		for i, m := range list.Data {
			ids[i] = m.ID
		}
		if slices.Contains(ids, ep.Model) {
			r.add("model", checkOK, "%s: key accepted, %s is among its %d model(s)", base, ep.Model, len(ids))
		} else {
			r.add("model", checkWarn, "%s: key accepted, but %s is not among its %d model(s) (model.default)", base, ep.Model, len(ids))
		}
	}
}

// checkHooks reports Go plugins, and shell and directory hooks through
// `herald hooks doctor` (which also finds Python for handler.py hooks):
// one line per hook.
func (r *doctorReport) checkHooks(ctx context.Context, e *env) {
	var logged bytes.Buffer
	reg := hooks.NewRegistry(slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelError})))
	loaded := reg.LoadPlugins(e.plugins...)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	reg.Close(cctx)
	cancel()
	if len(e.plugins) > 0 {
		var names []string
		for _, p := range loaded {
			names = append(names, p.Name)
		}
		r.add("hooks", checkOK, "Go plugins loaded: %s", strings.Join(names, ", "))
		if len(loaded) < len(e.plugins) {
			r.add("hooks", checkFail, "%d Go plugin(s) failed to register: %s", len(e.plugins)-len(loaded), strings.TrimSpace(logged.String()))
		}
	}

	var out bytes.Buffer
	sub := *e
	sub.stdout, sub.stderr = &out, io.Discard
	if err := hooksDoctor(ctx, &sub, nil); err != nil {
		var ex *exitError
		if !errors.As(err, &ex) {
			r.add("hooks", checkFail, "herald hooks doctor: %v", err)
			return
		}
	}
	checks := hooksDoctorChecks(out.String())
	if len(checks) == 0 {
		r.add("hooks", checkOK, "no shell hooks in config.yaml, no directory hooks in %s", filepath.Join(r.Home, "hooks"))
	}
	for _, c := range checks {
		r.add("hooks", c.Status, "%s", c.Detail)
	}
}

// smokeTime is the time a smoke test took, left out of doctor's line so
// that the report reads the same from run to run.
var smokeTime = regexp.MustCompile(` in \d+(\.\d+)?s$`)

// hooksDoctorChecks turns `herald hooks doctor`'s report into one check
// per hook: FAIL when it has a ✗, warn with a ⚠, else ok. Details go with
// the hook's heading; `herald hooks doctor` shows them all.
func hooksDoctorChecks(out string) []doctorCheck {
	var (
		checks            []doctorCheck
		head              string
		fails, warns, oks []string
	)
	flush := func() {
		if head == "" {
			return
		}
		switch {
		case len(fails) > 0:
			checks = append(checks, doctorCheck{"hooks", checkFail, head + ": " + strings.Join(append(fails, warns...), "; ") + " (herald hooks doctor)"})
		case len(warns) > 0:
			checks = append(checks, doctorCheck{"hooks", checkWarn, head + ": " + strings.Join(warns, "; ")})
		default:
			checks = append(checks, doctorCheck{"hooks", checkOK, head + ": " + strings.Join(oks, "; ")})
		}
		head, fails, warns, oks = "", nil, nil, nil
	}
	for _, line := range strings.Split(out, "\n") {
		text := strings.TrimSpace(line)
		mark, rest, _ := strings.Cut(text, " ")
		rest = smokeTime.ReplaceAllString(rest, "")
		switch {
		case text == "":
		case strings.HasPrefix(line, "  "):
			switch mark {
			case "✓":
				oks = append(oks, rest)
			case "⚠":
				warns = append(warns, rest)
			case "✗":
				fails = append(fails, rest)
			}
		case mark == "✗":
			flush()
			checks = append(checks, doctorCheck{"hooks", checkFail, rest})
		case strings.HasPrefix(text, "No "), strings.HasPrefix(text, "All "), strings.HasPrefix(text, "Directory hooks in "),
			strings.HasSuffix(text, "issue(s) found."):
			flush()
		default:
			flush()
			head = text
		}
	}
	flush()
	return checks
}

// checkBoot reports BOOT.md: absent, empty, off, or run at each start.
func (r *doctorReport) checkBoot(cfg *config.Config) {
	p := filepath.Join(cfg.Home, boot.FileName)
	b, err := herald.ReadRegularFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.add("BOOT.md", checkOK, "none (nothing runs when the gateway starts)")
	case err != nil:
		r.add("BOOT.md", checkFail, "%v", err)
	case strings.TrimSpace(string(b)) == "":
		r.add("BOOT.md", checkWarn, "%s is empty: nothing runs when the gateway starts", p)
	case !config.On(cfg.Boot.Enabled, true):
		r.add("BOOT.md", checkOK, "present, but boot.enabled is false: it does not run")
	case cfg.ResolveModel().Offline:
		r.add("BOOT.md", checkWarn, "runs at each gateway start, but with the offline echo model (no model configured)")
	default:
		r.add("BOOT.md", checkOK, "runs at each gateway start (%d line(s))", strings.Count(strings.TrimSpace(string(b)), "\n")+1)
	}
}

// checkCron reads the jobs from state.db: each schedule must parse, and
// the next run is shown.
func (r *doctorReport) checkCron(ctx context.Context, home string) {
	p := filepath.Join(home, "state.db")
	if _, err := os.Stat(p); err != nil && r.store == nil {
		r.add("cron", checkOK, "no jobs")
		return
	}
	var st *sessions.Store
	var err error
	if r.store != nil {
		st, err = openStore(r.store)
	} else {
		st, err = sessions.Open(p)
	}
	if err != nil {
		r.add("cron", checkFail, "cannot open state.db: %v", err)
		return
	}
	defer st.Close()
	jobs := cron.NewJobs(st, nil, nil)
	list, err := jobs.List(ctx, true)
	if err != nil {
		r.add("cron", checkFail, "%v", err)
		return
	}
	if len(list) == 0 {
		r.add("cron", checkOK, "no jobs")
		return
	}
	active := 0
	var next *cron.Job
	for _, j := range list {
		if _, err := cron.Load(j.Schedule.Kind, j.Schedule.Expr, j.Schedule.Display); err != nil {
			r.add("cron", checkFail, "job %s (%s): schedule %q does not parse: %v (herald cron rm %s)", j.ID, oneLine(j.Name), j.Schedule.Expr, err, j.ID)
			continue
		}
		if j.State == cron.StateError {
			r.add("cron", checkWarn, "job %s (%s) stopped on an error: %s", j.ID, oneLine(j.Name), j.LastError)
		} else if j.LastStatus == cron.StatusError {
			r.add("cron", checkWarn, "job %s (%s): its last run failed: %s", j.ID, oneLine(j.Name), j.LastError)
		}
		if jobBadge(j) == "active" {
			active++
			if !j.NextRunAt.IsZero() && (next == nil || j.NextRunAt.Before(next.NextRunAt)) {
				next = j
			}
		}
	}
	msg := fmt.Sprintf("%d job(s), %d active", len(list), active)
	if next != nil {
		msg += fmt.Sprintf("; next run %s: %s (%s)", next.NextRunAt.In(jobs.Location()).Format(timeLayout), oneLine(next.Name), next.Schedule.Display)
	}
	r.add("cron", checkOK, "%s", msg)
}
