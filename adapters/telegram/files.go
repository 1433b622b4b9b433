package telegram

// files.go moves file bytes: Fetch downloads an attachment (getFile, then
// the file endpoint derived from Config.APIEndpoint) and SendFile uploads
// one (sendPhoto, sendVoice, sendAudio, sendVideo or sendDocument). The
// download URL holds the bot token: it is built here, used for one
// request, and never logged, stored or put in an error.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// The Bot API's size rules for bots (self-hosted Bot API servers allow
// more; herald keeps to the public ones).
const (
	// MaxDownloadSize is the largest file getFile lets a bot download.
	MaxDownloadSize = 20 << 20
	// MaxUploadSize is the largest multipart upload.
	MaxUploadSize = 50 << 20
	// MaxCaption is a caption's limit in UTF-16 units; a longer caption
	// is sent as a message of its own after the file.
	MaxCaption = 1024
	// maxPhotoSize is sendPhoto's limit; bigger images go as documents.
	maxPhotoSize = 10 << 20
)

// ErrTooLarge marks a file over the Bot API's size limits.
var ErrTooLarge = errors.New("file is over the Telegram Bot API's size limit")

var (
	_ adapters.Fetcher    = (*Adapter)(nil)
	_ adapters.FileSender = (*Adapter)(nil)
)

// Fetch implements adapters.Fetcher: getFile for m.Ref (a file_id), then
// a GET of the file. A file known to be over MaxDownloadSize is refused
// before any request. Errors name the file_id, never the URL.
func (a *Adapter) Fetch(ctx context.Context, m herald.Media) (io.ReadCloser, error) {
	if m.Ref == "" {
		return nil, errors.New("telegram: fetch: the attachment has no file_id")
	}
	op := "download file " + m.Ref
	if m.Size > MaxDownloadSize {
		return nil, fmt.Errorf("telegram: %s: %d bytes: %w (bots may download at most 20 MB)", op, m.Size, ErrTooLarge)
	}
	file, err := a.getFile(ctx, m.Ref)
	if err != nil {
		return nil, err
	}
	if int64(file.FileSize) > MaxDownloadSize {
		return nil, fmt.Errorf("telegram: %s: %d bytes: %w (bots may download at most 20 MB)", op, file.FileSize, ErrTooLarge)
	}
	u, err := a.fileURL(file.FilePath)
	if err != nil {
		return nil, fmt.Errorf("telegram: %s: %w", op, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		// the error quotes the URL
		return nil, fmt.Errorf("telegram: %s: the file endpoint derived from platforms.telegram.api_endpoint is not a valid URL", op)
	}
	resp, err := a.transfer.Do(req)
	if err != nil {
		return nil, a.classify(op, err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, nil
	}
	resp.Body.Close()
	e := fmt.Errorf("telegram: %s: HTTP %d", op, resp.StatusCode)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return nil, &adapters.RetryAfterError{After: max(time.Duration(after)*time.Second, time.Second), Err: e}
	case resp.StatusCode >= 500:
		return nil, &adapters.TemporaryError{Err: e}
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%w (the file is gone, or the file endpoint derived from platforms.telegram.api_endpoint is wrong)", e)
	}
	return nil, e
}

func (a *Adapter) getFile(ctx context.Context, fileID string) (tgbotapi.File, error) {
	var f tgbotapi.File
	resp, err := a.bot(ctx).MakeRequest("getFile", tgbotapi.Params{"file_id": fileID})
	if err != nil {
		var te *tgbotapi.Error
		if errors.As(err, &te) && strings.Contains(strings.ToLower(te.Message), "file is too big") {
			return f, fmt.Errorf("telegram: getFile %s: %s: %w (bots may download at most 20 MB)", fileID, te.Message, ErrTooLarge)
		}
		return f, a.classify("getFile "+fileID, err)
	}
	if err := json.Unmarshal(resp.Result, &f); err != nil {
		return f, &adapters.TemporaryError{Err: fmt.Errorf("telegram: getFile %s: unreadable answer: %w", fileID, err)}
	}
	return f, nil
}

// fileEndpoint derives the file download endpoint from the API endpoint,
// both in the library's "…/bot%s/%s" form: Telegram serves files at
// <base>/file/bot<token>/<file_path> beside <base>/bot<token>/<method>.
// (The library's File.Link always names api.telegram.org.)
func fileEndpoint(api string) (string, error) {
	base, ok := strings.CutSuffix(api, "bot%s/%s")
	if !ok {
		return "", errors.New(`platforms.telegram.api_endpoint does not end in "bot%s/%s", so the file endpoint cannot be derived from it`)
	}
	return base + "file/bot%s/%s", nil
}

// fileURL is the download URL of a getFile file_path. The path comes from
// the server: one that is absolute (a Bot API server in --local mode,
// which serves no downloads), climbs with "..", or carries characters
// no Telegram path has, is refused.
func (a *Adapter) fileURL(filePath string) (string, error) {
	if err := checkFilePath(filePath); err != nil {
		return "", err
	}
	ep, err := fileEndpoint(a.cfg.APIEndpoint)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(ep, a.cfg.Token, escapePath(filePath)), nil
}

func checkFilePath(p string) error {
	switch {
	case p == "":
		return errors.New("getFile gave no file_path")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return errors.New("getFile gave a local path (a Bot API server in --local mode): herald cannot download from it")
	case strings.ContainsFunc(p, func(r rune) bool { return r == '\\' || r == '?' || r == '#' || r == '%' || unicode.IsControl(r) }):
		return fmt.Errorf("getFile gave a file_path with characters no Telegram path has: %q", p)
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("getFile gave a file_path with an empty, . or .. segment: %q", p)
		}
	}
	return nil
}

// escapePath escapes each segment of a checked file_path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// MaxFileSize implements adapters.FileSender: 50 MB.
func (a *Adapter) MaxFileSize() int64 { return MaxUploadSize }

// SendFile implements adapters.FileSender. The file's kind picks the
// method (by its MIME type when it has none): image → sendPhoto
// (sendDocument when Telegram refuses the photo, for its dimensions say,
// or it is over 10 MB or a GIF), voice → sendVoice (sendDocument when the
// user does not take voice messages), audio → sendAudio, video →
// sendVideo, anything else → sendDocument. The caption is formatted as text is, and resent plain if
// Telegram refuses its markup; one over MaxCaption goes as a message of
// its own after the file. A file over MaxUploadSize is refused before any
// request.
func (a *Adapter) SendFile(ctx context.Context, to herald.Target, f adapters.OutgoingFile) (adapters.Sent, error) {
	chat, err := a.chatFor(to)
	if err != nil {
		return adapters.Sent{}, err
	}
	name := f.Name
	if name == "" {
		name = filepath.Base(f.Path)
	}
	info, err := os.Stat(f.Path)
	switch {
	case err != nil:
		return adapters.Sent{}, fmt.Errorf("telegram: send file %s: %w", name, err)
	case !info.Mode().IsRegular():
		return adapters.Sent{}, fmt.Errorf("telegram: send file %s: not a regular file", name)
	case info.Size() > MaxUploadSize:
		return adapters.Sent{}, fmt.Errorf("telegram: send file %s: %d bytes: %w (bots may upload at most 50 MB)", name, info.Size(), ErrTooLarge)
	}
	caption, separate := f.Caption, ""
	if adapters.UTF16Len(caption) > MaxCaption {
		caption, separate = "", f.Caption
	}
	up := upload{chat: chat, thread: to.ThreadID, replyTo: f.ReplyTo, path: f.Path, name: name, caption: caption}
	up.method, up.field = uploadMethod(f, info.Size())
	var sent adapters.Sent
	err = a.sendTo(up.method, chat, to.ThreadID, func(chat, thread string) error {
		up.chat, up.thread = chat, thread
		sent, err = a.upload(ctx, up)
		if err != nil && up.method != "sendDocument" && refusedAsKind(up.method, err) {
			a.log.Info("telegram: upload refused for its kind; sending it as a document", "method", up.method, "chat", chat, "file", name, "err", err)
			up.method, up.field = "sendDocument", "document"
			sent, err = a.upload(ctx, up)
		}
		return err
	})
	if err != nil || separate == "" {
		return sent, err
	}
	if err := a.sendCaption(ctx, to, separate, f.ReplyTo); err != nil {
		// %v, not %w: the file is in the chat, and a retry of the whole
		// SendFile would post it twice
		return sent, fmt.Errorf("telegram: %s sent, but its caption (too long for one) could not follow as a message: %v", name, err)
	}
	return sent, nil
}

// uploadMethod picks the Bot API method and its file field for f.
func uploadMethod(f adapters.OutgoingFile, size int64) (method, field string) {
	kind := f.Type
	if kind == "" {
		kind = herald.MediaType(f.MIME)
	}
	switch kind {
	case herald.MediaImage:
		// sendPhoto recompresses a GIF to one still frame
		if size <= maxPhotoSize && !strings.EqualFold(f.MIME, "image/gif") {
			return "sendPhoto", "photo"
		}
	case herald.MediaVoice:
		return "sendVoice", "voice"
	case herald.MediaAudio:
		return "sendAudio", "audio"
	case herald.MediaVideo:
		return "sendVideo", "video"
	}
	return "sendDocument", "document"
}

// refusedAsKind reports whether an upload by method failed for what the
// file is rather than for where it goes: sendPhoto refusing the image
// (PHOTO_INVALID_DIMENSIONS, IMAGE_PROCESS_FAILED, …), or sendVoice
// refused by a user who does not take voice messages
// (VOICE_MESSAGES_FORBIDDEN). sendDocument takes such a file as it is.
func refusedAsKind(method string, err error) bool {
	var ra *adapters.RetryAfterError
	var tmp *adapters.TemporaryError
	if errors.As(err, &ra) || errors.As(err, &tmp) || adapters.IsFatal(err) || errors.Is(err, ErrMarkup) {
		return false
	}
	m := strings.ToUpper(err.Error())
	switch method {
	case "sendPhoto":
		return errors.Is(err, ErrTooLarge) || strings.Contains(m, "PHOTO_") || strings.Contains(m, "IMAGE_PROCESS_FAILED")
	case "sendVoice":
		return strings.Contains(m, "VOICE_MESSAGES_FORBIDDEN")
	}
	return false
}

// upload is one multipart request.
type upload struct {
	method, field         string
	chat, thread, replyTo string
	path, name, caption   string
}

// upload sends the file, and once more with a plain caption if Telegram
// refuses the caption's markup.
func (a *Adapter) upload(ctx context.Context, up upload) (adapters.Sent, error) {
	for _, plain := range []bool{false, true} {
		p := tgbotapi.Params{}
		addTarget(p, up.chat, up.thread, up.replyTo)
		if up.caption != "" {
			addMarkup(p, "caption", up.caption, plain)
		}
		file, err := os.Open(up.path)
		if err != nil {
			return adapters.Sent{}, fmt.Errorf("telegram: send file %s: %w", up.name, err)
		}
		// FileReader rather than FilePath, whose part would name the
		// file by its full local path
		resp, err := a.transferBot(ctx).UploadFiles(up.method, p, []tgbotapi.RequestFile{{Name: up.field, Data: tgbotapi.FileReader{Name: up.name, Reader: file}}})
		file.Close()
		if err == nil {
			var m tgbotapi.Message
			if json.Unmarshal(resp.Result, &m) != nil {
				a.log.Warn("telegram: upload answer unreadable", "method", up.method, "chat", up.chat)
				return adapters.Sent{}, nil // sent; do not send twice
			}
			return adapters.Sent{MessageID: strconv.Itoa(m.MessageID)}, nil
		}
		err = a.classifyUpload(up.method+" of "+up.name+" to "+up.chat, resp, err)
		if plain || up.caption == "" || !errors.Is(err, ErrMarkup) {
			return adapters.Sent{}, err
		}
	}
	return adapters.Sent{}, nil
}

// classifyUpload is classify for UploadFiles, whose *tgbotapi.Error lacks
// the status code (it is in the response envelope).
func (a *Adapter) classifyUpload(op string, resp *tgbotapi.APIResponse, err error) error {
	var te *tgbotapi.Error
	if errors.As(err, &te) && te.Code == 0 && resp != nil {
		te.Code = resp.ErrorCode
	}
	if te != nil && te.Code == http.StatusRequestEntityTooLarge {
		return fmt.Errorf("telegram: %s: %s: %w", op, a.red.Redact(te.Message), ErrTooLarge)
	}
	return a.classify(op, err)
}

// sendCaption sends a caption too long for its file as text, in as many
// messages as Telegram's limit needs, each resent plain if its markup is
// refused.
func (a *Adapter) sendCaption(ctx context.Context, to herald.Target, text, replyTo string) error {
	for _, part := range splitUTF16(text, MaxLength) {
		_, err := a.Send(ctx, to, adapters.Outgoing{Text: part, ReplyTo: replyTo})
		if errors.Is(err, ErrMarkup) {
			_, err = a.Send(ctx, to, adapters.Outgoing{Text: part, ReplyTo: replyTo, Plain: true})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// splitUTF16 cuts s into parts of at most n UTF-16 units, at the last
// line break of each part when there is one.
func splitUTF16(s string, n int) []string {
	var parts []string
	for adapters.UTF16Len(s) > n {
		units, cut := 0, 0
		for i, r := range s {
			if units+utf16.RuneLen(r) > n {
				cut = i
				break
			}
			units += utf16.RuneLen(r)
		}
		if nl := strings.LastIndexByte(s[:cut], '\n'); nl > 0 {
			cut = nl + 1
		}
		parts = append(parts, s[:cut])
		s = s[cut:]
	}
	return append(parts, s)
}
