package discord_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
	a := run(t, srv, discord.Config{}, rec)

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
			// what arrived is enough to fetch the bytes back
			for i, m := range got.Media {
				rc, err := a.Fetch(waitCtx(t), m)
				if err != nil {
					t.Fatalf("Fetch %s: %v", m.Name, err)
				}
				data, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || int64(len(data)) != m.Size || len(data) != tc.in.Attachments[i].Size {
					t.Errorf("Fetch %s: %d bytes, %v; want %d", m.Name, len(data), err, m.Size)
				}
			}
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

// media describes an attachment as the inbound side does.
func media(at *discordgo.MessageAttachment) herald.Media {
	return herald.Media{Type: herald.MediaType(at.ContentType), MIME: at.ContentType, Name: at.Filename, Size: int64(at.Size), URL: at.URL, Ref: at.ID}
}

// TestFetch reads attachments through the adapter's Fetcher: only from
// the attachment hosts, without credentials, within a hard ceiling.
func TestFetch(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	var foreignHits atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreignHits.Add(1)
		w.Write([]byte("internal secrets"))
	}))
	t.Cleanup(foreign.Close)
	a := discord.New(discord.Config{Token: "tok", APIBase: srv.APIBase()})
	small := discord.New(discord.Config{Token: "tok", APIBase: srv.APIBase(), FetchLimit: 1024})
	ctx := waitCtx(t)

	read := func(a *discord.Adapter, m herald.Media) ([]byte, error) {
		rc, err := a.Fetch(ctx, m)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	checkErr := func(t *testing.T, err error, target error, at herald.Media) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Fatalf("err = %v, want %v", err, target)
		}
		if !strings.Contains(err.Error(), strconv.Quote(at.Name)) || strings.Contains(err.Error(), "hm=") || strings.Contains(err.Error(), "tok") {
			t.Errorf("err = %q: want the attachment's name, not its URL's query or the token", err)
		}
	}

	photo := bytes.Repeat([]byte("\x89PNG"), 2048) // 8 KiB
	at := media(srv.AddAttachment("dm-42", "photo.png", "image/png", photo))
	t.Run("bytes", func(t *testing.T) {
		got, err := read(a, at)
		if err != nil || !bytes.Equal(got, photo) {
			t.Fatalf("read %d bytes, err %v; want the %d bytes served", len(got), err, len(photo))
		}
		if all, auth := srv.Downloads(); all != 1 || auth != 0 {
			t.Errorf("%d downloads, %d with credentials; want 1 and 0", all, auth)
		}
	})
	t.Run("exactly the ceiling", func(t *testing.T) {
		exact := media(srv.AddAttachment("dm-42", "exact.bin", "application/octet-stream", photo[:1024]))
		srv.ChunkedDownloads(true)
		defer srv.ChunkedDownloads(false)
		if got, err := read(small, exact); err != nil || len(got) != 1024 {
			t.Fatalf("read %d bytes, err %v", len(got), err)
		}
	})
	t.Run("over the ceiling, by Content-Length", func(t *testing.T) {
		_, err := small.Fetch(ctx, at)
		checkErr(t, err, discord.ErrFetchTooLarge, at)
	})
	t.Run("over the ceiling, chunked", func(t *testing.T) {
		srv.ChunkedDownloads(true)
		defer srv.ChunkedDownloads(false)
		rc, err := small.Fetch(ctx, at)
		if err != nil {
			t.Fatalf("Fetch: %v (no Content-Length: the body is cut while read)", err)
		}
		defer rc.Close()
		got, err := io.ReadAll(rc)
		checkErr(t, err, discord.ErrFetchTooLarge, at)
		if len(got) > 1024 {
			t.Errorf("read %d bytes past a 1024-byte ceiling", len(got))
		}
	})

	t.Run("a stalled download ends at MediaTimeout", func(t *testing.T) {
		const timeout = 200 * time.Millisecond
		impatient := discord.New(discord.Config{Token: "tok", APIBase: srv.APIBase(), MediaTimeout: timeout})
		srv.StallDownloads(true)
		defer srv.StallDownloads(false)
		start := time.Now()
		got, err := read(impatient, at)
		took := time.Since(start)
		t.Logf("stalled download ended after %s with %d bytes: %v", took.Round(time.Millisecond), len(got), err)
		if err == nil || !strings.Contains(err.Error(), `"photo.png"`) {
			t.Errorf("err = %v, want a timeout naming photo.png", err)
		}
		if took < timeout || took > bound {
			t.Errorf("took %s; want about %s", took, timeout)
		}
	})

	refused := []struct{ name, url string }{
		{"another host", foreign.URL + "/attachments/1/2/photo.png"},
		{"user info naming the CDN", strings.Replace(foreign.URL, "http://", "http://"+strings.TrimPrefix(srv.URL(), "http://")+"@", 1) + "/x"},
		{"the CDN over http", "http://cdn.discordapp.com/attachments/1/2/photo.png"},
		{"the CDN on another port", "https://cdn.discordapp.com:8443/attachments/1/2/photo.png"},
		{"a look-alike host", "https://cdn.discordapp.com.example.net/attachments/1/2/photo.png"},
		{"a file URL", "file:///etc/passwd"},
		{"the API host elsewhere", "https://discord.com/api/v9/users/@me"},
	}
	for _, tc := range refused {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			m := herald.Media{Name: "photo.png", Ref: "2", URL: tc.url}
			_, err := a.Fetch(ctx, m)
			checkErr(t, err, discord.ErrForeignURL, m)
		})
	}
	t.Run("refused/a redirect off the CDN", func(t *testing.T) {
		moved := media(srv.MovedAttachment("dm-42", "moved.png", foreign.URL+"/inside"))
		_, err := a.Fetch(ctx, moved)
		checkErr(t, err, discord.ErrForeignURL, moved)
	})
	if n := foreignHits.Load(); n != 0 {
		t.Errorf("the foreign host was asked %d times", n)
	}

	t.Run("expired", func(t *testing.T) {
		gone := at
		gone.Name, gone.URL = "gone.png", srv.URL()+"/attachments/dm-42/1/gone.png?ex=1&is=2&hm=3&"
		_, err := a.Fetch(ctx, gone)
		if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), `"gone.png"`) || strings.Contains(err.Error(), "hm=") {
			t.Errorf("err = %v, want a 404 naming gone.png", err)
		}
	})
}
