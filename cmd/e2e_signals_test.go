package cmd_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd/cmdtest"
)

// A second Ctrl-C exits at once; the terminal tool's command, in a
// process group of its own that the terminal's Ctrl-C does not reach,
// is killed on the way out rather than left running as an orphan.
func TestSecondInterruptKillsRunningTools(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	pidFile := filepath.Join(tmp, "sleep.pid")
	var out cmdtest.Buffer
	child := startChild(t, []string{"HERALD_HOME=" + home, "HERALD_LOCAL_LISTEN=127.0.0.1:0"}, &out)

	// the bounds below are for a failing test only: each wait ends as
	// soon as what it waits for happens
	within := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		for end := time.Now().Add(d); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("%s: not within %s\n%s", what, d, out.String())
			}
		}
	}
	var addr, token string
	within("the local platform listens", 60*time.Second, func() bool {
		a, _ := os.ReadFile(filepath.Join(home, "local.addr"))
		k, _ := os.ReadFile(filepath.Join(home, "local.token"))
		addr, token = strings.TrimSpace(string(a)), strings.TrimSpace(string(k))
		return addr != "" && token != ""
	})

	// the echo model runs "run: …" with the terminal tool; the shell
	// writes its pid and becomes sleep
	body := `{"chat_id":"c1","user_id":"u1","chat_type":"dm","text":"run: echo $$ > ` + pidFile + `; exec sleep 300"}`
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages?wait=0", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pid := 0
	within("the tool's command runs", 60*time.Second, func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0 && bytes.Contains(procFile(pid, "cmdline"), []byte("sleep"))
	})
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })

	// the first Ctrl-C lets the running turn finish (the shutdown grace);
	// the second, sent once the first was handled (two pending SIGINTs
	// would be one), exits at once
	if err := child.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	within("the first Ctrl-C is handled", 60*time.Second, func() bool { return strings.Contains(out.String(), "press Ctrl-C again") })
	if err := child.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	st, err := child.Process.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode() != 130 {
		t.Fatalf("exit status %d after the second Ctrl-C, want 130\n%s", st.ExitCode(), out.String())
	}
	within("the tool's sleep is gone", 30*time.Second, func() bool { return !alive(pid) })
}

// procFile reads /proc/PID/NAME (nil when the process is gone).
func procFile(pid int, name string) []byte {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), name))
	return b
}

// alive reports whether pid is a process that has not exited (a zombie
// waiting for its new parent to reap it has).
func alive(pid int) bool {
	stat := procFile(pid, "stat")
	if stat == nil {
		return false
	}
	// pid (comm) STATE …: comm may hold spaces and parentheses
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
