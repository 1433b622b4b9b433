package telegramtest

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
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

// postFile sends one multipart upload, as the library does.
func postFile(t *testing.T, s *Server, method, field, name string, data []byte, form map[string]string) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range form {
		mw.WriteField(k, v)
	}
	if field != "" {
		part, _ := mw.CreateFormFile(field, name)
		part.Write(data)
	}
	mw.Close()
	res, err := http.Post(s.URL()+"/bot"+s.Token()+"/"+method, mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func pngBytes(w, h int) []byte {
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h)))
	return buf.Bytes()
}

// Uploads are recorded with their chat, thread, caption and file; what
// Telegram refuses is refused, and injected faults apply.
func TestUploads(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	form := map[string]string{"chat_id": "-100", "message_thread_id": "7", "caption": "<b>hi</b>", "parse_mode": "HTML", "reply_to_message_id": "5"}
	code, out := postFile(t, s, "sendDocument", "document", "a.pdf", []byte("%PDF"), form)
	if code != 200 || out["result"].(map[string]any)["caption"] != "<b>hi</b>" {
		t.Fatalf("sendDocument = %d %v", code, out)
	}
	c := s.Calls("sendDocument")
	if len(c) != 1 || c[0].ChatID != "-100" || c[0].ThreadID != "7" || c[0].Caption != "<b>hi</b>" || c[0].ReplyTo != "5" ||
		c[0].FileField != "document" || c[0].FileName != "a.pdf" || string(c[0].File) != "%PDF" {
		t.Errorf("recorded %+v", c)
	}
	if code, _ := postFile(t, s, "sendPhoto", "photo", "p.png", pngBytes(40, 30), map[string]string{"chat_id": "1"}); code != 200 {
		t.Errorf("a good photo: %d", code)
	}
	for _, tc := range []struct {
		name, method, field string
		data                []byte
		form                map[string]string
		desc                string
	}{
		{"no file", "sendVoice", "", nil, map[string]string{"chat_id": "1"}, "there is no voice"},
		{"wrong field", "sendVoice", "document", []byte("x"), map[string]string{"chat_id": "1"}, "there is no voice"},
		{"no chat", "sendAudio", "audio", []byte("x"), nil, "chat_id is empty"},
		{"long caption", "sendVideo", "video", []byte("x"), map[string]string{"chat_id": "1", "caption": strings.Repeat("x", 1025)}, "caption is too long"},
		{"bad markup", "sendVideo", "video", []byte("x"), map[string]string{"chat_id": "1", "caption": "<b>x", "parse_mode": "HTML"}, "can't parse entities"},
		{"wide photo", "sendPhoto", "photo", pngBytes(2100, 100), map[string]string{"chat_id": "1"}, "PHOTO_INVALID_DIMENSIONS"},
		{"not an image", "sendPhoto", "photo", []byte("text"), map[string]string{"chat_id": "1"}, "IMAGE_PROCESS_FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := postFile(t, s, tc.method, tc.field, "f", tc.data, tc.form)
			if d, _ := out["description"].(string); code != 400 || !strings.Contains(d, tc.desc) {
				t.Errorf("= %d %v, want 400 %q", code, out, tc.desc)
			}
		})
	}
	s.RateLimit("sendAudio", 1, 3)
	code, out = postFile(t, s, "sendAudio", "audio", "a.mp3", []byte("ID3"), map[string]string{"chat_id": "1"})
	if code != 429 || out["parameters"].(map[string]any)["retry_after"] != float64(3) {
		t.Errorf("rate limited upload = %d %v", code, out)
	}
	if n := len(s.Calls("sendAudio")); n != 0 {
		t.Errorf("%d sendAudio calls recorded, want none", n)
	}
}
