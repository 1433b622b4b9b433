package cmd

// sessions_manage.go: herald sessions show, export, delete and prune. A
// session is named by its id or a unique prefix of it. Deleting removes
// the session's messages from state.db and the files it left beside it:
// its transcripts (transcripts/<id>.jsonl and its sub-agents'
// <id>-sub….jsonl) and its media (media/<id>/).

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/cron"
	"github.com/heraldgw/herald/sessions"
)

const sessionsUsage = `usage:
  herald sessions list [--platform P] [--limit N]
  herald sessions show <id>
  herald sessions export <id> [--format md|json] [--output FILE]
  herald sessions delete <id> [--yes]
  herald sessions prune --older-than AGE [--ended] [--dry-run] [--yes]

<id> is a session id or a unique prefix of one (herald sessions list shows them).
AGE is a duration such as 30d, 12h or 2w.`

// sessionsHome is the state store opened for a sessions command, with the home
// and a redactor holding the configured secrets.
type sessionsHome struct {
	cfg   *config.Config
	store *sessions.Store
	red   *herald.Redactor
}

func (e *env) openSessions() (*sessionsHome, error) {
	cfg, err := e.loadConfigWarned()
	if err != nil {
		return nil, err
	}
	st, err := openStore(cfg)
	if err != nil {
		return nil, err
	}
	red := herald.NewRedactor()
	for _, v := range cfg.Secrets {
		red.Add(v)
	}
	return &sessionsHome{cfg: cfg, store: st, red: red}, nil
}

func (h *sessionsHome) close() { h.store.Close() }

// find resolves an id or a unique prefix of one.
func (h *sessionsHome) find(ctx context.Context, id string) (*sessions.Session, error) {
	const shown = 5
	list, err := h.store.SessionsWithPrefix(ctx, id, shown+1)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].ID == id {
			return &list[i], nil
		}
	}
	switch {
	case len(list) == 0:
		return nil, &exitError{code: 1, msg: fmt.Sprintf("no session %q (herald sessions list shows them)", id)}
	case len(list) > 1:
		var names []string
		for i, s := range list {
			if i == shown {
				names = append(names, "…")
				break
			}
			names = append(names, s.ID)
		}
		return nil, &exitError{code: 1, msg: fmt.Sprintf("%q names more than one session (%s): give more of the id", id, strings.Join(names, ", "))}
	}
	return &list[0], nil
}

// oneSession parses a subcommand that names one session, opens state.db
// and finds the session. The caller closes the home.
func (e *env) oneSession(ctx context.Context, fs *flag.FlagSet, sub string, args []string) (*sessionsHome, *sessions.Session, error) {
	pos, err := parse(fs, args)
	if err != nil {
		return nil, nil, err
	}
	if len(pos) != 1 || pos[0] == "" {
		return nil, nil, usagef("usage: herald sessions %s <id>", sub)
	}
	h, err := e.openSessions()
	if err != nil {
		return nil, nil, err
	}
	sess, err := h.find(ctx, pos[0])
	if err != nil {
		h.close()
		return nil, nil, err
	}
	return h, sess, nil
}

func (e *env) sessionsShow(ctx context.Context, args []string) error {
	fs := e.flags("sessions show")
	h, sess, err := e.oneSession(ctx, fs, "show", args)
	if err != nil {
		return err
	}
	defer h.close()
	msgs, err := h.store.Messages(ctx, sess.ID, 0)
	if err != nil {
		return err
	}
	return writeMarkdown(e.stdout, sess, msgs, h.red, transcriptOptions{maxToolLines: 20, files: sessionFiles(h.cfg.Home, sess.ID)})
}

func (e *env) sessionsExport(ctx context.Context, args []string) error {
	fs := e.flags("sessions export")
	format := fs.String("format", "md", "md (a readable transcript) or json (the stored messages)")
	output := fs.String("output", "", "write to this file (0600) instead of standard output")
	fs.StringVar(output, "o", "", "short for --output")
	h, sess, err := e.oneSession(ctx, fs, "export", args)
	if err != nil {
		return err
	}
	defer h.close()
	if *format != "md" && *format != "json" {
		return usagef("--format must be md or json, not %q", *format)
	}
	msgs, err := h.store.Messages(ctx, sess.ID, 0)
	if err != nil {
		return err
	}
	w := e.stdout
	var f *os.File
	if *output != "" {
		f, err = os.OpenFile(*output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
		defer f.Close()
		w = f
	}
	if *format == "json" {
		err = writeJSONExport(w, sess, msgs, h.red)
	} else {
		err = writeMarkdown(w, sess, msgs, h.red, transcriptOptions{})
	}
	if err != nil {
		return err
	}
	if f != nil {
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "herald: session %s written to %s\n", sess.ID, *output)
	}
	return nil
}

func (e *env) sessionsDelete(ctx context.Context, args []string) error {
	fs := e.flags("sessions delete")
	yes := fs.Bool("yes", false, "do not ask (needed without a terminal)")
	fs.BoolVar(yes, "y", false, "short for --yes")
	h, sess, err := e.oneSession(ctx, fs, "delete", args)
	if err != nil {
		return err
	}
	defer h.close()
	// a running gateway holds an open session in memory and would go on
	// writing to it: deleting it under the gateway would lose those turns
	if pid := runningGateway(h.cfg.Home); sess.EndedAt == nil && pid != 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("session %s is open and the gateway (pid %d) is using it: send /new in its chat to end it, or stop the gateway, then delete it", sess.ID, pid)}
	}
	what := fmt.Sprintf("session %s (%s, chat %s, %d messages, last %s)", sess.ID, sess.Platform, sess.ChatID, sess.MessageCount, sess.UpdatedAt.Format(sessionTimeLayout))
	if ok, err := e.confirm(*yes, "Delete "+what+"?"); err != nil || !ok {
		return err
	}
	found, err := h.store.DeleteSession(ctx, sess.ID)
	if err != nil {
		return err
	}
	if !found {
		return &exitError{code: 1, msg: fmt.Sprintf("session %s was deleted meanwhile", sess.ID)}
	}
	files, ferr := removeSessionFiles(h.cfg.Home, sess.ID)
	fmt.Fprintf(e.stdout, "Deleted %s", what)
	if files > 0 {
		fmt.Fprintf(e.stdout, " and %d file(s)", files)
	}
	fmt.Fprintln(e.stdout, ".")
	return ferr
}

func (e *env) sessionsPrune(ctx context.Context, args []string) error {
	fs := e.flags("sessions prune")
	olderThan := fs.String("older-than", "", "delete sessions with no message for this long (30d, 12h, 2w)")
	endedOnly := fs.Bool("ended", false, "only sessions that ended (reset or expired); open ones are kept")
	dryRun := fs.Bool("dry-run", false, "list what would be deleted, delete nothing")
	yes := fs.Bool("yes", false, "do not ask (needed without a terminal)")
	fs.BoolVar(yes, "y", false, "short for --yes")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *olderThan == "" {
		return usagef("usage: herald sessions prune --older-than AGE [--ended] [--dry-run] [--yes]")
	}
	age, err := parseAge(*olderThan)
	if err != nil {
		return usagef("--older-than: %v", err)
	}
	h, err := e.openSessions()
	if err != nil {
		return err
	}
	defer h.close()
	filter := sessions.PruneFilter{Before: time.Now().Add(-age), EndedOnly: *endedOnly}
	// a running gateway may hold an open session in memory (see delete)
	kept := ""
	if pid := runningGateway(h.cfg.Home); pid != 0 && !filter.EndedOnly {
		filter.EndedOnly = true
		kept = fmt.Sprintf(" Open sessions are kept while the gateway (pid %d) runs.", pid)
	}
	list, err := h.store.PrunableSessions(ctx, filter)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintf(e.stdout, "No sessions older than %s.%s\n", *olderThan, kept)
		return nil
	}
	if *dryRun {
		for _, s := range list {
			fmt.Fprintf(e.stdout, "would delete %s  %s  %s  %d messages  last %s\n", s.ID, s.Platform, s.ChatID, s.MessageCount, s.UpdatedAt.Format(sessionTimeLayout))
		}
		fmt.Fprintf(e.stdout, "Would delete %d session(s) older than %s (dry run: nothing deleted).%s\n", len(list), *olderThan, kept)
		return nil
	}
	if ok, err := e.confirm(*yes, fmt.Sprintf("Delete %d session(s) with no message for %s?", len(list), *olderThan)); err != nil || !ok {
		return err
	}
	ids, err := h.store.PruneSessions(ctx, filter)
	if err != nil {
		return err
	}
	files := 0
	var ferrs []error
	for _, id := range ids {
		n, err := removeSessionFiles(h.cfg.Home, id)
		files += n
		if err != nil {
			ferrs = append(ferrs, err)
		}
	}
	fmt.Fprintf(e.stdout, "Deleted %d session(s) older than %s", len(ids), *olderThan)
	if files > 0 {
		fmt.Fprintf(e.stdout, " and %d file(s)", files)
	}
	fmt.Fprintf(e.stdout, ".%s\n", kept)
	return errors.Join(ferrs...)
}

// confirm asks question on a terminal (y/N); without one it needs --yes.
// It returns false, having said so, when the answer is no.
func (e *env) confirm(yes bool, question string) (bool, error) {
	if yes {
		return true, nil
	}
	if !isTerminal(e.stdin) {
		return false, &exitError{code: 2, msg: "no terminal to ask on: pass --yes to delete without asking"}
	}
	fmt.Fprintf(e.stdout, "%s [y/N] ", question)
	answer, err := bufio.NewReader(e.stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, nil
	}
	fmt.Fprintln(e.stdout, "Nothing deleted.")
	return false, nil
}

// parseAge reads an age such as 30d, 12h, 2w or 90m (a unit is needed:
// a bare number could mean days or minutes).
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s != "" && strings.Trim(s, "0123456789") == "" {
		return 0, fmt.Errorf("%q needs a unit: %sd for days, %sh for hours", s, s, s)
	}
	d, err := cron.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", s)
	}
	return d, nil
}

// sessionFiles are the files a session left beside state.db: its
// transcript, its sub-agents' transcripts and its media directory.
func sessionFiles(home, id string) []string {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`+"\x00") {
		return nil
	}
	var out []string
	dir := filepath.Join(home, "transcripts")
	if st, err := os.Lstat(filepath.Join(dir, id+".jsonl")); err == nil && st.Mode().IsRegular() {
		out = append(out, filepath.Join(dir, id+".jsonl"))
	}
	if entries, err := os.ReadDir(dir); err == nil {
		for _, de := range entries {
			n := de.Name()
			if de.Type().IsRegular() && strings.HasPrefix(n, id+"-sub") && strings.HasSuffix(n, ".jsonl") {
				out = append(out, filepath.Join(dir, n))
			}
		}
	}
	media := filepath.Join(home, "media", id)
	if st, err := os.Lstat(media); err == nil && st.IsDir() {
		out = append(out, media)
	}
	return out
}

// removeSessionFiles removes sessionFiles and returns how many it removed.
func removeSessionFiles(home, id string) (int, error) {
	n := 0
	var errs []error
	for _, p := range sessionFiles(home, id) {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
