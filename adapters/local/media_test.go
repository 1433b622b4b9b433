package local

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// mediaSink keeps each message and answers at once, sending a file back
// through the adapter when the text asks for one.
type mediaSink struct {
	a    *Adapter
	file string
	got  chan herald.Message
}

func (s *mediaSink) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	s.got <- m
	if s.file != "" {
		s.a.SendFile(ctx, m.Source.Target(), adapters.OutgoingFile{Path: s.file, Name: "chart.png", MIME: "image/png", Size: 4, Caption: "here", Cause: m.ID})
	}
	return adapters.Resolved(adapters.Outcome{Status: adapters.StatusDone})
}

func post(t *testing.T, srv *httptest.Server, path string, body any) (*http.Response, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

func TestMediaInAndFilesOut(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "chart.png")
	os.WriteFile(src, []byte("\x89PNG"), 0o600)
	a := New(Config{Token: "tok", MaxUpload: 64, FilesDir: filepath.Join(dir, "files")})
	sink := &mediaSink{a: a, file: src, got: make(chan herald.Message, 4)}
	srv := httptest.NewServer(a.Handler(sink))
	defer srv.Close()

	data := []byte("hello, attached")
	resp, body := post(t, srv, "/v1/messages", map[string]any{"chat_id": "c1", "user_id": "u1",
		"media": []map[string]string{{"name": "../../.env", "mime": "text/plain; charset=utf-8", "data": base64.StdEncoding.EncodeToString(data)}}})
	if resp.StatusCode != 200 {
		t.Fatalf("POST = %d %s", resp.StatusCode, body)
	}
	m := <-sink.got
	if m.Text != "" || len(m.Media) != 1 || m.Media[0].Type != herald.MediaDocument || m.Media[0].MIME != "text/plain" || m.Media[0].Size != int64(len(data)) || m.Media[0].Ref == "" {
		t.Fatalf("message = %+v", m)
	}
	rc, err := a.Fetch(context.Background(), m.Media[0])
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	if string(got) != string(data) {
		t.Fatalf("Fetch = %q", got)
	}
	if _, err := a.Fetch(context.Background(), m.Media[0]); err == nil {
		t.Fatal("an attachment was fetched twice")
	}

	// the reply carries the file, which the client can download
	var out struct {
		Replies []Reply `json:"replies"`
	}
	json.Unmarshal(body, &out)
	if len(out.Replies) != 1 || out.Replies[0].File == nil || out.Replies[0].Text != "here" || out.Replies[0].File.Name != "chart.png" {
		t.Fatalf("replies = %s", body)
	}
	req, _ := http.NewRequest("GET", srv.URL+out.Replies[0].File.URL, nil)
	if r, _ := http.DefaultClient.Do(req); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET without the token = %d", r.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer tok")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	fb, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if string(fb) != "\x89PNG" || !strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment") || r.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET file = %q %v", fb, r.Header)
	}
	if fi, err := os.Stat(filepath.Join(dir, "files", out.Replies[0].File.ID)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stored file: %v %v", fi, err)
	}
}

func TestMediaOverTheUploadCapRefusedBeforeDecoding(t *testing.T) {
	a := New(Config{Token: "tok", MaxUpload: 16})
	sink := &mediaSink{a: a, got: make(chan herald.Message, 4)}
	srv := httptest.NewServer(a.Handler(sink))
	defer srv.Close()
	resp, body := post(t, srv, "/v1/messages", map[string]any{"chat_id": "c1", "user_id": "u1",
		"media": []map[string]string{{"name": "big.bin", "data": strings.Repeat("!", 40)}}}) // not even base64
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "at most 16 bytes") {
		t.Fatalf("POST = %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, srv, "/v1/messages", map[string]any{"chat_id": "c1", "user_id": "u1",
		"media": []map[string]string{{"name": "x", "data": "%%%%"}}})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "not base64") {
		t.Fatalf("POST bad base64 = %d %s", resp.StatusCode, body)
	}
	if len(sink.got) != 0 {
		t.Fatal("a refused message reached the gateway")
	}
}
