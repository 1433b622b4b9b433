package discord_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters/discord"
	"github.com/heraldgw/herald/adapters/discord/discordtest"
)

// TestInboundMedia: attachments reach the sink as herald.Media, with no
// text needed, in DMs and in guild channels that require a mention.
func TestInboundMedia(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close) // after the adapter stops: cleanups run last-in first-out
	rec := &recorder{ch: make(chan herald.Message, 16)}
	run(t, srv, discord.Config{}, rec)

	png := []byte("\x89PNG\r\n\x1a\nfake image")
	photo := srv.AddAttachment("dm-42", "photo.png", "image/png", png)
	doc := srv.AddAttachment("dm-42", "report.pdf", "application/pdf", []byte("%PDF-1.7"))
	song := srv.AddAttachment("dm-42", "song.ogg", "audio/ogg", []byte("OggS song"))
	clip := srv.AddAttachment("dm-42", "clip.mp4", "video/mp4", []byte("mp4"))
	untyped := srv.AddAttachment("dm-42", "chart.PNG", "", png)
	dm := srv.DM(alice, "")
	dm.Attachments = []*discordgo.MessageAttachment{photo, doc, song, clip, untyped}

	voice := srv.VoiceMessage("dm-42", alice, []byte("OggS voice"), 3.5)
	// without the message flag, the attachment's duration and waveform
	// still say it is a voice message
	unflagged := srv.VoiceMessage("dm-42", alice, []byte("OggS voice"), 1.25)
	unflagged.Flags = 0

	replyToBot := srv.GuildMessage("g1", "c1", alice, "")
	replyToBot.Type = discordgo.MessageTypeReply
	replyToBot.MessageReference = &discordgo.MessageReference{MessageID: "777", ChannelID: "c1"}
	replyToBot.ReferencedMessage = &discordgo.Message{ID: "777", ChannelID: "c1", Content: "send me the file", Author: srv.Bot()}
	replyToBot.Attachments = []*discordgo.MessageAttachment{srv.AddAttachment("c1", "data.csv", "text/csv; charset=utf-8", []byte("a,b\n1,2\n"))}

	mention := srv.Mention("g1", "c1", alice, "")
	mention.Attachments = []*discordgo.MessageAttachment{srv.AddAttachment("c1", "scan.jpg", "image/jpeg", []byte("jpeg"))}

	cases := []struct {
		name      string
		in        *discordgo.Message
		mentioned bool
		kinds     string
	}{
		{"dm, attachments only", dm, false, "image document audio video image"},
		{"voice message", voice, false, "voice"},
		{"voice message without the flag", unflagged, false, "voice"},
		{"guild reply to the bot, attachment only", replyToBot, true, "document"},
		{"guild mention, attachment only", mention, true, "image"},
	}
	all := map[string][]herald.Media{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := srv.Inject(tc.in)
			got := rec.next(t)
			if got.ID != id || got.Text != "" || got.Mentioned != tc.mentioned {
				t.Errorf("got id %q text %q mentioned %v; want %q, empty text, mentioned %v", got.ID, got.Text, got.Mentioned, id, tc.mentioned)
			}
			var kinds []string
			for _, m := range got.Media {
				kinds = append(kinds, m.Type)
				if !strings.HasPrefix(m.URL, srv.URL()+"/attachments/") || m.Ref == "" || m.Path != "" {
					t.Errorf("media %+v: want a URL on the fake's CDN path, a Ref and no Path", m)
				}
			}
			if strings.Join(kinds, " ") != tc.kinds {
				t.Errorf("media kinds %q, want %q", kinds, tc.kinds)
			}
			all[tc.name] = got.Media
		})
	}
	// the golden file has the fake's address as Discord's CDN, so it
	// does not depend on the port
	body, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "inbound_media.json", bytes.ReplaceAll(body, []byte(srv.URL()), []byte("https://cdn.discordapp.com")))
}
