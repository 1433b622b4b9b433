package discord

import (
	"encoding/json"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
)

// FuzzMediaOf feeds MESSAGE_CREATE payloads, decoded as discordgo decodes
// them (a decoding error still hands on what was read), to mediaOf.
func FuzzMediaOf(f *testing.F) {
	f.Add([]byte(`{"id":"1","flags":8192,"attachments":[{"id":"9","url":"https://cdn.discordapp.com/attachments/1/9/voice-message.ogg","filename":"voice-message.ogg","content_type":"audio/ogg","size":10,"duration_secs":3.5,"waveform":"AAAA"}]}`))
	f.Add([]byte(`{"attachments":[{"id":"2","proxy_url":"https://media.discordapp.net/x.png","filename":"x.PNG","size":-5},null,{"id":"3"}]}`))
	f.Add([]byte(`{"attachments":[{"id":7,"url":"u","duration_secs":null,"waveform":""}],"flags":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m discordgo.Message
		_ = json.Unmarshal(data, &m)
		urls := map[string]bool{}
		for _, at := range m.Attachments {
			if at != nil {
				urls[at.URL], urls[at.ProxyURL] = true, true
			}
		}
		got := mediaOf(&m, data)
		if len(got) > len(m.Attachments) {
			t.Fatalf("%d media from %d attachments", len(got), len(m.Attachments))
		}
		for _, md := range got {
			switch md.Type {
			case herald.MediaImage, herald.MediaAudio, herald.MediaVoice, herald.MediaVideo, herald.MediaDocument:
			default:
				t.Fatalf("type %q", md.Type)
			}
			if md.Size < 0 || md.URL == "" || !urls[md.URL] || md.Path != "" {
				t.Fatalf("media %+v", md)
			}
		}
	})
}
