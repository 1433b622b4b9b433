package slack

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	slackapi "github.com/slack-go/slack"

	"github.com/heraldgw/herald"
)

var mediaKinds = map[string]bool{herald.MediaImage: true, herald.MediaAudio: true, herald.MediaVoice: true, herald.MediaVideo: true, herald.MediaDocument: true}

// FuzzFileMedia feeds the "files" list of an event (untrusted JSON) to
// mediaOf: every Media it makes has a known kind and a file id,
// a MIME type without parameters, and no negative size.
func FuzzFileMedia(f *testing.F) {
	for _, s := range []string{
		`[{"id":"F1","name":"a.png","mimetype":"image/png","size":3,"url_private":"https://files.slack.com/files-pri/T-F1/a.png"}]`,
		`[{"id":"F2","name":"audio_message.mp4","mimetype":"video/mp4","media_display_type":"audio","url_private_download":"https://files.slack.com/x"}]`,
		`[{"id":"F3","name":"x.html","mimetype":"","url_private":"u"},{"id":"F4","mode":"tombstone"},{"id":"F5","mode":"hidden_by_limit","url_private":"u"}]`,
		`[{"id":"F6","name":"x","mimetype":"VIDEO/","size":-5,"url_private":"u"}]`,
		`[{"id":"","url_private":"u"},{"id":"F7"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var files []slackapi.File
		if json.Unmarshal(data, &files) != nil {
			return
		}
		for _, m := range mediaOf(files) {
			if !mediaKinds[m.Type] || m.Ref == "" || m.Size < 0 || strings.Contains(m.MIME, ";") || m.Path != "" {
				t.Fatalf("bad media %+v from %s", m, data)
			}
			if m.Type == herald.MediaVoice && strings.HasPrefix(m.MIME, "video/") {
				t.Fatalf("voice with a video MIME: %+v", m)
			}
		}
	})
}

// FuzzFetchURL feeds Fetch a URL from an event (untrusted): it never
// panics, its errors name the file and never the token, and a URL it
// lets through goes, as net/http reads it, to Slack's file host or the
// API host and nowhere else.
func FuzzFetchURL(f *testing.F) {
	const token = "xoxb-fuzz-secret-token"
	for _, s := range []string{
		"https://files.slack.com/files-pri/T1-F1/x.png",
		"https://FILES.slack.com:443/x",
		"https://files.slack.com@evil.example/x",
		"https://user:pw@files.slack.com/x",
		"http://files.slack.com/x",
		"https://files.slack.com.evil.example/x",
		"https://files.slack.com\\@evil.example/x",
		"https://slack.com/api/../x",
		"//files.slack.com/x",
		"https:files.slack.com/x",
		"https://[::1]/x",
		"https://files.slack.com%2f@evil.example/",
		"",
	} {
		f.Add(s)
	}
	a := New(Config{BotToken: token})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nothing is sent: a URL let through fails on the context
	allowed := map[string]bool{"https://files.slack.com": true, "https://slack.com": true}
	f.Fuzz(func(t *testing.T, raw string) {
		rc, err := a.Fetch(ctx, herald.Media{URL: raw, Ref: "Ffuzz"})
		if err == nil {
			rc.Close()
			t.Fatalf("Fetch(%q) succeeded with a cancelled context", raw)
		}
		if !strings.Contains(err.Error(), "Ffuzz") || strings.Contains(err.Error(), token) {
			t.Fatalf("Fetch(%q) error %q must name the file and not the token", raw, err)
		}
		u, perr := url.Parse(raw)
		if perr != nil || !a.mayGetToken(u) {
			return
		}
		// what the request is built from, read back as net/http will
		sent, perr := url.Parse(u.String())
		if perr != nil {
			t.Fatalf("%q let through but %q does not parse: %v", raw, u.String(), perr)
		}
		origin := strings.ToLower(sent.Scheme + "://" + sent.Host)
		if !allowed[origin] || sent.User != nil {
			t.Fatalf("%q let through to %s (user %v)", raw, origin, sent.User)
		}
	})
}
