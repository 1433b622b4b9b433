package telegram

// inbound.go turns a message's attachments into herald.Media: kind, MIME
// type, a file name (the sender's, or one made up for kinds that have
// none), the declared size, and the file_id as Ref. The bytes are fetched
// later, by Fetch in files.go; no URL is ever stored (Telegram's file URL
// holds the bot token).

import (
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/heraldgw/herald"
)

// mediaOf lists a message's attachments; a message carries at most one.
// Animated (.tgs) and video (.webm) stickers are left out: no model reads
// them, and a sticker-only message then has nothing to answer. An album
// arrives as one message per item (each with its own update) and is not
// merged here.
func mediaOf(msg *tgbotapi.Message, raw *rawFields) []herald.Media {
	var m herald.Media
	switch {
	case len(msg.Photo) > 0:
		p := largest(msg.Photo)
		// Telegram stores photos re-encoded as JPEG
		m = herald.Media{Type: herald.MediaImage, MIME: "image/jpeg", Name: "photo.jpg", Size: int64(p.FileSize), Ref: p.FileID}
	case msg.Voice != nil:
		v := msg.Voice
		m = herald.Media{Type: herald.MediaVoice, MIME: or(v.MimeType, "audio/ogg"), Size: int64(v.FileSize), Ref: v.FileID}
		m.Name = "voice" + extension(m.MIME, ".ogg")
	case msg.Audio != nil:
		au := msg.Audio
		m = herald.Media{Type: herald.MediaAudio, MIME: or(au.MimeType, "audio/mpeg"), Name: au.FileName, Size: int64(au.FileSize), Ref: au.FileID}
		m.Name = or(m.Name, "audio"+extension(m.MIME, ".mp3"))
	case msg.Video != nil:
		v := msg.Video
		m = herald.Media{Type: herald.MediaVideo, MIME: or(v.MimeType, "video/mp4"), Name: v.FileName, Size: int64(v.FileSize), Ref: v.FileID}
		m.Name = or(m.Name, "video"+extension(m.MIME, ".mp4"))
	case msg.VideoNote != nil:
		v := msg.VideoNote
		m = herald.Media{Type: herald.MediaVideo, MIME: "video/mp4", Name: "video_note.mp4", Size: int64(v.FileSize), Ref: v.FileID}
	case msg.Animation != nil:
		// Telegram fills document too, for old clients: this case comes
		// first so that the animation is not listed twice
		an := msg.Animation
		m = herald.Media{MIME: or(an.MimeType, "video/mp4"), Name: an.FileName, Size: int64(an.FileSize), Ref: an.FileID}
		m.Type = herald.MediaType(m.MIME)
		m.Name = or(m.Name, "animation"+extension(m.MIME, ".mp4"))
	case msg.Document != nil:
		// a file sent as a file; its declared type still says what it is
		// (a PNG sent uncompressed is an image the model can look at)
		d := msg.Document
		m = herald.Media{Type: herald.MediaType(d.MimeType), MIME: d.MimeType, Name: d.FileName, Size: int64(d.FileSize), Ref: d.FileID}
		m.Name = or(m.Name, "document"+extension(m.MIME, ""))
	case msg.Sticker != nil && !msg.Sticker.IsAnimated && (raw.Sticker == nil || !raw.Sticker.IsVideo):
		st := msg.Sticker
		m = herald.Media{Type: herald.MediaImage, MIME: "image/webp", Name: "sticker.webp", Size: int64(st.FileSize), Ref: st.FileID}
	default:
		return nil
	}
	if m.Ref == "" {
		return nil // nothing to fetch it by
	}
	return []herald.Media{m}
}

// largest picks the photo size with the most pixels (Telegram lists them
// smallest first, but does not promise it).
func largest(sizes []tgbotapi.PhotoSize) tgbotapi.PhotoSize {
	best := sizes[0]
	for _, p := range sizes[1:] {
		if a, b := p.Width*p.Height, best.Width*best.Height; a > b || a == b && p.FileSize > best.FileSize {
			best = p
		}
	}
	return best
}

func or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// extensions maps the MIME types Telegram declares onto the extension of
// a made-up file name. A table rather than mime.ExtensionsByType, whose
// answer depends on the host's mime.types.
var extensions = map[string]string{
	"image/jpeg": ".jpg", "image/png": ".png", "image/webp": ".webp", "image/gif": ".gif",
	"audio/ogg": ".ogg", "audio/opus": ".opus", "audio/mpeg": ".mp3", "audio/mp4": ".m4a", "audio/x-m4a": ".m4a",
	"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/flac": ".flac",
	"video/mp4": ".mp4", "video/webm": ".webm", "video/quicktime": ".mov",
	"application/pdf": ".pdf", "application/zip": ".zip", "application/json": ".json",
	"text/plain": ".txt", "text/csv": ".csv", "text/markdown": ".md", "text/html": ".html",
}

func extension(mime, fallback string) string {
	if e, ok := extensions[mime]; ok {
		return e
	}
	return fallback
}
