package telegram_test

import (
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
)

var alice = telegramtest.User{ID: 42, UserName: "alice", First: "Alice"}

// A photo sent with no caption is a message with empty text and one
// image, the largest size's file_id as its Ref.
func TestInboundPhotoWithoutCaption(t *testing.T) {
	srv := newFake(t)
	sk := newSink()
	run(t, newAdapter(srv, nil), sk)
	f := srv.AddFile("photos/file_1.jpg", []byte("\xff\xd8\xff jpeg bytes"))
	srv.DMMedia(alice, telegramtest.Media{Kind: "photo", File: f})
	m := sk.next(t)
	if m.Text != "" {
		t.Errorf("text = %q, want empty", m.Text)
	}
	want := herald.Media{Type: herald.MediaImage, MIME: "image/jpeg", Name: "photo.jpg", Size: int64(f.Size), Ref: f.ID}
	if len(m.Media) != 1 || m.Media[0] != want {
		t.Fatalf("media = %+v, want [%+v]", m.Media, want)
	}
}

// Voice notes and documents without captions reach the sink too; the
// caption, when there is one, is the text.
func TestInboundVoiceAndDocument(t *testing.T) {
	srv := newFake(t)
	sk := newSink()
	run(t, newAdapter(srv, nil), sk)
	voice := srv.AddFile("voice/file_2.oga", []byte("OggS voice"))
	doc := srv.AddFile("documents/file_3.pdf", []byte("%PDF-1.7"))
	srv.DMMedia(alice, telegramtest.Media{Kind: "voice", File: voice, MIME: "audio/ogg"})
	srv.DMMedia(alice, telegramtest.Media{Kind: "document", File: doc, Name: "notes.pdf", MIME: "application/pdf", Caption: "read this"})
	if m := sk.next(t); m.Text != "" || len(m.Media) != 1 || m.Media[0].Type != herald.MediaVoice || m.Media[0].Name != "voice.ogg" || m.Media[0].Ref != voice.ID {
		t.Errorf("voice message = %+v", m)
	}
	if m := sk.next(t); m.Text != "read this" || len(m.Media) != 1 || m.Media[0].Type != herald.MediaDocument || m.Media[0].Name != "notes.pdf" || m.Media[0].MIME != "application/pdf" {
		t.Errorf("document message = %+v", m)
	}
}
