package telegram

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heraldgw/herald"
)

var mediaKinds = map[string]bool{herald.MediaImage: true, herald.MediaAudio: true, herald.MediaVoice: true, herald.MediaVideo: true, herald.MediaDocument: true}

// FuzzTranslate feeds raw updates (untrusted: from Telegram, or from
// anyone who can reach the webhook with the secret) to translate: it
// must not panic, and a message it passes on has text or media, each
// attachment with a kind, a name and a file_id, and never a URL.
func FuzzTranslate(f *testing.F) {
	files, _ := filepath.Glob("testdata/updates/*.json")
	for _, p := range files {
		if raw, err := os.ReadFile(p); err == nil {
			f.Add(raw)
		}
	}
	f.Add([]byte(`{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"photo":[]}}`))
	f.Add([]byte(`{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"sticker":{"file_id":"x","is_video":"yes"}}}`))
	f.Add([]byte(`{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"document":{"file_id":""}}}`))
	bot := botIdentity{ID: 1000, UserName: "herald_test_bot"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, m, ok, err := translate(raw, bot)
		if err != nil || !ok {
			return
		}
		if m.Text == "" && len(m.Media) == 0 {
			t.Fatalf("message with neither text nor media passed on: %+v", m)
		}
		for _, md := range m.Media {
			if !mediaKinds[md.Type] || md.Ref == "" || md.Name == "" || md.URL != "" || md.Path != "" || md.Size < 0 {
				t.Fatalf("bad media %+v from %s", md, raw)
			}
		}
	})
}
