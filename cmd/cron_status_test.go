package cmd_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cronStatusNorm replaces the job ids (in order of creation) and the
// times that depend on now in herald cron status, keeping the columns'
// widths.
func cronStatusNorm(out, home string, ids []string) string {
	for i, id := range ids {
		out = strings.ReplaceAll(out, id, fmt.Sprintf("JOB%d--------", i+1)[:len(id)])
	}
	out = strings.ReplaceAll(out, home, "$HERALD_HOME")
	out = strings.ReplaceAll(out, "pid "+strconv.Itoa(os.Getpid()), "pid PID")
	// the fixed next run (2030-01-01 09:00) stays; times near now go
	return regexp.MustCompile(`20[23][0-9]-\d\d-\d\d \d\d:\d\d`).ReplaceAllStringFunc(out, func(s string) string {
		if strings.HasPrefix(s, "2030-01-01") {
			return s
		}
		return "YYYY-MM-DD hh:mm"
	})
}

func TestCronStatus(t *testing.T) {
	home := t.TempDir()
	code, out, _ := cronCLI(t, home, "cron", "status")
	if code != 0 {
		t.Fatalf("status: exit %d", code)
	}
	goldenCompare(t, "cron/status-empty.golden", cronStatusNorm(out, home, nil))

	var ids []string
	for _, args := range [][]string{
		{"2030-01-01T09:00", "happy new year", "--name", "new year"},
		{"every 1h", "check the deploy log", "--name", "deploy", "--deliver", "telegram"},
		{"0 9 * * *", "morning brief", "--name", "brief"},
	} {
		code, out, errw := cronCLI(t, home, append([]string{"cron", "add"}, args...)...)
		if code != 0 {
			t.Fatalf("add %v: %d %s", args, code, errw)
		}
		ids = append(ids, createdRE.FindStringSubmatch(out)[1])
	}
	// deploy runs here (no gateway) and cannot deliver; brief is paused
	if code, _, errw := cronCLI(t, home, "cron", "run", ids[1]); code != 0 {
		t.Fatalf("run: %d %s", code, errw)
	}
	if code, _, errw := cronCLI(t, home, "cron", "pause", ids[2]); code != 0 {
		t.Fatalf("pause: %d %s", code, errw)
	}
	code, out, errw := cronCLI(t, home, "cron", "status")
	if code != 0 {
		t.Fatalf("status: %d %s", code, errw)
	}
	goldenCompare(t, "cron/status.golden", cronStatusNorm(out, home, ids))

	holdGatewayLock(t, home)
	_, out, _ = cronCLI(t, home, "cron", "status")
	if first := strings.SplitN(out, "\n", 2)[0]; first != "Scheduler: running (in the gateway, pid "+strconv.Itoa(os.Getpid())+")" {
		t.Fatalf("status with a gateway: %q", first)
	}
	if code, _, errw := cronCLI(t, home, "cron", "status", "extra"); code != 2 || !strings.Contains(errw, "usage: herald cron status") {
		t.Fatalf("status extra: %d %q", code, errw)
	}
}
