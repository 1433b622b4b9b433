package discord

// Inbound attachments: what a MESSAGE_CREATE's attachments become as
// herald.Media. The gateway downloads them later through Fetch.

import (
	"bytes"
	"encoding/json"
	"mime"
	"path"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
)

// voiceFields are the attachment fields Discord sets on a voice message
// (duration_secs, waveform) and discordgo's MessageAttachment drops; read
// from the event's raw JSON, by attachment id.
func voiceFields(raw json.RawMessage) map[string]bool {
	if len(raw) == 0 || !bytes.Contains(raw, []byte(`"attachments"`)) {
		return nil
	}
	var ev struct {
		Attachments []map[string]json.RawMessage `json:"attachments"`
	}
	if json.Unmarshal(raw, &ev) != nil {
		return nil
	}
	var out map[string]bool
	for _, at := range ev.Attachments {
		var id string
		if json.Unmarshal(at["id"], &id) != nil || id == "" {
			continue
		}
		if present(at["duration_secs"]) || present(at["waveform"]) {
			if out == nil {
				out = map[string]bool{}
			}
			out[id] = true
		}
	}
	return out
}

func present(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && !bytes.Equal(v, []byte("null")) && !bytes.Equal(v, []byte(`""`))
}

// mediaOf turns a message's attachments into herald.Media, in order. raw
// is the event's JSON (may be nil), read only for the voice fields.
//
// The kind comes from the declared content type, or from the file name's
// extension when Discord sent none. A voice message (the message flag
// IS_VOICE_MESSAGE, or an attachment with duration_secs or a waveform) is
// voice; any other audio, .ogg included, is audio: Discord says which is
// which, so herald.MediaType's guess that Ogg means a voice note is not
// needed. Attachments with no URL at all are left out: nothing could
// fetch them.
func mediaOf(m *discordgo.Message, raw json.RawMessage) []herald.Media {
	if m == nil || len(m.Attachments) == 0 {
		return nil
	}
	voiceMsg := m.Flags&discordgo.MessageFlagsIsVoiceMessage != 0
	voiceAt := voiceFields(raw)
	var out []herald.Media
	for _, at := range m.Attachments {
		if at == nil {
			continue
		}
		u := at.URL
		if u == "" {
			u = at.ProxyURL
		}
		if u == "" {
			continue
		}
		mt := strings.TrimSpace(at.ContentType)
		kindOf := mt
		if kindOf == "" {
			kindOf = mime.TypeByExtension(strings.ToLower(path.Ext(at.Filename)))
		}
		kind := herald.MediaType(kindOf)
		audio := kind == herald.MediaAudio || kind == herald.MediaVoice
		switch {
		case voiceAt[at.ID] || (voiceMsg && (audio || kindOf == "")):
			kind = herald.MediaVoice
		case kind == herald.MediaVoice:
			kind = herald.MediaAudio
		}
		out = append(out, herald.Media{
			Type: kind, MIME: mt, Name: at.Filename, Size: max(int64(at.Size), 0), URL: u, Ref: at.ID,
		})
	}
	return out
}
