package slacktest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/heraldgw/herald/adapters/slack/slacktest"
)

// get fetches u with the given Authorization header ("" for none),
// following redirects as browsers and HTTP clients do.
func get(t *testing.T, u, auth string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func TestFilesServedOnlyWithTheBotToken(t *testing.T) {
	srv := slacktest.New(slacktest.Options{BotToken: "xoxb-right"})
	defer srv.Close()
	f := srv.AddFile("a b.txt", "text/plain", []byte("content"))
	if !strings.HasPrefix(f.URLPrivate, srv.URL()+"/files-pri/") || !strings.Contains(f.URLPrivateDownload, "/download/") {
		t.Fatalf("file = %+v", f)
	}
	for _, u := range []string{f.URLPrivate, f.URLPrivateDownload} {
		resp, body := get(t, u, "Bearer xoxb-right")
		if resp.StatusCode != 200 || body != "content" || resp.Header.Get("Content-Type") != "text/plain" {
			t.Errorf("GET %s = %d %q", u, resp.StatusCode, body)
		}
	}
	// without the token, or with another: Slack's sign-in page, 200 HTML,
	// after a redirect that names the file's path
	for _, auth := range []string{"", "Bearer xoxb-wrong", "xoxb-right"} {
		resp, body := get(t, f.URLPrivate, auth)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(body, "Sign in") || resp.Request.URL.Query().Get("redir") == "" {
			t.Errorf("GET with %q = %d %s %q", auth, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	reqs := srv.FileRequests()
	if len(reqs) != 5 || !reqs[0].Authorized || reqs[2].Authorized || reqs[3].Authorization != "Bearer xoxb-wrong" {
		t.Errorf("file requests = %+v", reqs)
	}
	ev := srv.FileShareEvent("C1", "channel", "U1", "", "", f)
	files, _ := ev["files"].([]any)
	if ev["subtype"] != "file_share" || len(files) != 1 {
		t.Errorf("event = %+v", ev)
	}
}
