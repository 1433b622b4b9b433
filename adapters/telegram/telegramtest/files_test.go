package telegramtest

import (
	"io"
	"net/http"
	"net/url"
	"testing"
)

// The file endpoint serves a stored file to its token only; any other
// token, or a path nobody stored, is a 404, as on Telegram.
func TestDownloadChecksToken(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	f := s.AddFile("documents/file_1.txt", []byte("hello"))
	code, body := call(t, s, s.Token(), "getFile", url.Values{"file_id": {f.ID}})
	if code != 200 || body["result"].(map[string]any)["file_path"] != f.Path {
		t.Fatalf("getFile = %d %v", code, body)
	}
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/file/bot" + s.Token() + "/" + f.Path, 200, "hello"},
		{"/file/bot999:WRONG/" + f.Path, 404, ""},
		{"/file/bot" + s.Token() + "/documents/file_2.txt", 404, ""},
	} {
		res, err := http.Get(s.URL() + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.code || tc.code == 200 && string(b) != tc.body {
			t.Errorf("GET %s = %d %q, want %d %q", tc.path, res.StatusCode, b, tc.code, tc.body)
		}
	}
	if code, _ := call(t, s, s.Token(), "getFile", url.Values{"file_id": {"nope"}}); code != 400 {
		t.Errorf("getFile of an unknown file_id = %d, want 400", code)
	}
	big := s.AddLargeFile("videos/big.mp4", MaxDownload+1)
	if code, body := call(t, s, s.Token(), "getFile", url.Values{"file_id": {big.ID}}); code != 400 || body["description"] != "Bad Request: file is too big" {
		t.Errorf("getFile of a 20 MB+ file = %d %v", code, body)
	}
}
