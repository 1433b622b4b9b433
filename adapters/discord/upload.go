package discord

// SendFile: one file uploaded as a message attachment (multipart
// payload_json + files[0]), with its caption as the message text.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// ErrUploadTooLarge: a file is larger than Config.MaxUpload.
var ErrUploadTooLarge = errors.New("over Discord's upload limit")

// MaxFileSize is the largest file SendFile uploads (Config.MaxUpload).
func (a *Adapter) MaxFileSize() int64 { return a.cfg.MaxUpload }

// SendFile uploads f into the target's channel (its thread when set),
// replying to f.ReplyTo as Send does, with f.Caption as the message text.
// A caption longer than 2000 characters cannot ride with the file: the
// file goes first, with no text, then the caption in as many messages as
// it takes. A file over MaxFileSize is refused before anything is sent
// (ErrUploadTooLarge). Errors are classified as Send's are (429 is
// *adapters.RetryAfterError); once the file is sent, a failure of the
// caption messages after it is a plain error, so that a retry does not
// upload the file twice.
func (a *Adapter) SendFile(ctx context.Context, to herald.Target, f adapters.OutgoingFile) (adapters.Sent, error) {
	ch := channel(to)
	name := uploadName(f)
	if ch == "" {
		return adapters.Sent{}, fmt.Errorf("discord: upload %q: no channel id", name)
	}
	file, err := os.Open(f.Path)
	if err != nil {
		return adapters.Sent{}, fmt.Errorf("discord: upload %q to %s: %w", name, ch, err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return adapters.Sent{}, fmt.Errorf("discord: upload %q to %s: %w", name, ch, err)
	}
	if !st.Mode().IsRegular() {
		return adapters.Sent{}, fmt.Errorf("discord: upload %q to %s: not a regular file", name, ch)
	}
	if st.Size() > a.cfg.MaxUpload {
		return adapters.Sent{}, fmt.Errorf("discord: upload %q to %s: %s is %w of %s", name, ch, mib(st.Size()), ErrUploadTooLarge, mib(a.cfg.MaxUpload))
	}
	caption, rest := f.Caption, []string(nil)
	if utf8.RuneCountInString(caption) > MaxLength {
		caption, rest = "", splitText(f.Caption, MaxLength)
	}
	ms := &discordgo.MessageSend{
		Content: caption, AllowedMentions: noPings(), Reference: reference(f.ReplyTo, ch),
		// a file that grew since Stat is cut at the limit rather than
		// sent whole past it
		Files: []*discordgo.File{{Name: name, ContentType: f.MIME, Reader: io.LimitReader(file, a.cfg.MaxUpload)}},
	}
	m, err := a.rest.ChannelMessageSendComplex(ch, ms, discordgo.WithContext(ctx), discordgo.WithClient(a.upload))
	if err != nil {
		return adapters.Sent{}, classify(ctx, fmt.Sprintf("upload %q to %s", name, ch), err)
	}
	a.remember(m.ID, caption)
	for _, part := range rest {
		if _, err := a.Send(ctx, to, adapters.Outgoing{Text: part, Cause: f.Cause}); err != nil {
			return adapters.Sent{MessageID: m.ID}, fmt.Errorf("discord: %q was sent to %s, its caption was not: %v", name, ch, err)
		}
	}
	return adapters.Sent{MessageID: m.ID}, nil
}

// uploadName is the file name shown in the chat: f.Name (else the
// path's), one path element, without control characters (it goes into a
// multipart header), at most 200 bytes keeping the extension.
func uploadName(f adapters.OutgoingFile) string {
	name := f.Name
	if name == "" {
		name = filepath.Base(f.Path)
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || unicode.IsControl(r) || r == utf8.RuneError {
			return '_'
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	if name == "" || name == "." || name == ".." {
		name = "file"
	}
	if len(name) > 200 {
		ext := filepath.Ext(name)
		if len(ext) > 20 {
			ext = ""
		}
		cut := 200 - len(ext)
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + ext
	}
	return name
}

// splitText cuts text into parts of at most limit characters, at the
// last line break, else the last space, of each part. The gateway splits
// replies; this is for a caption that cannot go with its file.
func splitText(text string, limit int) []string {
	var parts []string
	for utf8.RuneCountInString(text) > limit {
		cut, n := 0, 0
		for i := range text { // the byte offset of rune number limit
			if n == limit {
				cut = i
				break
			}
			n++
		}
		head := text[:cut]
		if i := strings.LastIndexByte(head, '\n'); i > 0 {
			head = head[:i]
		} else if i := strings.LastIndexByte(head, ' '); i > 0 {
			head = head[:i]
		}
		parts = append(parts, head)
		text = strings.TrimLeft(text[len(head):], " \n")
	}
	if text != "" {
		parts = append(parts, text)
	}
	return parts
}

// mib words a size for a user.
func mib(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
