package gateway

// media.go: inbound attachments. After auth, before the agent, each
// attachment of a message is fetched once through its adapter's Fetcher
// into $HERALD_HOME/media/<session>/ (directory 0700, files 0600), under
// a size cap, with its type sniffed from its bytes and its name
// sanitised. The message the model reads (and the store keeps) is text:
// the user's words, voice transcripts, and one attachment line per file
// (agent.AttachmentLine); images travel as image parts of the request
// only. What goes wrong (over the cap, a failed download, speech-to-text
// off) is told to the user and to the model, and the turn goes on. The
// cache of a session goes when the session ends.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
)

// DefaultMediaMaxBytes caps one attachment when MediaConfig sets none.
const DefaultMediaMaxBytes = 20 << 20

// InlineDocumentMax is the largest text document whose text is put into
// the user's message (it is stored with the session's history).
const InlineDocumentMax = 100 << 10

// fetchTimeout bounds one attachment's download; transcribeTimeout one
// transcription.
const (
	fetchTimeout      = 2 * time.Minute
	transcribeTimeout = 3 * time.Minute
)

// Transcriber turns a voice note or audio file into text
// (agent.OpenAITranscriber).
type Transcriber interface {
	Transcribe(ctx context.Context, path string) (string, error)
}

// MediaConfig configures attachments in and out.
type MediaConfig struct {
	// Dir is the media cache ($HERALD_HOME/media); "" downloads nothing:
	// attachments are only announced.
	Dir string
	// MaxBytes caps one inbound attachment (default
	// DefaultMediaMaxBytes).
	MaxBytes int64
	// Transcriber is speech-to-text; nil means it is off.
	Transcriber Transcriber
	// SendPaths confines the files the agent sends (send_file, MEDIA:
	// lines); nil sends none.
	SendPaths *agent.Paths
}

// STTOffText tells the user a voice note was not transcribed.
const STTOffText = "🎤 Voice notes are not transcribed here: speech-to-text is off (set stt.enabled: true in config.yaml). The assistant was told a voice note arrived."

// prepared is an inbound message made ready for the agent.
type prepared struct {
	// prompt is the user's message as the model reads it and the store
	// keeps it.
	prompt string
	// media are the attachments, with Path set for those downloaded.
	media []herald.Media
	// notes are told to the user before the answer.
	notes []string
}

// prepare fetches m's attachments into the session's cache and writes the
// prompt.
func (r *Runner) prepare(ctx context.Context, sessionID string, m herald.Message) prepared {
	p := prepared{prompt: m.Text}
	if len(m.Media) == 0 {
		return p
	}
	var transcripts, lines, inlined []string
	sttOff := false
	for _, md := range m.Media {
		a := r.attach(ctx, sessionID, m.Source.Platform, md)
		p.media = append(p.media, a.media)
		lines = append(lines, a.line)
		if a.note != "" {
			p.notes = append(p.notes, a.note)
		}
		if a.transcript != "" {
			transcripts = append(transcripts, agent.TranscriptPrefix+a.transcript)
		}
		if a.inline != "" {
			inlined = append(inlined, a.inline)
		}
		sttOff = sttOff || a.sttOff
	}
	if sttOff {
		p.notes = append(p.notes, STTOffText)
	}
	words := strings.Join(append(transcripts, m.Text), "\n")
	words = strings.TrimSpace(words)
	p.prompt = strings.Join(lines, "\n")
	if words != "" {
		p.prompt = words + "\n\n" + p.prompt
	}
	if len(inlined) > 0 {
		p.prompt += "\n\n" + strings.Join(inlined, "\n\n")
	}
	return p
}

// attached is what became of one attachment.
type attached struct {
	media      herald.Media
	line       string // for the model
	note       string // for the user
	transcript string
	inline     string // a text document's text, framed
	sttOff     bool
}

// attach fetches one attachment and says what became of it.
func (r *Runner) attach(ctx context.Context, sessionID string, platform herald.Platform, md herald.Media) attached {
	md.Path = ""
	md.Name = withExtension(SafeName(md.Name), md.MIME)
	if md.Type == "" {
		md.Type = herald.MediaType(md.MIME)
	}
	out := attached{media: md}
	limit := r.mediaMax()
	notDownloaded := func(why, note string) attached {
		out.line = agent.AttachmentLine(md.Type, md.Name, md.MIME, md.Size, "not downloaded: "+why)
		out.note = note
		return out
	}
	if r.cfg.Media.Dir == "" {
		return notDownloaded("the media cache is off", "")
	}
	fetcher, ok := r.adapters[platform].(adapters.Fetcher)
	if !ok {
		return notDownloaded("herald cannot fetch files from "+string(platform), fmt.Sprintf("⚠️ %s was not downloaded: herald cannot fetch files from %s.", md.Name, platform))
	}
	overNote := fmt.Sprintf("⚠️ %s is over the %s limit for attachments (media.max_bytes), so it was not downloaded.", md.Name, agent.HumanSize(limit))
	if md.Size > limit {
		return notDownloaded("over the "+agent.HumanSize(limit)+" limit", overNote)
	}
	path, n, err := r.download(ctx, fetcher, sessionID, md, limit)
	switch {
	case errors.Is(err, errTooLarge):
		return notDownloaded("over the "+agent.HumanSize(limit)+" limit", overNote)
	case err != nil:
		msg := r.cfg.Redactor.Redact(err.Error())
		r.log.Warn("attachment not downloaded", "platform", platform, "session_id", sessionID, "name", md.Name, "err", msg)
		return notDownloaded("the download failed", fmt.Sprintf("⚠️ Could not download %s (%s).", md.Name, msg))
	}
	head := make([]byte, 512)
	if f, err := os.Open(path); err == nil {
		k, _ := io.ReadFull(f, head)
		head = head[:k]
		f.Close()
	}
	md.MIME = sniffMIME(head, md.Name, md.MIME)
	md.Type = mediaKind(md.Type, md.MIME)
	md.Path, md.Size, md.Name = path, n, filepath.Base(path)
	out.media = md
	detail := "saved at " + path
	switch md.Type {
	case herald.MediaVoice, herald.MediaAudio:
		detail += r.transcribe(ctx, &out)
	case herald.MediaDocument:
		if text, ok := inlineText(path, md.MIME, n); ok {
			detail += "; its text follows"
			out.inline = fmt.Sprintf("--- %s ---\n%s\n--- end of %s ---", md.Name, strings.TrimRight(text, "\n"), md.Name)
		}
	}
	out.line = agent.AttachmentLine(md.Type, md.Name, md.MIME, md.Size, detail)
	return out
}

// transcribe fills out's transcript (or says why there is none) and
// returns the detail for the attachment line.
func (r *Runner) transcribe(ctx context.Context, out *attached) string {
	t := r.cfg.Media.Transcriber
	if t == nil {
		out.sttOff = true
		return "; not transcribed: speech-to-text is off"
	}
	tctx, cancel := context.WithTimeout(ctx, transcribeTimeout)
	defer cancel()
	text, err := safeTranscribe(tctx, t, out.media.Path)
	if err != nil {
		msg := r.cfg.Redactor.Redact(err.Error())
		r.log.Warn("transcription failed", "name", out.media.Name, "err", msg)
		out.note = fmt.Sprintf("⚠️ Could not transcribe %s (%s).", out.media.Name, msg)
		return "; transcription failed"
	}
	if text == "" {
		return "; transcribed: no speech heard"
	}
	out.transcript = text
	return "; transcribed above"
}

func safeTranscribe(ctx context.Context, t Transcriber, path string) (text string, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("transcriber panicked: %v", x)
		}
	}()
	return t.Transcribe(ctx, path)
}

// errTooLarge is a download over the cap.
var errTooLarge = errors.New("over the size limit")

// download fetches md into the session's cache: it reads at most limit+1
// bytes, and leaves no file behind when it fails.
func (r *Runner) download(ctx context.Context, f adapters.Fetcher, sessionID string, md herald.Media, limit int64) (string, int64, error) {
	dir, err := r.sessionMediaDir(sessionID, true)
	if err != nil {
		return "", 0, err
	}
	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	rc, err := safeFetch(fctx, f, md)
	if err != nil {
		return "", 0, err
	}
	defer rc.Close()
	file, path, err := createUnique(dir, md.Name)
	if err != nil {
		return "", 0, err
	}
	n, err := io.Copy(file, io.LimitReader(rc, limit+1))
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = errTooLarge
	}
	if err != nil {
		os.Remove(path)
		return "", 0, err
	}
	return path, n, nil
}

func safeFetch(ctx context.Context, f adapters.Fetcher, md herald.Media) (rc io.ReadCloser, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("adapter panicked in Fetch: %v", x)
		}
	}()
	rc, err = f.Fetch(ctx, md)
	if err == nil && rc == nil {
		err = errors.New("the platform returned no data")
	}
	return rc, err
}

func (r *Runner) mediaMax() int64 {
	if r.cfg.Media.MaxBytes > 0 {
		return r.cfg.Media.MaxBytes
	}
	return DefaultMediaMaxBytes
}

// sessionMediaDir is the cache directory of a session, created (0700)
// when create is set.
func (r *Runner) sessionMediaDir(sessionID string, create bool) (string, error) {
	if r.cfg.Media.Dir == "" {
		return "", errors.New("no media cache")
	}
	if sessionID == "" || sessionID == "." || sessionID == ".." || filepath.Base(sessionID) != sessionID || strings.ContainsAny(sessionID, `/\`) {
		return "", fmt.Errorf("session id %q cannot name a directory", sessionID)
	}
	dir := filepath.Join(r.cfg.Media.Dir, sessionID)
	if !create {
		return dir, nil
	}
	if err := os.MkdirAll(r.cfg.Media.Dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return dir, nil
}

// mediaDirOf is the cache directory of a session ("" when there is no
// cache).
func (r *Runner) mediaDirOf(sessionID string) string {
	dir, err := r.sessionMediaDir(sessionID, false)
	if err != nil {
		return ""
	}
	return dir
}

// dropMedia removes a session's cache (the session ended).
func (r *Runner) dropMedia(sessionID string) {
	dir, err := r.sessionMediaDir(sessionID, false)
	if err != nil {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		r.log.Warn("media cache of an ended session not removed", "session_id", sessionID, "err", err)
	}
}

// tidyMedia removes the cache of every session the store says has ended
// (a session ended while its cache could not be removed, or by another
// process such as herald sessions). A session the store does not know
// (its first turn is running, or was never stored) is left alone.
func (r *Runner) tidyMedia(ctx context.Context) {
	if r.cfg.Media.Dir == "" || r.store == nil {
		return
	}
	entries, err := os.ReadDir(r.cfg.Media.Dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || ctx.Err() != nil {
			continue
		}
		s, err := r.store.Session(ctx, e.Name())
		if err == nil && s.EndedAt != nil {
			r.dropMedia(s.ID)
		}
	}
}

// createUnique creates name in dir (0600), or name-1, name-2, … when it
// is taken; it never opens an existing file nor follows a link.
func createUnique(dir, name string) (*os.File, string, error) {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 0; i < 1000; i++ {
		n := name
		if i > 0 {
			n = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		p := filepath.Join(dir, n)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return f, p, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("too many files named %s in %s", name, dir)
}

// sniffMIME is the type of a file from its first bytes; the declared
// type or the name's extension is only a hint, taken when the bytes say
// nothing more precise (and never to call something an image).
func sniffMIME(head []byte, name, declared string) string {
	sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(head))
	hint := declared
	if hint == "" {
		hint = mime.TypeByExtension(strings.ToLower(filepath.Ext(name)))
	}
	hint, _, _ = mime.ParseMediaType(hint)
	hint = strings.ToLower(hint)
	switch sniffed {
	case "application/ogg":
		if strings.HasPrefix(hint, "video/") {
			return "video/ogg"
		}
		return "audio/ogg"
	case "application/octet-stream":
		if hint != "" && !strings.HasPrefix(hint, "image/") && !textLike(hint) {
			return hint
		}
		return sniffed
	case "text/plain":
		if textLike(hint) {
			return hint
		}
		return sniffed
	}
	return sniffed
}

// mediaKind is the kind of a file of type mimeType: what its bytes are,
// keeping the platform's voice/audio distinction for sound.
func mediaKind(declared, mimeType string) string {
	k := herald.MediaType(mimeType)
	if (k == herald.MediaVoice || k == herald.MediaAudio) && (declared == herald.MediaVoice || declared == herald.MediaAudio) {
		return declared
	}
	return k
}

// textLike reports whether a MIME type is text a person could read.
func textLike(t string) bool {
	if strings.HasPrefix(t, "text/") {
		return true
	}
	switch t {
	case "application/json", "application/xml", "application/yaml", "application/x-yaml", "application/toml", "application/x-sh", "application/javascript", "application/sql":
		return true
	}
	return false
}

// inlineText returns a small text document's text.
func inlineText(path, mimeType string, size int64) (string, bool) {
	if !textLike(mimeType) || size > InlineDocumentMax {
		return "", false
	}
	b, err := herald.ReadRegularFile(path)
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// usualExtensions are the extensions people expect for common types
// (mime.ExtensionsByType's first may be a rare one, .asc for text).
var usualExtensions = map[string]string{
	"text/plain": ".txt", "image/jpeg": ".jpg", "image/png": ".png", "image/gif": ".gif", "image/webp": ".webp",
	"audio/ogg": ".ogg", "audio/mpeg": ".mp3", "audio/mp4": ".m4a", "video/mp4": ".mp4", "application/pdf": ".pdf",
}

// withExtension adds the extension of mimeType to a name that has none.
func withExtension(name, mimeType string) string {
	if filepath.Ext(name) != "" || mimeType == "" {
		return name
	}
	t, _, _ := mime.ParseMediaType(mimeType)
	if ext, ok := usualExtensions[t]; ok {
		return name + ext
	}
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		return name + exts[0]
	}
	return name
}
