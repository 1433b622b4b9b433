package whatsapp

// webhook.go: the endpoint Meta calls. GET is the verification handshake;
// POST carries notifications signed with the app secret, decoded here
// into herald.Messages and button presses.

import (
	"context"
	"crypto/hmac"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/webhook"
)

// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the body
// under the app secret.
const SignatureHeader = "X-Hub-Signature-256"

// maxPayload bounds one webhook body (Meta batches at most a few hundred
// KB).
const maxPayload = 4 << 20

// Payload is a webhook notification as Meta posts it.
type Payload struct {
	Object string  `json:"object"`
	Entry  []Entry `json:"entry"`
}

// Entry is one business account's changes.
type Entry struct {
	ID      string   `json:"id"`
	Changes []Change `json:"changes"`
}

// Change is one change; Field "messages" carries messages and statuses.
type Change struct {
	Field string `json:"field"`
	Value Value  `json:"value"`
}

// Value is what changed.
type Value struct {
	Product  string `json:"messaging_product"`
	Metadata struct {
		DisplayPhoneNumber string `json:"display_phone_number"`
		PhoneNumberID      string `json:"phone_number_id"`
	} `json:"metadata"`
	Contacts []Contact        `json:"contacts,omitempty"`
	Messages []InboundMessage `json:"messages,omitempty"`
	Statuses []Status         `json:"statuses,omitempty"`
	Errors   []GraphError     `json:"errors,omitempty"`
}

// Contact names a sender.
type Contact struct {
	WaID    string `json:"wa_id"`
	Profile struct {
		Name string `json:"name"`
	} `json:"profile"`
}

// InboundMessage is one message from a user.
type InboundMessage struct {
	From      string `json:"from"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Context   *struct {
		From string `json:"from"`
		ID   string `json:"id"`
	} `json:"context,omitempty"`
	Text *struct {
		Body string `json:"body"`
	} `json:"text,omitempty"`
	Image    *InboundMedia `json:"image,omitempty"`
	Audio    *InboundMedia `json:"audio,omitempty"`
	Video    *InboundMedia `json:"video,omitempty"`
	Document *InboundMedia `json:"document,omitempty"`
	Sticker  *InboundMedia `json:"sticker,omitempty"`
	Location *struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
		Name      string  `json:"name"`
		Address   string  `json:"address"`
	} `json:"location,omitempty"`
	Button *struct {
		Payload string `json:"payload"`
		Text    string `json:"text"`
	} `json:"button,omitempty"`
	Interactive *struct {
		Type        string       `json:"type"`
		ButtonReply *ReplyChoice `json:"button_reply,omitempty"`
		ListReply   *ReplyChoice `json:"list_reply,omitempty"`
	} `json:"interactive,omitempty"`
}

// InboundMedia is an attachment: fetched by its id.
type InboundMedia struct {
	ID       string `json:"id"`
	MIMEType string `json:"mime_type"`
	SHA256   string `json:"sha256"`
	Caption  string `json:"caption"`
	Filename string `json:"filename"`
	Voice    bool   `json:"voice"`
}

// ReplyChoice is the button or list row a user chose.
type ReplyChoice struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// Status is a delivery status of a message herald sent.
type Status struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	Timestamp   string `json:"timestamp"`
	RecipientID string `json:"recipient_id"`
}

// Inbound is what one payload holds for the gateway, in order.
type Inbound struct {
	Messages []herald.Message
	Presses  []adapters.Press
	// Senders are every sender with the time of their message, presses
	// and ignored kinds included: each opens the user's window.
	Senders []Sender
}

// Sender is one user who wrote, and when.
type Sender struct {
	WaID string
	At   time.Time
}

// Decode reads a webhook body. Changes for another phone number than
// phoneNumberID ("" takes all) are skipped; statuses and message kinds
// herald does not read are left out. Only a body that is not a payload
// at all is an error.
func Decode(body []byte, phoneNumberID string) (Inbound, error) {
	var p Payload
	var in Inbound
	if err := json.Unmarshal(body, &p); err != nil {
		return in, fmt.Errorf("whatsapp webhook: not a notification payload: %w", err)
	}
	for _, e := range p.Entry {
		for _, c := range e.Changes {
			if c.Field != "" && c.Field != "messages" {
				continue
			}
			if phoneNumberID != "" && c.Value.Metadata.PhoneNumberID != "" && c.Value.Metadata.PhoneNumberID != phoneNumberID {
				continue
			}
			names := map[string]string{}
			for _, ct := range c.Value.Contacts {
				names[ct.WaID] = ct.Profile.Name
			}
			for _, m := range c.Value.Messages {
				if m.From == "" || m.ID == "" {
					continue
				}
				at := unixTime(m.Timestamp)
				in.Senders = append(in.Senders, Sender{WaID: m.From, At: at})
				if p, ok := press(m, names[m.From]); ok {
					in.Presses = append(in.Presses, p)
					continue
				}
				if hm, ok := message(m, names[m.From], at); ok {
					in.Messages = append(in.Messages, hm)
				}
			}
		}
	}
	return in, nil
}

func unixTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(n, 0)
}

// press reads an interactive reply.
func press(m InboundMessage, name string) (adapters.Press, bool) {
	if m.Type != "interactive" || m.Interactive == nil {
		return adapters.Press{}, false
	}
	choice := m.Interactive.ButtonReply
	if m.Interactive.Type == "list_reply" || choice == nil {
		choice = m.Interactive.ListReply
	}
	if choice == nil {
		return adapters.Press{}, false
	}
	p := adapters.Press{
		Chat:     herald.Target{Platform: Platform, ChatID: m.From},
		ChatType: herald.ChatDM,
		UserID:   m.From, UserName: name, Data: choice.ID,
	}
	if m.Context != nil {
		p.MessageID = m.Context.ID
	}
	return p, true
}

// message reads a message of a kind herald reads; ok is false for others
// (reactions, contacts cards, unsupported, system).
func message(m InboundMessage, name string, at time.Time) (herald.Message, bool) {
	hm := herald.Message{
		ID:       m.ID,
		Source:   herald.Source{Platform: Platform, ChatID: m.From, ChatType: herald.ChatDM, UserID: m.From, UserName: name},
		Received: at,
	}
	if m.Context != nil {
		hm.ReplyTo = m.Context.ID
	}
	attach := func(kind string, md *InboundMedia) bool {
		if md == nil || md.ID == "" {
			return false
		}
		if kind == herald.MediaAudio && md.Voice {
			kind = herald.MediaVoice
		}
		hm.Text = md.Caption
		hm.Media = []herald.Media{{Type: kind, MIME: md.MIMEType, Name: md.Filename, Ref: md.ID}}
		return true
	}
	switch m.Type {
	case "text":
		if m.Text == nil || m.Text.Body == "" {
			return hm, false
		}
		hm.Text = m.Text.Body
		return hm, true
	case "image", "sticker":
		md := m.Image
		if m.Type == "sticker" {
			md = m.Sticker
		}
		return hm, attach(herald.MediaImage, md)
	case "audio":
		return hm, attach(herald.MediaAudio, m.Audio)
	case "video":
		return hm, attach(herald.MediaVideo, m.Video)
	case "document":
		return hm, attach(herald.MediaDocument, m.Document)
	case "location":
		if m.Location == nil {
			return hm, false
		}
		l := m.Location
		hm.Text = strings.TrimSpace(fmt.Sprintf("[location %.6f, %.6f] %s %s", l.Latitude, l.Longitude, l.Name, l.Address))
		return hm, true
	case "button":
		// a template's quick-reply button: its text is what the user said
		if m.Button == nil || m.Button.Text == "" {
			return hm, false
		}
		hm.Text = m.Button.Text
		return hm, true
	}
	return hm, false
}

// verify answers Meta's verification handshake.
func (a *Adapter) verify(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("hub.mode") != "subscribe" || a.cfg.VerifyToken == "" ||
		subtle.ConstantTimeCompare([]byte(q.Get("hub.verify_token")), []byte(a.cfg.VerifyToken)) != 1 {
		a.log.Warn("whatsapp webhook: verification refused (wrong hub.verify_token or hub.mode)")
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, q.Get("hub.challenge"))
}

// ValidSignature reports whether header is "sha256=" and the hex
// HMAC-SHA256 of body under secret (the webhook platform's Sign, as
// GitHub signs), compared in constant time.
func ValidSignature(secret string, body []byte, header string) bool {
	if secret == "" {
		return false
	}
	return hmac.Equal([]byte(strings.ToLower(strings.TrimSpace(header))), []byte(webhook.Sign(body, secret)))
}

// webhookHandler serves the webhook while Run runs.
func (a *Adapter) webhookHandler(ctx context.Context, sink adapters.Sink) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			a.verify(w, r)
			return
		case http.MethodPost:
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPayload))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, "payload too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if !ValidSignature(a.cfg.AppSecret, body, r.Header.Get(SignatureHeader)) {
			a.log.Warn("whatsapp webhook: payload with a missing or wrong X-Hub-Signature-256 refused", "remote", r.RemoteAddr)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		in, err := Decode(body, a.cfg.PhoneNumberID)
		if err != nil {
			// Meta would deliver it again and again: say so, and drop it
			a.log.Warn("whatsapp webhook: unreadable payload dropped", "err", err)
			w.WriteHeader(http.StatusOK)
			return
		}
		for _, s := range in.Senders {
			a.windows.seen(ctx, s.WaID, s.At)
		}
		for _, m := range in.Messages {
			a.received(m.Source.UserID, m.ID)
			if adapters.Refused(sink.Receive(ctx, m)) {
				http.Error(w, "shutting down", http.StatusServiceUnavailable)
				return
			}
		}
		for _, p := range in.Presses {
			a.handlePress(ctx, sink, p)
		}
		w.WriteHeader(http.StatusOK)
	})
}
