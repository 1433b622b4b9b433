package cron

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	// CRON_TZ= names a zone; embed the zone database so that it works on
	// hosts without one (minimal containers).
	_ "time/tzdata"

	robfig "github.com/robfig/cron/v3"
)

// Kind is how a schedule repeats, with Hermes' names.
type Kind string

const (
	// KindOnce runs one time, at a given moment ("30m", "2h", "1d", or an
	// ISO timestamp).
	KindOnce Kind = "once"
	// KindInterval runs every fixed period ("every 30m").
	KindInterval Kind = "interval"
	// KindCron runs on a five-field cron expression (optionally with a
	// CRON_TZ= or TZ= prefix).
	KindCron Kind = "cron"
)

// Schedule is a parsed schedule. Expr is its stored form: for once, the
// run time in RFC 3339; for interval, a Go duration ("30m0s"); for cron,
// the expression as given.
type Schedule struct {
	Kind    Kind
	Expr    string
	Display string

	runAt  time.Time
	every  time.Duration
	cronSc robfig.Schedule
}

// ErrSchedule is wrapped by every schedule parse error.
var ErrSchedule = errors.New("invalid schedule")

// cronParser accepts the five standard fields and the @descriptors
// (@daily, @every 1h); seconds are not offered, as in Hermes.
var cronParser = robfig.NewParser(robfig.Minute | robfig.Hour | robfig.Dom | robfig.Month | robfig.Dow | robfig.Descriptor)

// Parse reads a schedule as a user writes it: "30m", "2h", "1d" (once,
// that long after now), "every 30m" (interval), a five-field cron
// expression such as "0 9 * * *" (with an optional "CRON_TZ=Europe/Paris "
// prefix), or an ISO timestamp such as "2026-12-24T18:00" (once; without a
// zone it is in loc).
func Parse(s string, now time.Time, loc *time.Location) (Schedule, error) {
	if loc == nil {
		loc = time.Local
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return Schedule{}, fmt.Errorf("%w: empty", ErrSchedule)
	}
	low := strings.ToLower(s)
	if rest, ok := strings.CutPrefix(low, "every "); ok {
		d, err := parseDuration(strings.TrimSpace(rest))
		if err != nil {
			return Schedule{}, fmt.Errorf("%w: %q: %v", ErrSchedule, s, err)
		}
		if d < time.Minute {
			return Schedule{}, fmt.Errorf("%w: %q: the shortest interval is 1m", ErrSchedule, s)
		}
		return Schedule{Kind: KindInterval, Expr: d.String(), Display: "every " + formatDuration(d), every: d}, nil
	}
	d, err := parseDuration(low)
	if errors.Is(err, errTooLong) {
		return Schedule{}, fmt.Errorf("%w: %q: %v", ErrSchedule, s, err)
	}
	if err == nil {
		if d <= 0 {
			return Schedule{}, fmt.Errorf("%w: %q: the delay must be positive", ErrSchedule, s)
		}
		at := now.Add(d).Truncate(time.Second)
		return Schedule{Kind: KindOnce, Expr: at.UTC().Format(time.RFC3339), Display: "once in " + formatDuration(d), runAt: at}, nil
	}
	if at, ok := parseTimestamp(s, loc); ok {
		return Schedule{Kind: KindOnce, Expr: at.UTC().Format(time.RFC3339), Display: "once at " + at.In(loc).Format("2006-01-02 15:04"), runAt: at}, nil
	}
	sc, err := parseCron(s)
	if err != nil {
		return Schedule{}, fmt.Errorf("%w: %q is not a delay (30m, 2h, 1d), an interval (every 30m), a cron expression (0 9 * * *) or a timestamp (2026-12-24T18:00): %v", ErrSchedule, s, err)
	}
	return Schedule{Kind: KindCron, Expr: s, Display: s, cronSc: sc}, nil
}

// Load rebuilds a stored schedule.
func Load(kind Kind, expr, display string) (Schedule, error) {
	sc := Schedule{Kind: kind, Expr: expr, Display: display}
	switch kind {
	case KindOnce:
		t, err := time.Parse(time.RFC3339, expr)
		if err != nil {
			return sc, fmt.Errorf("%w: stored run time %q: %v", ErrSchedule, expr, err)
		}
		sc.runAt = t
	case KindInterval:
		d, err := time.ParseDuration(expr)
		if err != nil || d <= 0 {
			return sc, fmt.Errorf("%w: stored interval %q", ErrSchedule, expr)
		}
		sc.every = d
	case KindCron:
		c, err := parseCron(expr)
		if err != nil {
			return sc, fmt.Errorf("%w: stored expression %q: %v", ErrSchedule, expr, err)
		}
		sc.cronSc = c
	default:
		return sc, fmt.Errorf("%w: unknown kind %q", ErrSchedule, kind)
	}
	return sc, nil
}

// Recurring reports whether the schedule runs more than once.
func (s Schedule) Recurring() bool { return s.Kind != KindOnce }

// First is the first run time of a new job created at now.
func (s Schedule) First(now time.Time, loc *time.Location) time.Time {
	if s.Kind == KindOnce {
		return s.runAt
	}
	return s.Next(now, loc)
}

// Next is the first run time strictly after t, or the zero time when there
// is none (a once schedule, or a cron expression that never matches).
func (s Schedule) Next(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.Local
	}
	switch s.Kind {
	case KindInterval:
		return t.Add(s.every).Truncate(time.Second)
	case KindCron:
		if s.cronSc == nil {
			return time.Time{}
		}
		// robfig computes in the time's own zone unless the spec names one
		return s.cronSc.Next(t.In(loc))
	}
	return time.Time{}
}

// After is the first slot strictly after now, counted from slot (a time
// the schedule was due): an interval keeps its phase, so a late start does
// not make every later run late too.
func (s Schedule) After(slot, now time.Time, loc *time.Location) time.Time {
	if s.Kind == KindInterval && !slot.IsZero() && s.every > 0 {
		if !slot.After(now) {
			n := now.Sub(slot)/s.every + 1
			return slot.Add(n * s.every)
		}
		return slot
	}
	return s.Next(now, loc)
}

// Period is the schedule's typical gap between runs, used to decide when a
// late run counts as missed.
func (s Schedule) Period(now time.Time, loc *time.Location) time.Duration {
	switch s.Kind {
	case KindInterval:
		return s.every
	case KindCron:
		a := s.Next(now, loc)
		if a.IsZero() {
			return 0
		}
		b := s.Next(a, loc)
		if b.IsZero() {
			return 0
		}
		return b.Sub(a)
	}
	return 0
}

// parseCron parses a cron expression under recover: robfig/cron v3.0.1
// panics on "CRON_TZ=" or "TZ=..." with no fields after it.
func parseCron(s string) (sc robfig.Schedule, err error) {
	defer func() {
		if p := recover(); p != nil {
			sc, err = nil, fmt.Errorf("unreadable cron expression")
		}
	}()
	spec := strings.TrimSpace(s)
	if strings.HasPrefix(spec, "CRON_TZ=") || strings.HasPrefix(spec, "TZ=") {
		if _, rest, ok := strings.Cut(spec, " "); !ok || strings.TrimSpace(rest) == "" {
			return nil, fmt.Errorf("%s names a time zone but no schedule", spec)
		}
	} else if !strings.HasPrefix(spec, "@") && len(strings.Fields(spec)) != 5 {
		return nil, fmt.Errorf("a cron expression has five fields (minute hour day-of-month month day-of-week), got %d", len(strings.Fields(spec)))
	}
	sc, err = cronParser.Parse(spec)
	if every, ok := sc.(robfig.ConstantDelaySchedule); ok && err == nil && every.Delay < time.Minute {
		// @every 0 or @every 10s: robfig runs it every second or so
		return nil, fmt.Errorf("@every %s: the shortest interval is 1m", every.Delay)
	}
	return sc, err
}

// parseDuration reads "30m", "2h", "1d", "90s", "1h30m" and plain minutes
// ("45"), and words ("30 minutes", "2 hours", "1 day").
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" {
		return 0, errors.New("empty duration")
	}
	if isDigits(s) {
		return mulDuration(s, time.Minute)
	}
	words := map[string]string{
		"seconds": "s", "second": "s", "secs": "s", "sec": "s",
		"minutes": "m", "minute": "m", "mins": "m", "min": "m",
		"hours": "h", "hour": "h", "hrs": "h", "hr": "h",
		"days": "d", "day": "d", "weeks": "w", "week": "w",
	}
	if f := strings.Fields(s); len(f) == 2 {
		if u, ok := words[f[1]]; ok {
			s = f[0] + u
		}
	}
	var total time.Duration
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i == len(rest) {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		digits := rest[:i]
		var unit time.Duration
		switch rest[i] {
		case 's':
			unit = time.Second
		case 'm':
			unit = time.Minute
		case 'h':
			unit = time.Hour
		case 'd':
			unit = 24 * time.Hour
		case 'w':
			unit = 7 * 24 * time.Hour
		default:
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		term, err := mulDuration(digits, unit)
		if err != nil || total > math.MaxInt64-term {
			return 0, errTooLong
		}
		total += term
		rest = rest[i+1:]
	}
	return total, nil
}

// errTooLong is a duration beyond time.Duration's range (about 292 years).
var errTooLong = errors.New("longer than herald can count (about 290 years)")

// mulDuration is digits × unit, refusing what does not fit a time.Duration
// rather than letting it wrap around into some other length.
func mulDuration(digits string, unit time.Duration) (time.Duration, error) {
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > int64(math.MaxInt64/unit) {
		return 0, errTooLong
	}
	return time.Duration(n) * unit, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// formatDuration writes a duration the way users type it: 30m, 2h, 1d,
// 1h30m.
func formatDuration(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	if d%time.Hour == 0 {
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	if d%time.Minute == 0 {
		m := int(d / time.Minute)
		if m > 60 {
			return strconv.Itoa(m/60) + "h" + strconv.Itoa(m%60) + "m"
		}
		return strconv.Itoa(m) + "m"
	}
	return d.String()
}

var timestampLayouts = []string{
	time.RFC3339,
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
}

func parseTimestamp(s string, loc *time.Location) (time.Time, bool) {
	for i, l := range timestampLayouts {
		var t time.Time
		var err error
		if i == 0 {
			t, err = time.Parse(l, s)
		} else {
			t, err = time.ParseInLocation(l, s, loc)
		}
		if err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
