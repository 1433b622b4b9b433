package slacktest

// files.go is the fake's file side: files a test adds are served at their
// url_private (with Slack's answer to a request without the bot token: a
// redirect to the sign-in page, an HTML page), message events that share
// them, and the three steps of an upload (files.getUploadURLExternal, the
// upload URL, files.completeUploadExternal), recorded.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// File is a file the fake holds, as Slack describes it in events.
type File struct {
	ID       string
	Name     string
	Mimetype string
	Filetype string
	// MediaDisplayType is Slack's hint for clips ("audio", "video", …).
	MediaDisplayType string
	Data             []byte
	// URLPrivate and URLPrivateDownload are where the fake serves Data.
	URLPrivate, URLPrivateDownload string
}

// Object returns the file as the JSON object Slack puts in an event's
// "files" list.
func (f File) Object() map[string]any {
	o := map[string]any{
		"id": f.ID, "created": 1700000000, "timestamp": 1700000000,
		"name": f.Name, "title": f.Name, "mimetype": f.Mimetype, "filetype": f.Filetype,
		"pretty_type": strings.ToUpper(f.Filetype), "user": "U0000001", "mode": "hosted",
		"editable": false, "is_external": false, "external_type": "", "is_public": false,
		"size": len(f.Data), "url_private": f.URLPrivate, "url_private_download": f.URLPrivateDownload,
		"permalink": "https://fake.slack.test/files/U0000001/" + f.ID + "/" + url.PathEscape(f.Name),
	}
	if f.MediaDisplayType != "" {
		o["media_display_type"] = f.MediaDisplayType
	}
	return o
}

// Stub returns the file as Slack puts it in events in Slack Connect
// channels: its id only (file_access: check_file_info), the rest to be
// read with files.info.
func (f File) Stub() map[string]any {
	return map[string]any{"id": f.ID, "mode": "file_access", "file_access": "check_file_info", "created": 0, "timestamp": 0, "user": ""}
}

// FileRequest is one GET of a file URL.
type FileRequest struct {
	Path string
	// Authorization is the header as sent ("" when none).
	Authorization string
	// Authorized says whether the fake accepted it.
	Authorized bool
}

// Upload is one file the bot shared with files.completeUploadExternal.
type Upload struct {
	FileID         string
	Channel        string // channel_id
	ThreadTS       string // thread_ts
	InitialComment string // initial_comment
	Name           string // the filename given to files.getUploadURLExternal
	Title          string
	Length         int // the length declared to files.getUploadURLExternal
	Data           []byte
	At             time.Time
}

// pendingUpload is an upload between its three steps.
type pendingUpload struct {
	name     string
	length   int
	data     []byte
	uploaded bool
}

// AddFile stores a file and returns it with the URLs it is served at.
// Filetype is derived from the name's extension.
func (s *Server) AddFile(name, mimetype string, data []byte) File {
	s.mu.Lock()
	s.seq++
	id := fmt.Sprintf("F%08d", s.seq)
	f := File{ID: id, Name: name, Mimetype: mimetype, Data: append([]byte(nil), data...),
		Filetype: strings.TrimPrefix(path.Ext(name), ".")}
	base := s.http.URL + "/files-pri/" + s.opts.TeamID + "-" + id + "/"
	f.URLPrivate = base + url.PathEscape(name)
	f.URLPrivateDownload = base + "download/" + url.PathEscape(name)
	s.files[id] = &f
	s.mu.Unlock()
	return f
}

// FileShareEvent builds the "message" event (subtype file_share) in which
// user shares files with text (which may be empty).
func (s *Server) FileShareEvent(channel, channelType, user, text, threadTS string, files ...File) map[string]any {
	ev := s.MessageEvent(channel, channelType, user, text, threadTS)
	ev["subtype"] = "file_share"
	ev["upload"] = false
	objs := make([]any, len(files))
	for i, f := range files {
		objs[i] = f.Object()
	}
	ev["files"] = objs
	return ev
}

// ShareFiles injects a file_share message.
func (s *Server) ShareFiles(channel, channelType, user, text string, files ...File) Injected {
	return s.Inject(s.FileShareEvent(channel, channelType, user, text, "", files...))
}

// signInPage is what Slack answers a file request that does not carry a
// token allowed to read the file: its sign-in page, with status 200.
const signInPage = `<!DOCTYPE html><html><head><title>Slack</title></head><body><h1>Sign in to your workspace</h1></body></html>`

// serveFile serves /files-pri/<team>-<id>/[download/]<name>. A request
// without the bot token is redirected to /?redir=<path>, which answers
// the sign-in page with 200, as files.slack.com does.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/files-pri/")
	key, _, _ := strings.Cut(rest, "/")
	_, id, _ := strings.Cut(key, "-")
	auth := r.Header.Get("Authorization")
	token, bearer := strings.CutPrefix(auth, "Bearer ")
	ok := bearer && token != "" && (s.opts.BotToken == "" || token == s.opts.BotToken)

	s.mu.Lock()
	s.fileReqs = append(s.fileReqs, FileRequest{Path: r.URL.Path, Authorization: auth, Authorized: ok})
	f := s.files[id]
	var fail *Failure
	if q := s.fails["files-pri"]; len(q) > 0 {
		fail = &q[0]
		s.fails["files-pri"] = q[1:]
	}
	s.notify()
	s.mu.Unlock()

	switch {
	case fail != nil:
		if fail.RetryAfter > 0 {
			w.Header().Set("Retry-After", fmt.Sprint(fail.RetryAfter))
		}
		http.Error(w, fail.Error, fail.Status)
	case !ok:
		http.Redirect(w, r, "/?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
	case f == nil:
		http.NotFound(w, r)
	default:
		w.Header().Set("Content-Type", f.Mimetype)
		w.Header().Set("Content-Length", fmt.Sprint(len(f.Data)))
		w.Write(f.Data)
	}
}

// serveRoot answers the sign-in page (where unauthorised file requests
// are sent).
func (s *Server) serveRoot(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, signInPage)
}

// fileInfo is files.info.
func (s *Server) fileInfo(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f := s.files[r.PostForm.Get("file")]
	s.mu.Unlock()
	if f == nil {
		writeJSON(w, 200, apiResp{"ok": false, "error": "file_not_found"})
		return
	}
	writeJSON(w, 200, apiResp{"ok": true, "file": f.Object(), "comments": []any{}, "paging": apiResp{"count": 0, "total": 0, "page": 1, "pages": 0}})
}

// getUploadURL is files.getUploadURLExternal.
func (s *Server) getUploadURL(w http.ResponseWriter, r *http.Request) {
	name := r.PostForm.Get("filename")
	var length int
	if _, err := fmt.Sscan(r.PostForm.Get("length"), &length); err != nil || length <= 0 || name == "" {
		writeJSON(w, 200, apiResp{"ok": false, "error": "invalid_arguments"})
		return
	}
	s.mu.Lock()
	s.seq++
	id := fmt.Sprintf("F%08d", s.seq)
	s.uploading[id] = &pendingUpload{name: name, length: length}
	s.mu.Unlock()
	writeJSON(w, 200, apiResp{"ok": true, "upload_url": s.http.URL + "/upload/v1/" + id, "file_id": id})
}

// serveUpload is the upload URL: a multipart POST with the bytes in the
// "file" field.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/v1/")
	s.mu.Lock()
	up := s.uploading[id]
	s.mu.Unlock()
	if up == nil || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	part, _, err := r.FormFile("file")
	if err != nil {
		http.Error(w, "no file field: "+err.Error(), http.StatusBadRequest)
		return
	}
	defer part.Close()
	data, err := io.ReadAll(part)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	up.data, up.uploaded = data, true
	s.notify()
	s.mu.Unlock()
	fmt.Fprintf(w, "OK - %d", len(data))
}

// completeUpload is files.completeUploadExternal.
func (s *Server) completeUpload(w http.ResponseWriter, r *http.Request) {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(r.PostForm.Get("files")), &files); err != nil || len(files) == 0 {
		writeJSON(w, 200, apiResp{"ok": false, "error": "invalid_arguments"})
		return
	}
	channel := r.PostForm.Get("channel_id")
	s.mu.Lock()
	defer s.mu.Unlock()
	var done []Upload
	for _, f := range files {
		up := s.uploading[f.ID]
		if up == nil || !up.uploaded {
			writeJSON(w, 200, apiResp{"ok": false, "error": "file_not_found"})
			return
		}
		if len(up.data) != up.length {
			writeJSON(w, 200, apiResp{"ok": false, "error": "file_upload_size_mismatch"})
			return
		}
		done = append(done, Upload{FileID: f.ID, Channel: channel, ThreadTS: r.PostForm.Get("thread_ts"),
			InitialComment: r.PostForm.Get("initial_comment"), Name: up.name, Title: f.Title,
			Length: up.length, Data: up.data, At: time.Now()})
	}
	out := make([]apiResp, len(done))
	for i, u := range done {
		delete(s.uploading, u.FileID)
		out[i] = apiResp{"id": u.FileID, "title": u.Title}
	}
	s.uploads = append(s.uploads, done...)
	s.notify()
	writeJSON(w, 200, apiResp{"ok": true, "files": out})
}

// FileRequests returns every GET of a file URL, in order.
func (s *Server) FileRequests() []FileRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FileRequest(nil), s.fileReqs...)
}

// FailFileNext makes the next n file downloads answer f (status and
// Retry-After).
func (s *Server) FailFileNext(n int, f Failure) {
	s.FailNext("files-pri", n, f)
}

// RateLimitUploadNext makes the next n files.getUploadURLExternal calls
// answer 429 with Retry-After: retryAfter seconds.
func (s *Server) RateLimitUploadNext(n, retryAfter int) {
	s.FailNext("files.getUploadURLExternal", n, Failure{Status: http.StatusTooManyRequests, RetryAfter: retryAfter})
}

// Uploads returns the files the bot shared, in order.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Upload(nil), s.uploads...)
}

// WaitUploads waits until the bot has shared at least n files and returns
// them all.
func (s *Server) WaitUploads(ctx context.Context, n int) ([]Upload, error) {
	err := s.wait(ctx, fmt.Sprintf("%d uploads", n), func() bool { return len(s.uploads) >= n })
	return s.Uploads(), err
}
