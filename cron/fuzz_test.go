package cron

import (
	"errors"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"
)

// FuzzParseSchedule feeds schedule strings as a user or the model writes
// them. Parse never panics; an error wraps ErrSchedule; an accepted
// schedule has a kind and a display, reloads from its stored form to the
// same times, and its next times move forward, at least a minute apart.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{
		"30m", "2h", "1d", "90 minutes", "45", "1h30m", "every 30m", "Every 2h", "every 1 day", "every 10s",
		"0 9 * * *", "*/15 * * * *", "CRON_TZ=America/New_York 0 9 * * *", "TZ=UTC 0 0 * * 1-5", "@daily", "@every 1h",
		"2026-12-24T18:00", "2026-12-24 18:00", "2026-12-24T18:00:00+01:00", "2026-12-24",
		"", "soon", "every", "CRON_TZ=", "0 9 * * * *", "61 * * * *", "0 0 30 2 *", "9999999999999999999m", "every 99999999999h",
	} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := Parse(s, now, time.UTC)
		if err != nil {
			if !errors.Is(err, ErrSchedule) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrSchedule", s, err)
			}
			return
		}
		if sc.Kind == "" || sc.Display == "" || sc.Expr == "" {
			t.Fatalf("Parse(%q) = %+v: kind, display and stored form must be set", s, sc)
		}
		re, err := Load(sc.Kind, sc.Expr, sc.Display)
		if err != nil {
			t.Fatalf("Parse(%q) stored %q, which does not reload: %v", s, sc.Expr, err)
		}
		first := sc.First(now, time.UTC)
		if got := re.First(now, time.UTC); !got.Equal(first) {
			t.Fatalf("Parse(%q): first run %v, reloaded %v", s, first, got)
		}
		if !sc.Recurring() {
			if sc.Kind == KindInterval || !sc.Next(now, time.UTC).IsZero() {
				t.Fatalf("Parse(%q): a once schedule with a next run", s)
			}
			return
		}
		if first.IsZero() {
			return // a cron expression that never matches (0 0 30 2 *); Add refuses it
		}
		if !first.After(now) {
			t.Fatalf("Parse(%q): first run %v is not after now %v", s, first, now)
		}
		if next := sc.Next(first, time.UTC); !next.IsZero() && !next.After(first) {
			t.Fatalf("Parse(%q): run after %v is %v", s, first, next)
		}
		later := first.Add(90 * time.Minute)
		if after := sc.After(first, later, time.UTC); !after.IsZero() && !after.After(later) {
			t.Fatalf("Parse(%q): After(%v, %v) = %v, not in the future", s, first, later, after)
		}
		if next := sc.Next(first, time.UTC); !next.IsZero() && next.Sub(first) < time.Minute {
			t.Fatalf("Parse(%q): runs %v apart; the shortest interval is 1m", s, next.Sub(first))
		}
		if p := sc.Period(now, time.UTC); p < 0 {
			t.Fatalf("Parse(%q): negative period %v", s, p)
		}
	})
}

// unitRE matches one term of a compact duration ("90m", "2h", "1d");
// digitsRE a bare number of minutes.
var (
	unitRE   = regexp.MustCompile(`(\d+)([smhdw])`)
	digitsRE = regexp.MustCompile(`^\d+$`)
)

// FuzzParseDuration checks the delay and interval reader against exact
// arithmetic: a compact duration ("1h30m", "2d") or a bare number of
// minutes is either read exactly or, when it does not fit a
// time.Duration, refused — never wrapped around into another length.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30m", "1h30m", "2d", "45", "1w", "90s", "0m", "9223372036s", "9223372037s",
		"2562047h", "2562048h", "106751d", "106752d", "99999999999h", "9999999999999999999m", "5124095576030431h", "30 minutes"} {
		f.Add(s)
	}
	units := map[string]int64{"s": int64(time.Second), "m": int64(time.Minute), "h": int64(time.Hour), "d": 24 * int64(time.Hour), "w": 7 * 24 * int64(time.Hour)}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		in := strings.TrimSpace(strings.ToLower(s))
		exact := new(big.Int)
		switch {
		case digitsRE.MatchString(in):
			exact.SetString(in, 10)
			exact.Mul(exact, big.NewInt(int64(time.Minute)))
		case in != "" && unitRE.ReplaceAllString(in, "") == "":
			for _, m := range unitRE.FindAllStringSubmatch(in, -1) {
				n, _ := new(big.Int).SetString(m[1], 10)
				exact.Add(exact, n.Mul(n, big.NewInt(units[m[2]])))
			}
		default:
			return // words and malformed input: only "no panic" is checked
		}
		if !exact.IsInt64() {
			if err == nil {
				t.Fatalf("parseDuration(%q) = %v, but %s ns does not fit a duration", s, d, exact)
			}
			return
		}
		if err != nil || int64(d) != exact.Int64() {
			t.Fatalf("parseDuration(%q) = %v, %v; want %v", s, d, err, time.Duration(exact.Int64()))
		}
	})
}
