// Package whatsapptest is a fake WhatsApp Business Cloud API for tests:
// the Graph API endpoints herald uses (GET /{phone-number-id}, POST
// /{phone-number-id}/messages, POST /{phone-number-id}/media, GET
// /{media-id} and the download URL it gives), with their documented wire
// shapes, recording every call; injectable rate limits; the 24-hour
// customer-service window enforced as Meta does (error 131047 for a user
// who has not written through the fake in 24 hours); and a webhook sender
// that posts the documented notification JSON signed with the app secret
// (or signed wrongly, or not at all).
package whatsapptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/heraldgw/herald/adapters/webhook"
	"github.com/heraldgw/herald/adapters/whatsapp"
)

// Version is the Graph API version in APIBase.
const Version = "v21.0"

// Options configure a Server.
type Options struct {
	// Token is the access token the API accepts.
	Token string
	// PhoneNumberID is the business phone number's id.
	PhoneNumberID string
	// AppSecret signs webhook payloads.
	AppSecret string
}

// Sent is one message the business sent, as the API received it.
type Sent struct {
	ID      string
	To      string
	Type    string
	ReplyTo string
	// Text is the text body, or an interactive message's body, or a
	// media message's caption.
	Text string
	// Interactive is "button" or "list" for interactive messages.
	Interactive string
	// Choices are the reply buttons' or the list rows' id and title.
	Choices []Choice
	// ListButton is a list message's button label.
	ListButton string
	// MediaID and Filename are a media message's.
	MediaID  string
	Filename string
	Raw      json.RawMessage
}

// Choice is a reply button or a list row.
type Choice struct{ ID, Title string }

// Upload is one file uploaded to /media.
type Upload struct {
	ID   string
	MIME string
	Name string
	Data []byte
}

type mediaFile struct {
	mime string
	data []byte
}

// Server is the fake.
type Server struct {
	opts Options
	srv  *httptest.Server

	mu        sync.Mutex
	changed   chan struct{}
	sent      []Sent
	uploads   []Upload
	media     map[string]mediaFile
	lastIn    map[string]time.Time
	inbound   map[string]bool
	reads     []Read
	limited   int
	limitCode int
	limitWait time.Duration
	rejected  int
	next      int
}

// New starts a fake; Close stops it.
func New(o Options) *Server {
	if o.Token == "" {
		o.Token = "EAAtest-whatsapp-token-0123456789"
	}
	if o.PhoneNumberID == "" {
		o.PhoneNumberID = "109876543210987"
	}
	if o.AppSecret == "" {
		o.AppSecret = "0123456789abcdef0123456789abcdef"
	}
	s := &Server{opts: o, changed: make(chan struct{}), media: map[string]mediaFile{}, lastIn: map[string]time.Time{}, inbound: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /"+Version+"/{phone}/messages", s.auth(s.messages))
	mux.HandleFunc("POST /"+Version+"/{phone}/media", s.auth(s.upload))
	mux.HandleFunc("GET /"+Version+"/{id}", s.auth(s.get))
	mux.HandleFunc("GET /download/{id}", s.auth(s.download))
	s.srv = httptest.NewServer(mux)
	return s
}

// Close stops the fake.
func (s *Server) Close() { s.srv.Close() }

// APIBase is the Graph API base URL, version included.
func (s *Server) APIBase() string { return s.srv.URL + "/" + Version }

// Token, PhoneNumberID and AppSecret are the fake's credentials.
func (s *Server) Token() string         { return s.opts.Token }
func (s *Server) PhoneNumberID() string { return s.opts.PhoneNumberID }
func (s *Server) AppSecret() string     { return s.opts.AppSecret }

// graphError writes a Graph API error answer.
func graphError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": "OAuthException", "code": code, "fbtrace_id": "AbCdEf",
		"error_data": map[string]any{"messaging_product": "whatsapp", "details": msg},
	}})
}

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+s.opts.Token {
			graphError(w, http.StatusUnauthorized, 190, "Invalid OAuth access token - Cannot parse access token")
			return
		}
		h(w, r)
	}
}

func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	w.Header().Set("Content-Type", "application/json")
	if id == s.opts.PhoneNumberID {
		json.NewEncoder(w).Encode(map[string]any{"id": id, "display_phone_number": "+1 555-010-0000", "verified_name": "herald test"})
		return
	}
	s.mu.Lock()
	f, ok := s.media[id]
	s.mu.Unlock()
	if !ok {
		graphError(w, http.StatusBadRequest, 100, "Unsupported get request. Object with ID '"+id+"' does not exist")
		return
	}
	json.NewEncoder(w).Encode(map[string]any{
		"messaging_product": "whatsapp", "url": s.srv.URL + "/download/" + id, "mime_type": f.mime,
		"sha256": "0", "file_size": strconv.Itoa(len(f.data)), "id": id,
	})
}

func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.media[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.mime)
	w.Write(f.data)
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("phone") != s.opts.PhoneNumberID {
		graphError(w, http.StatusBadRequest, 100, "unknown phone number id")
		return
	}
	if err := r.ParseMultipartForm(200 << 20); err != nil {
		graphError(w, http.StatusBadRequest, 100, "bad multipart form: "+err.Error())
		return
	}
	file, hdr, err := r.FormFile("file")
	if err != nil || r.FormValue("messaging_product") != "whatsapp" || r.FormValue("type") == "" {
		graphError(w, http.StatusBadRequest, 100, "(#100) The parameter file, type and messaging_product are required")
		return
	}
	data, _ := io.ReadAll(file)
	s.mu.Lock()
	s.next++
	id := fmt.Sprintf("media-up-%d", s.next)
	s.media[id] = mediaFile{mime: r.FormValue("type"), data: data}
	s.uploads = append(s.uploads, Upload{ID: id, MIME: r.FormValue("type"), Name: hdr.Filename, Data: data})
	s.notify()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"id": id})
}

// wire is the part of a send's body the fake reads.
type wire struct {
	Product string `json:"messaging_product"`
	To      string `json:"to"`
	Type    string `json:"type"`
	Context *struct {
		MessageID string `json:"message_id"`
	} `json:"context"`
	Text *struct {
		Body string `json:"body"`
	} `json:"text"`
	Interactive *struct {
		Type string `json:"type"`
		Body struct {
			Text string `json:"text"`
		} `json:"body"`
		Action struct {
			Buttons []struct {
				Type  string `json:"type"`
				Reply Choice `json:"reply"`
			} `json:"buttons"`
			Button   string `json:"button"`
			Sections []struct {
				Rows []Choice `json:"rows"`
			} `json:"sections"`
		} `json:"action"`
	} `json:"interactive"`
	Image    *wireMedia `json:"image"`
	Audio    *wireMedia `json:"audio"`
	Video    *wireMedia `json:"video"`
	Document *wireMedia `json:"document"`
}

type wireMedia struct {
	ID       string `json:"id"`
	Caption  string `json:"caption"`
	Filename string `json:"filename"`
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var m wire
	if r.PathValue("phone") != s.opts.PhoneNumberID {
		graphError(w, http.StatusBadRequest, 100, "unknown phone number id")
		return
	}
	if receipt := (struct {
		Product string `json:"messaging_product"`
		Status  string `json:"status"`
		ID      string `json:"message_id"`
		Typing  *struct {
			Type string `json:"type"`
		} `json:"typing_indicator"`
	}{}); json.Unmarshal(raw, &receipt) == nil && receipt.Status == "read" {
		s.read(w, receipt.Product, receipt.ID, receipt.Typing != nil && receipt.Typing.Type == "text")
		return
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.Product != "whatsapp" || m.To == "" {
		graphError(w, http.StatusBadRequest, 100, "(#100) Invalid parameter")
		return
	}
	out := Sent{To: m.To, Type: m.Type, Raw: raw}
	if m.Context != nil {
		out.ReplyTo = m.Context.MessageID
	}
	switch m.Type {
	case "text":
		if m.Text == nil || m.Text.Body == "" || len([]rune(m.Text.Body)) > whatsapp.MaxLength {
			graphError(w, http.StatusBadRequest, 100, "(#100) Param text['body'] must be at most 4096 characters long.")
			return
		}
		out.Text = m.Text.Body
	case "interactive":
		if msg := checkInteractive(m); msg != "" {
			graphError(w, http.StatusBadRequest, 131009, "(#131009) Parameter value is not valid: "+msg)
			return
		}
		in := m.Interactive
		out.Text, out.Interactive, out.ListButton = in.Body.Text, in.Type, in.Action.Button
		for _, b := range in.Action.Buttons {
			out.Choices = append(out.Choices, b.Reply)
		}
		for _, sec := range in.Action.Sections {
			out.Choices = append(out.Choices, sec.Rows...)
		}
	case "image", "audio", "video", "document":
		md := map[string]*wireMedia{"image": m.Image, "audio": m.Audio, "video": m.Video, "document": m.Document}[m.Type]
		s.mu.Lock()
		_, known := s.media[mdID(md)]
		s.mu.Unlock()
		if !known {
			graphError(w, http.StatusBadRequest, 131053, "(#131053) Media upload error: unknown media id")
			return
		}
		out.MediaID, out.Text, out.Filename = md.ID, md.Caption, md.Filename
	default:
		graphError(w, http.StatusBadRequest, 100, "(#100) Invalid parameter: type")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limited > 0 {
		s.limited--
		s.rejected++
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(s.limitWait/time.Second))))
		graphError(w, http.StatusTooManyRequests, s.limitCode, "(#130429) Rate limit hit")
		return
	}
	if last, ok := s.lastIn[m.To]; !ok || time.Since(last) >= 24*time.Hour {
		graphError(w, http.StatusBadRequest, 131047, "Re-engagement message: more than 24 hours have passed since the recipient last replied to the sender number.")
		return
	}
	s.next++
	out.ID = fmt.Sprintf("wamid.OUT%06d", s.next)
	s.sent = append(s.sent, out)
	s.notify()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"messaging_product": "whatsapp",
		"contacts":          []map[string]string{{"input": m.To, "wa_id": m.To}},
		"messages":          []map[string]string{{"id": out.ID}},
	})
}

// Read is a read receipt herald sent for a message, with or without the
// typing indicator.
type Read struct {
	MessageID string
	Typing    bool
}

// read answers a read receipt (and typing indicator) for message id.
func (s *Server) read(w http.ResponseWriter, product, id string, typing bool) {
	s.mu.Lock()
	known := s.inbound[id]
	if known && product == "whatsapp" {
		s.reads = append(s.reads, Read{MessageID: id, Typing: typing})
		s.notify()
	}
	s.mu.Unlock()
	if !known || product != "whatsapp" {
		graphError(w, http.StatusBadRequest, 100, "(#100) Invalid parameter: message_id")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"success":true}`)
}

// WaitReads waits until n read receipts (typing indicators included) have
// arrived and returns them all.
func (s *Server) WaitReads(ctx context.Context, n int) ([]Read, error) {
	for {
		s.mu.Lock()
		if len(s.reads) >= n {
			out := append([]Read(nil), s.reads...)
			s.mu.Unlock()
			return out, nil
		}
		ch := s.changed
		got := len(s.reads)
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("whatsapptest: %d read receipts, want %d: %w", got, n, ctx.Err())
		}
	}
}

// Reads returns the read receipts so far.
func (s *Server) Reads() []Read {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Read(nil), s.reads...)
}

func mdID(m *wireMedia) string {
	if m == nil {
		return ""
	}
	return m.ID
}

// checkInteractive applies the documented limits: up to 3 reply buttons
// with titles of at most 20 characters and a body of at most 1024; a list
// of at most 10 rows with titles of at most 24, a button label of at most
// 20 and a body of at most 4096.
func checkInteractive(m wire) string {
	in := m.Interactive
	if in == nil || in.Body.Text == "" {
		return "interactive body is required"
	}
	switch in.Type {
	case "button":
		if n := len(in.Action.Buttons); n == 0 || n > 3 {
			return fmt.Sprintf("%d buttons (1 to 3 allowed)", n)
		}
		if len([]rune(in.Body.Text)) > 1024 {
			return "body longer than 1024 characters"
		}
		for _, b := range in.Action.Buttons {
			if b.Type != "reply" || b.Reply.ID == "" || len([]rune(b.Reply.Title)) > 20 || b.Reply.Title == "" {
				return "button title must be 1 to 20 characters"
			}
		}
	case "list":
		rows := 0
		for _, sec := range in.Action.Sections {
			for _, r := range sec.Rows {
				rows++
				if r.ID == "" || r.Title == "" || len([]rune(r.Title)) > 24 {
					return "row title must be 1 to 24 characters"
				}
			}
		}
		if rows == 0 || rows > 10 || in.Action.Button == "" || len([]rune(in.Action.Button)) > 20 || len([]rune(in.Body.Text)) > 4096 {
			return "a list takes 1 to 10 rows, a button label of at most 20 characters and a body of at most 4096"
		}
	default:
		return "unknown interactive type " + in.Type
	}
	return ""
}

// RateLimit makes the next n sends answer HTTP 429 with Graph error code
// (130429 when 0) and Retry-After of after (at least a second).
func (s *Server) RateLimit(n int, after time.Duration, code int) {
	if code == 0 {
		code = 130429
	}
	s.mu.Lock()
	s.limited, s.limitWait, s.limitCode = n, after, code
	s.mu.Unlock()
}

// Rejected is how many sends were answered with a rate limit.
func (s *Server) Rejected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejected
}

// Sent returns the messages sent so far, in order.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// Uploads returns the files uploaded so far.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Upload(nil), s.uploads...)
}

// WaitSent waits until at least n messages were sent and returns them.
func (s *Server) WaitSent(ctx context.Context, n int) ([]Sent, error) {
	for {
		s.mu.Lock()
		if len(s.sent) >= n {
			out := append([]Sent(nil), s.sent...)
			s.mu.Unlock()
			return out, nil
		}
		ch := s.changed
		got := len(s.sent)
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("whatsapptest: %d messages sent, want %d: %w", got, n, ctx.Err())
		}
	}
}

// AddMedia stores a file users can send; it returns its media id.
func (s *Server) AddMedia(mimeType string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	id := fmt.Sprintf("media-in-%d", s.next)
	s.media[id] = mediaFile{mime: mimeType, data: data}
	return id
}

// Webhook posts notifications to a herald webhook URL.
type Webhook struct {
	s   *Server
	URL string
	// Secret signs payloads; Server.AppSecret by default.
	Secret string
	// Unsigned sends no X-Hub-Signature-256.
	Unsigned bool
}

// Webhook returns a sender to url (http://…/whatsapp/webhook).
func (s *Server) Webhook(url string) *Webhook {
	return &Webhook{s: s, URL: url, Secret: s.opts.AppSecret}
}

// Signed is a copy of h that signs with secret (a wrong one, say).
func (h *Webhook) Signed(secret string) *Webhook {
	c := *h
	c.Secret, c.Unsigned = secret, false
	return &c
}

// WithoutSignature is a copy of h that sends no signature.
func (h *Webhook) WithoutSignature() *Webhook {
	c := *h
	c.Unsigned = true
	return &c
}

// Message is one inbound message for a payload: From, Name and ID are
// filled in when empty; Body is the message's type-specific part
// ("text": {"body": …}).
type Message struct {
	From, Name, ID, Type string
	Body                 any
	// ContextID is the message replied to (a button's message).
	ContextID string
}

// Payload is the documented notification JSON for messages (and
// statuses: pass Status maps in statuses).
func (s *Server) Payload(msgs []Message, statuses ...map[string]any) []byte {
	s.mu.Lock()
	now := time.Now()
	var contacts, list []map[string]any
	for i := range msgs {
		m := &msgs[i]
		if m.ID == "" {
			s.next++
			m.ID = fmt.Sprintf("wamid.IN%06d", s.next)
		}
		contacts = append(contacts, map[string]any{"profile": map[string]string{"name": m.Name}, "wa_id": m.From})
		one := map[string]any{"from": m.From, "id": m.ID, "timestamp": strconv.FormatInt(now.Unix(), 10), "type": m.Type, m.Type: m.Body}
		if m.ContextID != "" {
			one["context"] = map[string]string{"from": "15550100000", "id": m.ContextID}
		}
		list = append(list, one)
	}
	s.mu.Unlock()
	value := map[string]any{
		"messaging_product": "whatsapp",
		"metadata":          map[string]string{"display_phone_number": "15550100000", "phone_number_id": s.opts.PhoneNumberID},
	}
	if len(list) > 0 {
		value["contacts"], value["messages"] = contacts, list
	}
	if len(statuses) > 0 {
		value["statuses"] = statuses
	}
	b, _ := json.Marshal(map[string]any{
		"object": "whatsapp_business_account",
		"entry":  []any{map[string]any{"id": "102290129340398", "changes": []any{map[string]any{"field": "messages", "value": value}}}},
	})
	return b
}

// Post signs body and posts it; it returns the status code. A 200 for
// a payload with messages opens their senders' windows on the fake.
func (h *Webhook) Post(ctx context.Context, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if !h.Unsigned {
		req.Header.Set(whatsapp.SignatureHeader, webhook.Sign(body, h.Secret))
	}
	if h.s != nil {
		h.s.delivering(body)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode == http.StatusOK && h.s != nil {
		h.s.opened(body)
	}
	return res.StatusCode, nil
}

// delivering notes the ids of the messages in body: herald may send read
// receipts for them.
func (s *Server) delivering(body []byte) {
	s.eachMessage(body, func(m whatsapp.InboundMessage) { s.inbound[m.ID] = true })
}

// opened notes the senders of a delivered payload: they may be written
// to for 24 hours.
func (s *Server) opened(body []byte) {
	s.eachMessage(body, func(m whatsapp.InboundMessage) { s.lastIn[m.From] = time.Now() })
}

// eachMessage calls fn, under the lock, for every message in body.
func (s *Server) eachMessage(body []byte, fn func(whatsapp.InboundMessage)) {
	var p whatsapp.Payload
	if json.Unmarshal(body, &p) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range p.Entry {
		for _, c := range e.Changes {
			for _, m := range c.Value.Messages {
				fn(m)
			}
		}
	}
}

// Send posts one message and fails unless it was answered 200.
func (h *Webhook) Send(ctx context.Context, m Message) (id string, err error) {
	msgs := []Message{m}
	body := h.s.Payload(msgs)
	var p whatsapp.Payload
	json.Unmarshal(body, &p)
	id = p.Entry[0].Changes[0].Value.Messages[0].ID
	code, err := h.Post(ctx, body)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("whatsapptest: webhook answered %d", code)
	}
	return id, err
}

// Text is a text message from a user.
func Text(from, name, text string) Message {
	return Message{From: from, Name: name, Type: "text", Body: map[string]string{"body": text}}
}

// Media is a media message (image, audio, video, document, sticker).
func Media(from, name, kind, mediaID, mimeType, caption, filename string) Message {
	b := map[string]any{"id": mediaID, "mime_type": mimeType, "sha256": "0"}
	if caption != "" {
		b["caption"] = caption
	}
	if filename != "" {
		b["filename"] = filename
	}
	if kind == "voice" {
		kind, b["voice"] = "audio", true
	}
	return Message{From: from, Name: name, Type: kind, Body: b}
}

// ButtonReply is a press of a reply button (or, list true, a list row)
// under the message contextID.
func ButtonReply(from, name, contextID, id, title string, list bool) Message {
	kind := "button_reply"
	if list {
		kind = "list_reply"
	}
	return Message{From: from, Name: name, Type: "interactive", ContextID: contextID,
		Body: map[string]any{"type": kind, kind: map[string]string{"id": id, "title": title}}}
}

// Verify performs Meta's verification GET with token; it returns the
// status code and body.
func (h *Webhook) Verify(ctx context.Context, token, challenge string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL+"?hub.mode=subscribe&hub.verify_token="+token+"&hub.challenge="+challenge, nil)
	if err != nil {
		return 0, "", err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), nil
}
