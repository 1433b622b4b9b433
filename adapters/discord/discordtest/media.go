package discordtest

// Attachments: bytes served at a CDN-like path on the fake's own host,
// voice messages with Discord's extra attachment fields, and multipart
// uploads to POST /channels/{id}/messages.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"
)

// DefaultUploadLimit is the largest upload the fake takes (Discord's limit
// for a server without boosts), in bytes.
const DefaultUploadLimit = 10 << 20

// File is one file the bot uploaded.
type File struct {
	// Field is the multipart field name ("files[0]", …).
	Field       string
	Name        string
	ContentType string
	Data        []byte
}

// attachment is one file the fake serves, or a redirect elsewhere.
type attachment struct {
	contentType string
	data        []byte
	location    string
}

// voiceExtra is what Discord adds to a voice message's attachment and
// discordgo's MessageAttachment has no field for.
type voiceExtra struct {
	DurationSecs float64 `json:"duration_secs"`
	Waveform     string  `json:"waveform"`
}

// AddAttachment makes the fake serve data at
// /attachments/{channel}/{id}/{name} on its own host, with Discord's
// signed-URL query, and returns the attachment to put on a message.
func (s *Server) AddAttachment(channelID, name, contentType string, data []byte) *discordgo.MessageAttachment {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.newID()
	path := "/attachments/" + channelID + "/" + id + "/" + name
	s.files[path] = attachment{contentType: contentType, data: append([]byte(nil), data...)}
	u := s.http.URL + path + "?ex=6650f0e1&is=664f9f61&hm=" + strconv.Itoa(len(data)) + "deadbeef&"
	return &discordgo.MessageAttachment{ID: id, URL: u, ProxyURL: u, Filename: name, ContentType: contentType, Size: len(data)}
}

// VoiceMessage builds a voice message from a user in a channel: the
// IS_VOICE_MESSAGE flag, no text, and one audio/ogg attachment that also
// carries duration_secs and waveform when injected.
func (s *Server) VoiceMessage(channelID string, from *discordgo.User, ogg []byte, seconds float64) *discordgo.Message {
	at := s.AddAttachment(channelID, "voice-message.ogg", "audio/ogg", ogg)
	s.mu.Lock()
	s.extras[at.ID] = voiceExtra{DurationSecs: seconds, Waveform: "AAAAAAAAAAAA"}
	s.mu.Unlock()
	return &discordgo.Message{ChannelID: channelID, Author: from, Flags: discordgo.MessageFlagsIsVoiceMessage,
		Attachments: []*discordgo.MessageAttachment{at}}
}

// MovedAttachment makes the fake answer an attachment's URL with a 302
// to location, and returns the attachment.
func (s *Server) MovedAttachment(channelID, name, location string) *discordgo.MessageAttachment {
	at := s.AddAttachment(channelID, name, "application/octet-stream", nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	u, _ := url.Parse(at.URL)
	s.files[u.Path] = attachment{location: location}
	return at
}

// ChunkedDownloads makes attachment downloads leave Content-Length out
// (chunked encoding), as a proxy in the way might.
func (s *Server) ChunkedDownloads(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chunked = on
}

// StallDownloads makes attachment downloads send their headers and first
// kilobyte, then nothing more until the client gives up or the server
// closes, as a stalled connection would.
func (s *Server) StallDownloads(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stall = on
}

// Downloads is how many times attachments were downloaded, and how many
// of those requests carried an Authorization header (Discord's CDN needs
// none, so a client that sends its bot token there leaks it).
func (s *Server) Downloads() (all, withAuth int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads, s.downloadsAuth
}

// SetUploadLimit changes the largest upload the fake takes; a larger one
// is answered 413 with Discord's code 40005.
func (s *Server) SetUploadLimit(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uploadLimit = n
}

// withExtras adds the voice fields of the message's attachments to its
// JSON; s.mu must be held.
func (s *Server) withExtras(data []byte) []byte {
	var m map[string]json.RawMessage
	var atts []map[string]any
	if json.Unmarshal(data, &m) != nil || json.Unmarshal(m["attachments"], &atts) != nil {
		return data
	}
	changed := false
	for _, at := range atts {
		id, _ := at["id"].(string)
		if x, ok := s.extras[id]; ok {
			at["duration_secs"], at["waveform"] = x.DurationSecs, x.Waveform
			changed = true
		}
	}
	if !changed {
		return data
	}
	m["attachments"], _ = json.Marshal(atts)
	out, _ := json.Marshal(m)
	return out
}

func (s *Server) serveAttachment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.files[r.URL.Path]
	chunked, stall, quit := s.chunked, s.stall, s.quit
	if ok {
		s.downloads++
		if r.Header.Get("Authorization") != "" {
			s.downloadsAuth++
		}
		s.notify()
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "This content is no longer available.", http.StatusNotFound)
		return
	}
	if f.location != "" {
		http.Redirect(w, r, f.location, http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	if !chunked {
		w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	}
	w.WriteHeader(http.StatusOK)
	// written in pieces so that, without Content-Length, the body is chunked
	for rest := f.data; len(rest) > 0; {
		n := min(len(rest), 1024)
		if _, err := w.Write(rest[:n]); err != nil {
			return
		}
		if fl, ok := w.(http.Flusher); ok && (chunked || stall) {
			fl.Flush()
		}
		rest = rest[n:]
		if stall {
			select {
			case <-r.Context().Done():
			case <-quit:
			}
			return
		}
	}
}

// errTooLarge: the upload is over the fake's limit.
var errTooLarge = errors.New("Request entity too large")

// readUpload reads a multipart message create: payload_json and files[n].
func (s *Server) readUpload(r *http.Request, limit int64) (payload []byte, files []File, err error) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return nil, nil, fmt.Errorf("no multipart boundary: %v", err)
	}
	mr := multipart.NewReader(io.LimitReader(r.Body, limit+1<<20), params["boundary"])
	var total int64
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return payload, files, nil
		}
		if err != nil {
			return nil, nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, nil, err
		}
		switch name := p.FormName(); {
		case name == "payload_json":
			payload = data
		case strings.HasPrefix(name, "files["):
			total += int64(len(data))
			if total > limit {
				return nil, nil, errTooLarge
			}
			files = append(files, File{Field: name, Name: p.FileName(), ContentType: p.Header.Get("Content-Type"), Data: data})
		}
	}
}

// wireAttachments describes uploaded files as Discord does in the message
// it returns, each served back by the fake.
func (s *Server) wireAttachments(channelID string, files []File) []*discordgo.MessageAttachment {
	var out []*discordgo.MessageAttachment
	for _, f := range files {
		out = append(out, s.AddAttachment(channelID, f.Name, f.ContentType, f.Data))
	}
	return out
}
