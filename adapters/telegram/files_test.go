package telegram

import (
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
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

func TestFileURLRefuses(t *testing.T) {
	a := New(Config{Token: fuzzToken, APIEndpoint: "http://127.0.0.1:8081/bot%s/%s"})
	if u, err := a.fileURL("documents/file 1.pdf"); err != nil || u != "http://127.0.0.1:8081/file/bot"+fuzzToken+"/documents/file%201.pdf" {
		t.Errorf("fileURL = %q, %v", u, err)
	}
	for _, p := range []string{"", "/var/lib/telegram-bot-api/123/documents/file_1.pdf", "../x", "a/../../b", "a//b", "a?b", "a\\b", "a\nb"} {
		if u, err := a.fileURL(p); err == nil {
			t.Errorf("fileURL(%q) = %q, want a refusal", p, u)
		}
	}
	if _, err := a.fileURL("/abs"); err == nil || !strings.Contains(err.Error(), "--local") {
		t.Errorf("an absolute path: %v, want the --local explanation", err)
	}
}

func TestUploadMethod(t *testing.T) {
	for _, tc := range []struct {
		kind, mime string
		size       int64
		want       string
	}{
		{herald.MediaImage, "image/jpeg", 1 << 20, "sendPhoto"},
		{herald.MediaImage, "image/jpeg", maxPhotoSize + 1, "sendDocument"},
		{herald.MediaImage, "image/gif", 1 << 10, "sendDocument"},
		{herald.MediaVoice, "audio/ogg", 1 << 10, "sendVoice"},
		{herald.MediaAudio, "audio/mpeg", 1 << 10, "sendAudio"},
		{herald.MediaVideo, "video/mp4", 1 << 10, "sendVideo"},
		{herald.MediaDocument, "application/pdf", 1 << 10, "sendDocument"},
		{"", "", 1, "sendDocument"},
		{"", "image/png", 1, "sendPhoto"},
		{"", "audio/ogg", 1, "sendVoice"},
	} {
		if got, _ := uploadMethod(adapters.OutgoingFile{Type: tc.kind, MIME: tc.mime}, tc.size); got != tc.want {
			t.Errorf("uploadMethod(%s %s, %d) = %s, want %s", tc.kind, tc.mime, tc.size, got, tc.want)
		}
	}
}

func TestSplitUTF16(t *testing.T) {
	long := strings.Repeat("😀", 3000) // 6000 units
	parts := splitUTF16(long, MaxLength)
	if len(parts) != 2 || strings.Join(parts, "") != long || adapters.UTF16Len(parts[0]) != 4096 {
		t.Errorf("split into %d parts of %d units", len(parts), adapters.UTF16Len(parts[0]))
	}
	lines := strings.Repeat("a line\n", 1000) // 7000 units
	parts = splitUTF16(lines, MaxLength)
	if len(parts) != 2 || !strings.HasSuffix(parts[0], "\n") || strings.Join(parts, "") != lines {
		t.Errorf("not cut at a line break: %d parts", len(parts))
	}
	if parts := splitUTF16("short", MaxLength); len(parts) != 1 || parts[0] != "short" {
		t.Errorf("short text split: %q", parts)
	}
}
