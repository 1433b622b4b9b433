package agent

// media.go: attachments on the way to the model. The gateway stores each
// attachment in the media cache and writes one attachment line per file
// into the user's message (the text form the model reads and the store
// keeps); here images become image content parts of the request (never of
// the stored history), voice notes are transcribed, and the echo model
// reads the lines back.

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
)

// AttachmentPrefix starts the line that announces an attachment in a
// user's message.
const AttachmentPrefix = "[attachment: "

// TranscriptPrefix marks a voice note's transcript in a user's message.
const TranscriptPrefix = "[voice note transcript] "

// AttachmentLine is the text form of one attachment: its kind, name, MIME
// type and size, then what became of it (detail: "saved at /path", "not
// downloaded: …").
func AttachmentLine(kind, name, mime string, size int64, detail string) string {
	var about []string
	if mime != "" {
		about = append(about, mime)
	}
	if size > 0 {
		about = append(about, HumanSize(size))
	}
	if len(about) == 0 {
		about = append(about, "size unknown")
	}
	s := AttachmentPrefix + kind + " " + name + " (" + strings.Join(about, ", ") + ")"
	if detail != "" {
		s += " " + detail
	}
	return s + "]"
}

// HumanSize writes n bytes as people read them: 512 B, 34 KB, 2.5 MB
// (binary units).
func HumanSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KB", (n+512)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}

// textOnlyModels are name fragments of models known to take no images;
// model.vision: auto sends images to every other model.
var textOnlyModels = []string{"gpt-3.5", "gpt-4-0613", "gpt-4-32k", "o1-mini", "o3-mini", "davinci", "babbage", "deepseek-chat", "deepseek-reasoner", "deepseek-coder", "codestral", "mixtral", "llama-2", "llama2"}

// SupportsVision is model.vision: auto's guess: true unless the model's
// name contains a known text-only one.
func SupportsVision(model string) bool {
	m := strings.ToLower(model)
	for _, t := range textOnlyModels {
		if strings.Contains(m, t) {
			return false
		}
	}
	return true
}

// imageParts reads the downloaded images of ms as image content parts
// (data URLs), when the agent sends images to its model.
func (a *Agent) imageParts(ms []herald.Media, sessionID string) []openai.ChatMessagePart {
	if !a.Vision {
		return nil
	}
	var parts []openai.ChatMessagePart
	for _, m := range ms {
		if m.Type != herald.MediaImage || m.Path == "" || !strings.HasPrefix(m.MIME, "image/") {
			continue
		}
		b, err := herald.ReadRegularFile(m.Path)
		if err != nil {
			a.logger().Warn("image not sent to the model", "session_id", sessionID, "path", m.Path, "err", err)
			continue
		}
		url := "data:" + m.MIME + ";base64," + base64.StdEncoding.EncodeToString(b)
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: url, Detail: openai.ImageURLDetailAuto}})
	}
	return parts
}

// userRequest is the user's message as this turn's requests carry it:
// the stored text plus the hooks' context, and the images as parts.
func (a *Agent) userRequest(prompt, extra string, o *Options) openai.ChatCompletionMessage {
	text := prompt
	if extra != "" {
		text = prompt + "\n\n" + extra
	}
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text}
	images := a.imageParts(o.Media, o.SessionID)
	if len(images) == 0 {
		return msg
	}
	msg.Content = ""
	if text != "" {
		msg.MultiContent = append(msg.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: text})
	}
	msg.MultiContent = append(msg.MultiContent, images...)
	return msg
}

// OpenAITranscriber is speech-to-text through an OpenAI-compatible audio
// API (POST /audio/transcriptions).
type OpenAITranscriber struct {
	client *openai.Client
	model  string
}

// NewTranscriber returns a transcriber for baseURL with apiKey and model
// (whisper-1, say). A nil httpClient gets one with a 5-minute timeout.
func NewTranscriber(baseURL, apiKey, model string, httpClient *http.Client) *OpenAITranscriber {
	cfg := openai.DefaultConfig(apiKey)
	if baseURL != "" {
		cfg.BaseURL = strings.TrimRight(baseURL, "/")
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 5 * time.Minute}
	}
	cfg.HTTPClient = httpClient
	return &OpenAITranscriber{client: openai.NewClientWithConfig(cfg), model: model}
}

// Transcribe returns the text spoken in the audio file at path (its name's
// extension tells the service the format).
func (t *OpenAITranscriber) Transcribe(ctx context.Context, path string) (string, error) {
	resp, err := t.client.CreateTranscription(ctx, openai.AudioRequest{Model: t.model, FilePath: path})
	if err != nil {
		return "", fmt.Errorf("transcription: %w", err)
	}
	return strings.TrimSpace(resp.Text), nil
}

// echoAttachments splits a user's text into the words before the
// attachment lines and one "[echo] kind name size" line per attachment.
func echoAttachments(text string) (words string, lines []string) {
	rest := text
	if i := strings.Index(text, "\n\n"+AttachmentPrefix); i >= 0 {
		words, rest = text[:i], text[i+2:]
	} else if strings.HasPrefix(text, AttachmentPrefix) {
		words = ""
	} else {
		return text, nil
	}
	for _, l := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(l, AttachmentPrefix) {
			continue
		}
		body := strings.TrimPrefix(l, AttachmentPrefix)
		kind, body, _ := strings.Cut(body, " ")
		name, size := body, ""
		if i := strings.LastIndex(body, " ("); i >= 0 {
			name = body[:i]
			about := body[i+2:]
			if j := strings.IndexByte(about, ')'); j >= 0 {
				about = about[:j]
			}
			fields := strings.Split(about, ", ")
			if last := fields[len(fields)-1]; strings.HasSuffix(last, "B") {
				size = last
			}
		}
		lines = append(lines, strings.TrimSpace("[echo] "+kind+" "+name+" "+size))
	}
	return words, lines
}

// messageText is a message's text, its text parts joined when it has
// several.
func messageText(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
