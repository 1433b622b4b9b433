package cmdtest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// fatalRecorder is a testing.TB whose Fatal records the message and ends
// the calling goroutine, as the real one does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatal(args ...any) {
	r.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

// A failed request started on another goroutine is reported where the
// test collects it (Wait), never by that goroutine.
func TestPostAsyncReportsErrorsOnWait(t *testing.T) {
	notJSON := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<html>oops</html>")
	}))
	defer notJSON.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	for _, tc := range []struct {
		name, addr, want string
	}{
		{"not JSON", strings.TrimPrefix(notJSON.URL, "http://"), "is not JSON"},
		{"refused", closed, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &Gateway{Addr: tc.addr, Token: "t"}
			if _, _, err := g.Request(`{}`, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Request error = %v, want %q", err, tc.want)
			}
			p := g.PostAsync(`{}`, nil)
			rec := &fatalRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				p.Wait(rec)
			}()
			<-done
			if !strings.Contains(rec.msg, tc.want) {
				t.Fatalf("Wait reported %q, want %q", rec.msg, tc.want)
			}
		})
	}
}
