package cmd

import (
	"strings"
	"testing"
	"time"
)

// FuzzLogFilter: any line and any --since either filter without a panic
// or are refused; a line with a readable time before --since is dropped
// and one at or after it kept (at INFO and above).
func FuzzLogFilter(f *testing.F) {
	f.Add("time=2026-12-03T09:00:00.000Z level=INFO msg=x", "1h")
	f.Add("time=2026-12-03T09:00:00.000Z level=ERROR msg=x", "2026-12-03T08:00:00Z")
	f.Add("\tgoroutine 1 [running]:", "2026-12-03")
	f.Add(`level=WARN time="2026-12-03T09:00:00Z" msg="a b"`, "30m")
	f.Add("time=", "90")
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, line, since string) {
		filter, err := newLogFilter(nil, "", since, now)
		if err != nil {
			return
		}
		kept := filter.keep(line)
		at, ok := lineTime(line)
		if !ok || !strings.Contains(line, "level=") || lineLevel(line) < levelRank["INFO"] {
			return
		}
		if want := since == "" || !at.Before(filter.since); kept != want {
			t.Fatalf("line %q since %q (%v): kept %v, want %v", line, since, filter.since, kept, want)
		}
	})
}
