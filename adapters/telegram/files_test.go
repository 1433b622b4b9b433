package telegram

import (
	"net/url"
	"path"
	"strings"
	"testing"
)

func TestFileEndpoint(t *testing.T) {
	for _, tc := range []struct{ api, want string }{
		{DefaultAPIEndpoint, "https://api.telegram.org/file/bot%s/%s"},
		{"http://127.0.0.1:8081/bot%s/%s", "http://127.0.0.1:8081/file/bot%s/%s"},
		{"https://proxy.example/tg/bot%s/%s", "https://proxy.example/tg/file/bot%s/%s"},
		{"https://proxy.example/%s/%s", ""},
	} {
		got, err := fileEndpoint(tc.api)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("fileEndpoint(%q) = %q, %v; want %q", tc.api, got, err, tc.want)
		}
	}
}

const fuzzToken = "123456:SECRET-token"

// FuzzFileURL feeds file_path values (from the server's getFile answer,
// so untrusted) to fileURL: a URL it builds stays under the file
// endpoint of the bot's own token, with no query, fragment or climbing
// segment; it never panics.
func FuzzFileURL(f *testing.F) {
	for _, p := range []string{"photos/file_1.jpg", "voice/file 2.oga", "../../etc/passwd", "/var/lib/tg/x", "a/%2e%2e/b",
		"a?x=1", "a#f", "documents/ä ö.pdf", "a//b", "a\\..\\b", "music/file_3.mp3", "./x", "a/\x00"} {
		f.Add(p)
	}
	a := New(Config{Token: fuzzToken, APIEndpoint: "https://api.example/base/bot%s/%s"})
	prefix := "/base/file/bot" + fuzzToken + "/"
	f.Fuzz(func(t *testing.T, filePath string) {
		raw, err := a.fileURL(filePath)
		if err != nil {
			if strings.Contains(err.Error(), fuzzToken) {
				t.Fatalf("error carries the token: %v", err)
			}
			return
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("fileURL(%q) = %q, not a URL: %v", filePath, raw, err)
		}
		if u.Host != "api.example" || u.RawQuery != "" || u.Fragment != "" || !strings.HasPrefix(u.Path, prefix) {
			t.Fatalf("fileURL(%q) = %q leaves the file endpoint", filePath, raw)
		}
		if rest := strings.TrimPrefix(u.Path, prefix); path.Clean("/"+rest) != "/"+rest || rest != filePath {
			t.Fatalf("fileURL(%q) = %q: path %q is not the file_path", filePath, raw, rest)
		}
	})
}
