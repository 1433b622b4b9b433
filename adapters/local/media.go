package local

// media.go: files in and out on the local platform. POST /v1/messages may
// carry "media": [{"name","mime","data"}] with the bytes in base64; each
// is checked against MaxUpload before it is decoded, held in memory until
// the gateway fetches it (Fetch, once) or for pendingTTL, and announced as
// a herald.Media whose Ref is its id. Files the gateway sends (SendFile)
// are copied into FilesDir (0600) and returned with the replies as
// {"text": caption, "file": {"id","name","mime","size","url"}}; GET
// /v1/files/{id} (with the token) downloads one, for filesTTL.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Defaults of the media settings.
const (
	// DefaultMaxUpload bounds the decoded bytes of one message's
	// attachments.
	DefaultMaxUpload = 32 << 20
	// DefaultMaxFileSize bounds a file the gateway sends.
	DefaultMaxFileSize = 50 << 20
	// MaxAttachments bounds the attachments of one message.
	MaxAttachments = 10
	pendingTTL     = time.Hour
	filesTTL       = 24 * time.Hour
	maxFiles       = 200
)

var (
	_ adapters.Fetcher    = (*Adapter)(nil)
	_ adapters.FileSender = (*Adapter)(nil)
)

// FileRef is a file the gateway sent, as a reply carries it.
type FileRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	MIME string `json:"mime"`
	Size int64  `json:"size"`
	// URL is where to GET it (with the token), relative to the API.
	URL string `json:"url"`
}

type inMedia struct {
	Name string `json:"name"`
	MIME string `json:"mime"`
	Data string `json:"data"`
}

// mediaStore holds uploaded attachments until fetched, and the files sent
// back.
type mediaStore struct {
	mu      sync.Mutex
	pending map[string]pendingMedia
	held    int64 // bytes in pending
	files   map[string]sentFile
}

type pendingMedia struct {
	data []byte
	at   time.Time
}

type sentFile struct {
	FileRef
	chat string
	path string
	at   time.Time
}

func (a *Adapter) maxUpload() int64 {
	if a.cfg.MaxUpload > 0 {
		return a.cfg.MaxUpload
	}
	return DefaultMaxUpload
}

// bodyLimit is the largest /v1/messages body: a message and its
// attachments in base64.
func (a *Adapter) bodyLimit() int64 {
	return MaxBody + int64(base64.StdEncoding.EncodedLen(int(a.maxUpload()))) + MaxAttachments*1024
}

// errUpload is a refused attachment: status says which answer.
type errUpload struct {
	status int
	msg    string
}

func (e *errUpload) Error() string { return e.msg }

// takeMedia checks and decodes a message's attachments and holds them for
// Fetch.
func (a *Adapter) takeMedia(in []inMedia) ([]herald.Media, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > MaxAttachments {
		return nil, &errUpload{http.StatusBadRequest, fmt.Sprintf(`"media" has %d attachments; at most %d are allowed`, len(in), MaxAttachments)}
	}
	limit := a.maxUpload()
	var total int64
	for i, m := range in {
		// checked before anything is decoded
		total += int64(base64.StdEncoding.DecodedLen(len(m.Data)))
		if total > limit {
			return nil, &errUpload{http.StatusRequestEntityTooLarge, fmt.Sprintf("media[%d] (%s): attachments of one message may hold at most %d bytes", i, m.Name, limit)}
		}
	}
	out := make([]herald.Media, 0, len(in))
	decoded := make([][]byte, 0, len(in))
	for i, m := range in {
		data, err := base64.StdEncoding.DecodeString(m.Data)
		if err != nil {
			return nil, &errUpload{http.StatusBadRequest, fmt.Sprintf("media[%d] (%s): \"data\" is not base64: %v", i, m.Name, err)}
		}
		t, _, _ := mime.ParseMediaType(m.MIME)
		out = append(out, herald.Media{Type: herald.MediaType(t), MIME: t, Name: m.Name, Size: int64(len(data))})
		decoded = append(decoded, data)
	}
	st := &a.media
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expirePending(time.Now())
	var size int64
	for _, d := range decoded {
		size += int64(len(d))
	}
	if st.held+size > 4*limit {
		return nil, &errUpload{http.StatusServiceUnavailable, "too many attachments are waiting to be fetched; try again in a moment"}
	}
	if st.pending == nil {
		st.pending = map[string]pendingMedia{}
	}
	for i := range out {
		id := "u" + rand.Text()
		st.pending[id] = pendingMedia{data: decoded[i], at: time.Now()}
		st.held += int64(len(decoded[i]))
		out[i].Ref = id
	}
	return out, nil
}

// expirePending drops attachments nobody fetched; call with mu held.
func (st *mediaStore) expirePending(now time.Time) {
	for id, p := range st.pending {
		if now.Sub(p.at) > pendingTTL {
			st.held -= int64(len(p.data))
			delete(st.pending, id)
		}
	}
}

// Fetch implements adapters.Fetcher: the bytes of an attachment posted
// with a message, once.
func (a *Adapter) Fetch(ctx context.Context, m herald.Media) (io.ReadCloser, error) {
	st := &a.media
	st.mu.Lock()
	p, ok := st.pending[m.Ref]
	if ok {
		delete(st.pending, m.Ref)
		st.held -= int64(len(p.data))
	}
	st.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("local: attachment %q is not held any more (already fetched, older than %s, or posted before a restart)", m.Name, pendingTTL)
	}
	return io.NopCloser(bytes.NewReader(p.data)), nil
}

// MaxFileSize implements adapters.FileSender.
func (a *Adapter) MaxFileSize() int64 {
	if a.cfg.MaxFileSize > 0 {
		return a.cfg.MaxFileSize
	}
	return DefaultMaxFileSize
}

// SendFile implements adapters.FileSender: the file is copied into
// FilesDir and returned, with its caption, to the request that caused it.
func (a *Adapter) SendFile(ctx context.Context, to herald.Target, f adapters.OutgoingFile) (adapters.Sent, error) {
	if a.cfg.FilesDir == "" {
		return adapters.Sent{}, errors.New("local: no directory for sent files (Config.FilesDir)")
	}
	if err := os.MkdirAll(a.cfg.FilesDir, 0o700); err != nil {
		return adapters.Sent{}, fmt.Errorf("local: %w", err)
	}
	a.expireFiles(time.Now())
	id := "f" + rand.Text()
	dst := filepath.Join(a.cfg.FilesDir, id)
	n, err := copyFile(dst, f.Path, a.MaxFileSize())
	if err != nil {
		os.Remove(dst)
		return adapters.Sent{}, fmt.Errorf("local: store %s: %w", f.Name, err)
	}
	ref := FileRef{ID: id, Name: f.Name, MIME: f.MIME, Size: n, URL: "/v1/files/" + id}
	st := &a.media
	st.mu.Lock()
	if st.files == nil {
		st.files = map[string]sentFile{}
	}
	st.files[id] = sentFile{FileRef: ref, chat: to.ChatID, path: dst, at: time.Now()}
	st.mu.Unlock()
	rp := Reply{Text: f.Caption, File: &ref}
	if rp.ID, err = a.keep(ctx, to, rp); err != nil {
		// not sent: the copy is not served either
		st.mu.Lock()
		delete(st.files, id)
		st.mu.Unlock()
		os.Remove(dst)
		return adapters.Sent{}, err
	}
	a.deliver(to, f.Cause, rp)
	return adapters.Sent{MessageID: id}, nil
}

// copyFile copies src to a new file dst (0600), at most limit bytes.
func copyFile(dst, src string, limit int64) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, io.LimitReader(in, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fmt.Errorf("over %d bytes", limit)
	}
	return n, err
}

// expireFiles removes sent files older than filesTTL, and the oldest over
// maxFiles.
func (a *Adapter) expireFiles(now time.Time) {
	st := &a.media
	st.mu.Lock()
	var gone []string
	for id, f := range st.files {
		if now.Sub(f.at) > filesTTL {
			gone = append(gone, f.path)
			delete(st.files, id)
		}
	}
	for len(st.files) >= maxFiles {
		oldest := ""
		for id, f := range st.files {
			if oldest == "" || f.at.Before(st.files[oldest].at) {
				oldest = id
			}
		}
		gone = append(gone, st.files[oldest].path)
		delete(st.files, oldest)
	}
	st.mu.Unlock()
	for _, p := range gone {
		os.Remove(p)
	}
}

// getFile serves GET /v1/files/{id}: always as a download, never rendered
// in the page's origin.
func (a *Adapter) getFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	st := &a.media
	st.mu.Lock()
	f, ok := st.files[id]
	st.mu.Unlock()
	if !ok {
		writeErr(w, http.StatusNotFound, "no such file (files are kept for a day, and not across a restart)")
		return
	}
	file, err := os.Open(f.path)
	if err != nil {
		writeErr(w, http.StatusNotFound, "file is gone: "+err.Error())
		return
	}
	defer file.Close()
	ct := f.MIME
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.FormatInt(f.Size, 10))
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": strings.ToValidUTF8(f.Name, "_")}))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "sandbox")
	io.Copy(w, file)
}
