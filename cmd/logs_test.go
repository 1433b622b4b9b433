package cmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeGatewayLog writes home's gateway.log.
func writeGatewayLog(t *testing.T, home string, lines ...string) {
	t.Helper()
	os.MkdirAll(filepath.Join(home, "logs"), 0o700)
	if err := os.WriteFile(filepath.Join(home, "logs", "gateway.log"), []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

func logLine(at time.Time, level, msg string) string {
	return fmt.Sprintf("time=%s level=%s msg=%q\n", at.Format("2006-01-02T15:04:05.000Z07:00"), level, msg)
}

func TestLogsSinceAndErrors(t *testing.T) {
	home := t.TempDir()
	now := time.Now()
	writeGatewayLog(t, home,
		logLine(now.Add(-3*time.Hour), "INFO", "three hours ago"),
		logLine(now.Add(-2*time.Hour), "ERROR", "panic two hours ago"),
		"goroutine 1 [running]:\n",
		logLine(now.Add(-50*time.Minute), "WARN", "fifty minutes ago"),
		"\tstack of the warning\n",
		logLine(now.Add(-30*time.Minute), "INFO", "turn done"),
		logLine(now.Add(-10*time.Minute), "ERROR", "delivery failed"),
	)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"logs", "--since", "1h"}, []string{"fifty minutes ago", "stack of the warning", "turn done", "delivery failed"}},
		{[]string{"logs", "--since", "2h30m"}, []string{"panic two hours ago", "goroutine 1", "fifty minutes ago", "stack of the warning", "turn done", "delivery failed"}},
		{[]string{"logs", "--since", now.Add(-40 * time.Minute).UTC().Format(time.RFC3339)}, []string{"turn done", "delivery failed"}},
		{[]string{"logs", "errors"}, []string{"panic two hours ago", "goroutine 1", "fifty minutes ago", "stack of the warning", "delivery failed"}},
		{[]string{"logs", "errors", "--since", "1h"}, []string{"fifty minutes ago", "stack of the warning", "delivery failed"}},
		{[]string{"logs", "errors", "--level", "error"}, []string{"panic two hours ago", "goroutine 1", "delivery failed"}},
		{[]string{"logs", "--since", "1d"}, []string{"three hours ago", "panic two hours ago", "goroutine 1", "fifty minutes ago", "stack of the warning", "turn done", "delivery failed"}},
	} {
		code, out, errw := run(t, home, "", tc.args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, errw)
			continue
		}
		var got []string
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			for _, w := range []string{"three hours ago", "panic two hours ago", "goroutine 1", "fifty minutes ago", "stack of the warning", "turn done", "delivery failed"} {
				if strings.Contains(l, w) {
					got = append(got, w)
				}
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%v:\n got %q\nwant %q\n%s", tc.args, got, tc.want, out)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", "--since", "yesterday"}, `--since: "yesterday" is neither a duration (1h, 30m, 2d) nor a time`},
		{[]string{"logs", "--since", "90"}, `--since: "90" is neither a duration`},
		{[]string{"logs", "warnings"}, "usage: herald logs [errors]"},
	} {
		if code, _, errw := run(t, home, "", tc.args...); code != 2 || !strings.Contains(errw, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errw, tc.want)
		}
	}
}
