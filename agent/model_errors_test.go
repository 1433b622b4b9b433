package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldgw/herald/agent/agenttest"
)

// nginxPage is what a reverse proxy answers when the model server behind
// it is down.
const nginxPage = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n"

// A server that answers an error with an HTML page (not OpenAI's error
// object) gives one line: the status, the URL, a short reason; the page
// itself reaches neither the error nor the log.
func TestHTMLErrorPageIsOneLine(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "streamed"}[stream], func(t *testing.T) {
			page := agenttest.Reply{Status: 502, Body: nginxPage, ContentType: "text/html"}
			srv := agenttest.New(t, page, page, page, page)
			a := httpAgent(t, srv)
			var lb logBuffer
			a.Log = lb.logger()
			o := Options{}
			if stream {
				o.Stream = func(string) {}
			}
			_, err := a.Run(context.Background(), "hi", o)
			if err == nil {
				t.Fatal("no error")
			}
			var he *HTTPError
			if !errors.As(err, &he) || he.StatusCode != 502 {
				t.Fatalf("not an HTTPError with status 502: %#v", err)
			}
			want := "the model endpoint " + srv.BaseURL() + "/chat/completions answered 502 Bad Gateway: nginx/1.24.0"
			if !strings.HasSuffix(err.Error(), want) || strings.ContainsAny(err.Error(), "\r\n<") {
				t.Errorf("error %q, want it to end with %q, on one line", err, want)
			}
			if n := len(srv.Requests()); n != 1+DefaultRetries {
				t.Errorf("%d requests, want %d (a 502 is retried)", n, 1+DefaultRetries)
			}
			log := lb.String()
			if strings.Contains(log, "<") || strings.Contains(log, "WARN") || strings.Contains(log, srv.BaseURL()) {
				t.Errorf("the page, a warning or the full reason in the log:\n%s", log)
			}
			// each retry is a notice naming the status only
			if n := strings.Count(log, `msg="model call failed; retrying"`); n != DefaultRetries || strings.Count(log, `status="502 Bad Gateway"`) != n {
				t.Errorf("want %d retry notices with the status:\n%s", DefaultRetries, log)
			}
		})
	}
}

func TestBodyReason(t *testing.T) {
	long := strings.Repeat("overloaded ", 40)
	for _, tc := range []struct{ name, body, status, want string }{
		{"nginx page", nginxPage, "502 Bad Gateway", "nginx/1.24.0"},
		{"plain text", "upstream connect error\nor disconnect", "503 Service Unavailable", "upstream connect error or disconnect"},
		{"JSON of another shape", `{"detail":"Not Found"}`, "404 Not Found", `{"detail":"Not Found"}`},
		{"scripts and entities", "<html><head><style>p{}</style></head><body><script>var x=1</script><p>Tom &amp; Jerry&#39;s</p></body></html>", "500", "Tom & Jerry's"},
		{"long", long, "503", strings.TrimSpace(long[:reasonSize-1]) + "…"},
		{"empty", "", "502 Bad Gateway", ""},
		{"only the status", "<h1>502 Bad Gateway</h1>", "502 Bad Gateway", ""},
		{"not UTF-8", "bad \xff byte", "500", "bad \uFFFD byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bodyReason([]byte(tc.body), tc.status); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Whatever an endpoint answers, the reason is valid UTF-8, one line, and
// at most reasonSize characters.
func FuzzBodyReason(f *testing.F) {
	f.Add([]byte(nginxPage), "502 Bad Gateway")
	f.Add([]byte(`{"error":"x"}`), "")
	f.Add([]byte("<script>never closed"), "500")
	f.Fuzz(func(t *testing.T, body []byte, status string) {
		r := bodyReason(body, status)
		if !utf8.ValidString(r) || strings.ContainsAny(r, "\r\n") || utf8.RuneCountInString(r) > reasonSize {
			t.Fatalf("reason %q", r)
		}
	})
}
