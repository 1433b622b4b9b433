package whatsapp

// media.go: inbound media fetched by id (GET /{media-id} for a short-lived
// URL, then that URL with the access token), and files uploaded to
// /{phone-number-id}/media and sent by the id the upload returns.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"strings"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

var (
	_ adapters.Fetcher    = (*Adapter)(nil)
	_ adapters.FileSender = (*Adapter)(nil)
)

// Upload limits of the Cloud API, in bytes, by media kind; a file over
// its kind's limit but within the document limit goes as a document.
const (
	maxImage    = 5 << 20
	maxAVMedia  = 16 << 20
	maxDocument = 100 << 20
	// maxCaption is the longest caption of an image, video or document.
	maxCaption = 1024
)

// Fetch implements adapters.Fetcher: m.Ref is the media id.
func (a *Adapter) Fetch(ctx context.Context, m herald.Media) (io.ReadCloser, error) {
	if m.Ref == "" {
		return nil, fmt.Errorf("whatsapp: fetch media: the attachment has no media id")
	}
	var info struct {
		URL      string `json:"url"`
		MIMEType string `json:"mime_type"`
	}
	if err := a.graph(ctx, a.http, http.MethodGet, "/"+url.PathEscape(m.Ref), nil, "", &info); err != nil {
		return nil, err
	}
	u, err := url.Parse(info.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("whatsapp: fetch media %s: the Graph API gave no download URL", m.Ref)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, info.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("whatsapp: fetch media %s: %w", m.Ref, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.cfg.AccessToken)
	res, err := a.transfer.Do(req)
	if err != nil {
		return nil, a.transportError("download media "+m.Ref, err)
	}
	if res.StatusCode/100 != 2 {
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		res.Body.Close()
		return nil, a.classify("download media "+m.Ref, res, raw)
	}
	return res.Body, nil
}

// MaxFileSize implements adapters.FileSender: the document limit.
func (a *Adapter) MaxFileSize() int64 { return maxDocument }

// SendFile implements adapters.FileSender: upload, then send by id with
// the caption (an audio file takes none: its caption follows as text).
func (a *Adapter) SendFile(ctx context.Context, to herald.Target, f adapters.OutgoingFile) (adapters.Sent, error) {
	chat, err := a.recipient(to)
	if err != nil {
		return adapters.Sent{}, err
	}
	// no upload for a user who cannot be written to
	if open, last := a.windows.open(ctx, chat); !open {
		return adapters.Sent{}, &WindowError{To: chat, Last: last}
	}
	kind := sendKind(f)
	id, err := a.upload(ctx, f)
	if err != nil {
		return adapters.Sent{}, err
	}
	caption, after := toWhatsApp(f.Caption), ""
	if kind == "audio" || len([]rune(caption)) > maxCaption {
		caption, after = "", caption
	}
	media := &wireMedia{ID: id, Caption: caption}
	msg := wireMessage{Type: kind}
	switch kind {
	case "image":
		msg.Image = media
	case "video":
		msg.Video = media
	case "audio":
		msg.Audio = &wireMedia{ID: id}
	default:
		media.Filename = f.Name
		msg.Document = media
	}
	if f.ReplyTo != "" {
		msg.Context = &wireContext{MessageID: f.ReplyTo}
	}
	sent, err := a.post(ctx, chat, msg)
	if err != nil || strings.TrimSpace(after) == "" {
		return sent, err
	}
	for _, part := range splitRunes(after, MaxLength) {
		if _, err := a.post(ctx, chat, wireMessage{Type: "text", Text: &wireText{Body: part}}); err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// sendKind is the message type a file goes as.
func sendKind(f adapters.OutgoingFile) string {
	switch f.Type {
	case herald.MediaImage:
		if f.Size <= maxImage && (f.MIME == "image/jpeg" || f.MIME == "image/png") {
			return "image"
		}
	case herald.MediaVideo:
		if f.Size <= maxAVMedia && (f.MIME == "video/mp4" || f.MIME == "video/3gpp") {
			return "video"
		}
	case herald.MediaAudio, herald.MediaVoice:
		if f.Size <= maxAVMedia {
			return "audio"
		}
	}
	return "document"
}

// upload posts the file to /{phone-number-id}/media and returns its id.
func (a *Adapter) upload(ctx context.Context, f adapters.OutgoingFile) (string, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return "", fmt.Errorf("whatsapp: upload %s: %w", f.Name, err)
	}
	mimeType := f.MIME
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("messaging_product", "whatsapp")
	mw.WriteField("type", mimeType)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, f.Name))
	h.Set("Content-Type", mimeType)
	part, err := mw.CreatePart(h)
	if err != nil {
		return "", fmt.Errorf("whatsapp: upload %s: %w", f.Name, err)
	}
	part.Write(data)
	mw.Close()
	var out struct {
		ID string `json:"id"`
	}
	if err := a.graph(ctx, a.transfer, http.MethodPost, "/"+url.PathEscape(a.cfg.PhoneNumberID)+"/media", body.Bytes(), mw.FormDataContentType(), &out); err != nil {
		return "", err
	}
	if out.ID == "" {
		return "", fmt.Errorf("whatsapp: upload %s: the Graph API gave no media id", f.Name)
	}
	return out.ID, nil
}

// splitRunes cuts s into parts of at most n characters.
func splitRunes(s string, n int) []string {
	r := []rune(s)
	var parts []string
	for len(r) > n {
		parts = append(parts, string(r[:n]))
		r = r[n:]
	}
	return append(parts, string(r))
}
