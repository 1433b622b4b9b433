package telegramtest

// files.go is the file side of the fake: files a bot can download
// (getFile, then GET /file/bot<token>/<file_path>), updates that carry
// them, and the multipart uploads of sendPhoto, sendDocument, sendVoice,
// sendAudio and sendVideo.

import (
	"bytes"
	"fmt"
	"image"
	_ "image/gif" // DecodeConfig of uploaded photos
	_ "image/jpeg"
	_ "image/png"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Bot API's size rules for bots.
const (
	MaxDownload = 20 << 20 // getFile refuses bigger files
	MaxUpload   = 50 << 20 // multipart uploads
)

// File is a file the fake serves, as getFile describes it.
type File struct {
	ID       string // file_id
	UniqueID string // file_unique_id
	Path     string // file_path
	Size     int
	data     []byte
}

// AddFile stores data under file_path path (e.g. "photos/file_1.jpg")
// and returns its description.
func (s *Server) AddFile(path string, data []byte) File {
	return s.addFile(path, len(data), data)
}

// AddLargeFile stores a file of size bytes with no content, for size
// checks (getFile refuses it when over MaxDownload, as Telegram does).
func (s *Server) AddLargeFile(path string, size int) File {
	return s.addFile(path, size, nil)
}

func (s *Server) addFile(path string, size int, data []byte) File {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextFile++
	f := File{
		ID:       fmt.Sprintf("BQACAgIAAxkBAAI%04d", s.nextFile),
		UniqueID: fmt.Sprintf("AgAD%04d", s.nextFile),
		Path:     path, Size: size, data: data,
	}
	s.files[f.ID] = f
	return f
}

// Media is an attachment on an injected message.
type Media struct {
	// Kind is the message field: photo, voice, audio, video, video_note,
	// animation, document or sticker.
	Kind string
	File File
	// Name and MIME are file_name and mime_type where Telegram sends them.
	Name, MIME string
	// Animated and Video mark a sticker as animated (.tgs) or a video
	// sticker (.webm).
	Animated, Video bool
	Caption         string
}

// MediaMessage is the message object of a private chat message from
// from carrying m, shaped as Telegram shapes each kind (a photo is a list
// of sizes, smallest first; an animation also fills document).
func MediaMessage(from User, m Media) map[string]any {
	msg := map[string]any{
		"from": from.json(),
		"chat": map[string]any{"id": from.ID, "type": "private", "first_name": from.First, "username": from.UserName},
	}
	if m.Caption != "" {
		msg["caption"] = m.Caption
	}
	f := m.File
	obj := map[string]any{"file_id": f.ID, "file_unique_id": f.UniqueID, "file_size": f.Size}
	if m.Name != "" {
		obj["file_name"] = m.Name
	}
	if m.MIME != "" {
		obj["mime_type"] = m.MIME
	}
	switch m.Kind {
	case "photo":
		thumb := map[string]any{"file_id": f.ID + "-thumb", "file_unique_id": f.UniqueID + "-t", "file_size": 1234, "width": 90, "height": 68}
		msg["photo"] = []any{thumb, map[string]any{"file_id": f.ID, "file_unique_id": f.UniqueID, "file_size": f.Size, "width": 1280, "height": 960}}
		return msg
	case "voice", "audio":
		obj["duration"] = 3
	case "video", "animation":
		obj["duration"], obj["width"], obj["height"] = 3, 640, 480
	case "video_note":
		obj["duration"], obj["length"] = 3, 240
	case "sticker":
		obj["width"], obj["height"], obj["emoji"] = 512, 512, "👍"
		obj["is_animated"], obj["is_video"] = m.Animated, m.Video
	}
	msg[m.Kind] = obj
	if m.Kind == "animation" {
		msg["document"] = obj
	}
	return msg
}

// DMMedia queues a private message from from carrying m.
func (s *Server) DMMedia(from User, m Media) Injected {
	return s.AddUpdate(map[string]any{"message": MediaMessage(from, m)})
}

// parseForm reads a request's form, multipart uploads included (up to
// MaxUpload plus room for the other fields).
func parseForm(r *http.Request) error {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return r.ParseForm()
	}
	r.Body = http.MaxBytesReader(nil, r.Body, MaxUpload+1<<20)
	return r.ParseMultipartForm(1 << 20)
}

func (s *Server) getFile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.files[r.Form.Get("file_id")]
	s.mu.Unlock()
	switch {
	case !ok:
		writeErr(w, Failure{Code: 400, Description: "Bad Request: invalid file_id"})
		return
	case f.Size > MaxDownload:
		writeErr(w, Failure{Code: 400, Description: "Bad Request: file is too big"})
		return
	}
	s.record(Call{Method: "getFile", Form: r.Form})
	writeOK(w, map[string]any{"file_id": f.ID, "file_unique_id": f.UniqueID, "file_size": f.Size, "file_path": f.Path})
}

// download serves GET /file/bot<token>/<file_path>. A wrong token is a
// 404, as on Telegram's file server. Requests are counted (Attempts,
// Fail and Drop) under the method name "download".
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	s.answering.RLock()
	defer s.answering.RUnlock()
	if s.faulted(w, "download") {
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"+s.opts.Token+"/")
	if !ok || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	var found *File
	for _, f := range s.files {
		if f.Path == rest && f.data != nil {
			found = &f
			break
		}
	}
	s.mu.Unlock()
	if found == nil {
		http.NotFound(w, r)
		return
	}
	s.record(Call{Method: "download", Text: rest})
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(found.data)))
	w.Write(found.data)
}

// upload answers sendPhoto, sendDocument, sendVoice, sendAudio and
// sendVideo: the file must come as a multipart part named after the
// method ("photo" for sendPhoto), the caption passes Telegram's entity
// and 1024-unit checks, and a photo must have dimensions Telegram takes
// (width + height at most 10000, a ratio of at most 20).
func (s *Server) upload(w http.ResponseWriter, r *http.Request, method string) {
	field := strings.ToLower(strings.TrimPrefix(method, "send"))
	form := r.Form
	chat, caption, mode := form.Get("chat_id"), form.Get("caption"), form.Get("parse_mode")
	if chat == "" {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: chat_id is empty"})
		return
	}
	if r.MultipartForm == nil || len(r.MultipartForm.File[field]) == 0 {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: there is no " + field + " in the request"})
		return
	}
	fh := r.MultipartForm.File[field][0]
	part, err := fh.Open()
	if err != nil {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: " + err.Error()})
		return
	}
	data, err := io.ReadAll(part)
	part.Close()
	if err != nil {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: " + err.Error()})
		return
	}
	if len(data) > MaxUpload {
		writeErr(w, Failure{Code: 413, Description: "Request Entity Too Large"})
		return
	}
	if fail, ok := checkCaption(caption, mode); !ok {
		writeErr(w, fail)
		return
	}
	if field == "photo" {
		if fail, ok := checkPhoto(data); !ok {
			writeErr(w, fail)
			return
		}
	}
	s.mu.Lock()
	s.nextMsgID++
	id := strconv.Itoa(s.nextMsgID)
	s.mu.Unlock()
	thread := form.Get("message_thread_id")
	s.record(Call{Method: method, ChatID: chat, ThreadID: thread, MessageID: id, Caption: caption, ParseMode: mode,
		ReplyTo: form.Get("reply_to_message_id"), FileField: field, FileName: fh.Filename, File: data, Form: form})
	msg := messageJSON(chat, id, "", thread)
	delete(msg, "text")
	if caption != "" {
		msg["caption"] = caption
	}
	sent := map[string]any{"file_id": "sent-" + id, "file_unique_id": "u-" + id, "file_size": len(data)}
	if field == "photo" {
		msg[field] = []any{sent} // a photo is a list of sizes
	} else {
		msg[field] = sent
	}
	msg["date"] = time.Now().Unix()
	writeOK(w, msg)
}

func checkPhoto(data []byte) (Failure, bool) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Failure{Code: 400, Description: "Bad Request: IMAGE_PROCESS_FAILED"}, false
	}
	lo, hi := min(cfg.Width, cfg.Height), max(cfg.Width, cfg.Height)
	if cfg.Width+cfg.Height > 10000 || lo == 0 || hi/lo > 20 {
		return Failure{Code: 400, Description: "Bad Request: PHOTO_INVALID_DIMENSIONS"}, false
	}
	return Failure{}, true
}
