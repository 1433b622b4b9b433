package cmd

// logs_filter.go: which lines of the gateway log herald logs prints
// (herald logs errors, --level, --since), and the log's last lines for
// herald gateway status.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// logFilter keeps the log lines at or above a level and, with since set,
// written at or after it. A line with neither a time nor a level (a stack
// trace a crash left) goes with the line before it.
type logFilter struct {
	min   int
	since time.Time
	// inRange is whether the last line with a time was at or after since
	inRange bool
	// seen and last: whether a line was read, and what was decided for it
	seen, last bool
}

// newLogFilter reads herald logs' arguments: "errors" (WARN and ERROR
// lines only), --level and --since, which takes a duration back from now
// or a time.
func newLogFilter(pos []string, level, since string, now time.Time) (*logFilter, error) {
	f := &logFilter{inRange: true}
	if level != "" {
		r, ok := levelRank[strings.ToUpper(level)]
		if !ok {
			return nil, usagef("--level must be DEBUG, INFO, WARN or ERROR")
		}
		f.min = r
	}
	switch {
	case len(pos) == 0:
	case len(pos) == 1 && pos[0] == "errors":
		f.min = max(f.min, levelRank["WARN"])
	default:
		return nil, usagef("usage: herald logs [errors] [--since 1h|TIME] [--level LEVEL] [--follow]")
	}
	if since != "" {
		t, err := parseSince(since, now)
		if err != nil {
			return nil, usagef("--since: %v", err)
		}
		f.since, f.inRange = t, false
	}
	return f, nil
}

// parseSince reads a duration back from now (1h, 30m, 2d) or a time:
// RFC3339, or a local date and time (2026-12-03T09:00, 2026-12-03).
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	d, err := parseAge(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a duration (1h, 30m, 2d) nor a time (2026-12-03T09:00:00Z)", s)
	}
	return now.Add(-d), nil
}

func (f *logFilter) keep(line string) bool {
	if f.seen && !strings.Contains(line, "time=") && !strings.Contains(line, "level=") {
		return f.last // a continuation: goes with the line before it
	}
	if !f.since.IsZero() {
		if t, ok := lineTime(line); ok {
			f.inRange = !t.Before(f.since)
		}
	}
	f.seen = true
	f.last = f.inRange && lineLevel(line) >= f.min
	return f.last
}

// lineTime is the time= of a log line slog's text handler wrote.
func lineTime(line string) (time.Time, bool) {
	var v string
	switch {
	case strings.HasPrefix(line, "time="):
		v = line[5:]
	default:
		i := strings.Index(line, " time=")
		if i < 0 {
			return time.Time{}, false
		}
		v = line[i+6:]
	}
	if j := strings.IndexAny(v, " \n"); j >= 0 {
		v = v[:j]
	}
	t, err := time.Parse(time.RFC3339Nano, strings.Trim(v, `"`))
	return t, err == nil
}

// tailFile writes the last n lines of the file at path (none when it does
// not exist), reading at most its last 1 MiB.
func tailFile(w io.Writer, path string, n int) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	const window = 1 << 20
	st, err := f.Stat()
	if err != nil {
		return err
	}
	off := max(st.Size()-window, 0)
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), window)
	first := off > 0 // a line cut by the window's start is dropped
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return sc.Err()
}
