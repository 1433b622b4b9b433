package adapters

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/heraldgw/herald"
)

// Adapter is one platform connection.
type Adapter interface {
	// Platform is the platform's name ("telegram", …).
	Platform() herald.Platform
	// Run connects and serves until ctx ends, handing inbound messages to
	// sink. It returns nil on a clean stop; a *FatalError when it cannot
	// go on (the gateway does not restart it).
	Run(ctx context.Context, sink Sink) error
	// Send delivers one message (already formatted and split to Limits).
	Send(ctx context.Context, to herald.Target, m Outgoing) (Sent, error)
	// Limits declares the platform's message size rule.
	Limits() Limits
}

// Outgoing is one message to send.
type Outgoing struct {
	Text string
	// Plain asks for no markup (the retry after a formatting failure).
	Plain bool
	// ReplyTo is a platform message id to reply to, if any.
	ReplyTo string
	// Cause is the id of the inbound message this one answers ("" for
	// notices); the local platform uses it to return replies to the
	// request that caused them.
	Cause string
	// Part and Parts number a split message (1-based).
	Part, Parts int
	// Buttons are drawn in one row under the text by adapters that
	// implement ButtonSender; others never get any.
	Buttons []Button
}

// Sent is what the platform said about a sent message.
type Sent struct {
	MessageID string
}

// Limits is a platform's message size rule.
type Limits struct {
	// MaxLength is the longest text one message may carry; 0 means no
	// limit.
	MaxLength int
	// Count measures text the way the platform does; nil counts runes.
	Count func(string) int
}

// Len measures s by the limit's rule.
func (l Limits) Len(s string) int {
	if l.Count != nil {
		return l.Count(s)
	}
	return utf8.RuneCountInString(s)
}

// UTF16Len counts UTF-16 code units, as Telegram does.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// Editor is implemented by adapters that can edit a sent message (for
// streamed replies).
type Editor interface {
	Edit(ctx context.Context, to herald.Target, messageID, text string) error
}

// Deleter is implemented by adapters that can delete a sent message: a
// streamed preview whose final edit failed is removed before the answer
// is sent anew, so no stale preview stays above it.
type Deleter interface {
	Delete(ctx context.Context, to herald.Target, messageID string) error
}

// Pace is how fast a bot may post to one chat, and to all its chats
// together, before the platform starts answering 429. The zero value
// paces nothing.
type Pace struct {
	// Every is the least time between two messages (or edits) to the
	// chat.
	Every time.Duration
	// PerMinute is the most messages the chat takes in any minute; 0 is
	// no such limit.
	PerMinute int
	// BotPerSecond is the most messages the bot may post in any second
	// over all its chats on the platform (Telegram: about 30); 0 is no
	// such limit. It is the platform's, not the chat's: an adapter gives
	// the same value for every chat.
	BotPerSecond int
}

// Pacer is implemented by adapters whose platform limits how fast a bot
// may post; the gateway spaces messages to each chat, and over all the
// adapter's chats, by it. Pace must be cheap and must not block.
type Pacer interface {
	Pace(to herald.Target) Pace
}

// Typer is implemented by adapters that can show a typing indicator.
type Typer interface {
	Typing(ctx context.Context, to herald.Target) error
}

// Healther is implemented by adapters that report their connection state
// ("connected", "connecting", "reconnecting", "failed: …").
type Healther interface {
	Health() string
}

// HomeChanneler is implemented by adapters that know their platform's home
// channel (the target of a bare "platform" address).
type HomeChanneler interface {
	HomeChannel() string
}

// Fetcher is implemented by adapters whose messages carry media: it
// returns the bytes of one attachment as the adapter described it
// (herald.Media's URL and Ref), fetched with the platform's credentials
// where it needs them (Telegram getFile, Slack url_private with the bot
// token). The gateway reads at most its size cap and closes the reader;
// it never fetches a platform URL itself.
type Fetcher interface {
	Fetch(ctx context.Context, m herald.Media) (io.ReadCloser, error)
}

// OutgoingFile is one file to upload.
type OutgoingFile struct {
	// Path is a regular file the gateway has checked may be sent.
	Path string
	// Name is the file name shown in the chat.
	Name string
	// MIME is the sniffed content type; Type its herald.Media kind
	// (image, audio, voice, video, document), which picks the upload
	// method (Telegram sendPhoto, sendVoice, …).
	MIME string
	Type string
	// Size in bytes.
	Size int64
	// Caption is text sent with the file, in the model's Markdown as
	// Outgoing.Text is: the adapter formats it for its platform (and
	// sends a caption too long for the platform after the file). May be "".
	Caption string
	// ReplyTo and Cause are as in Outgoing.
	ReplyTo string
	Cause   string
}

// FileSender is implemented by adapters that can upload files. A
// platform without it gets a text fallback naming the file.
type FileSender interface {
	SendFile(ctx context.Context, to herald.Target, f OutgoingFile) (Sent, error)
	// MaxFileSize is the largest upload the platform takes, in bytes.
	MaxFileSize() int64
}

// Command is one entry of a platform's command menu.
type Command struct {
	// Name is the command without its slash ("new").
	Name string
	// Description is its one-line help.
	Description string
	// Aliases are other names that run it ("reset" for "new"); a menu
	// shows only Name, but an adapter that reads commands out of text
	// (Slack's /herald umbrella) takes them too.
	Aliases []string
}

// CommandMenu is implemented by adapters that show users a menu of
// commands (Telegram's setMyCommands). The gateway calls SetCommands once,
// before Run, with its catalogue; the adapter publishes it when it
// connects. It does not block, and a menu the platform refuses never
// stops the adapter.
type CommandMenu interface {
	SetCommands(cmds []Command)
}

// ChatMover is implemented by sinks (the gateway) that can follow a chat
// to a new id: when a Telegram group is upgraded to a supergroup, its
// adapter calls MoveChat and the chat's open conversations go on under
// the new id. Moving a chat that has nothing left to move does nothing.
type ChatMover interface {
	MoveChat(ctx context.Context, platform herald.Platform, from, to string) error
}

// Sink receives inbound messages; the gateway implements it.
type Sink interface {
	// Receive hands a message to the gateway and returns at once; the
	// Receipt reports how its handling ended.
	Receive(ctx context.Context, m herald.Message) *Receipt
}

// Status values of a handled message.
const (
	StatusDone          = "done"
	StatusSkipped       = "skipped"
	StatusQueued        = "queued"
	StatusInterrupted   = "interrupted"
	StatusAwaitingInput = "awaiting_input"
	StatusPending       = "pending"
)

// Outcome is how the gateway finished with one inbound message.
type Outcome struct {
	Status    string
	SessionID string
	Err       error
}

// Receipt is resolved once, when the gateway is done with a message
// (after the replies it caused were sent).
type Receipt struct {
	once    sync.Once
	done    chan struct{}
	outcome Outcome
}

// NewReceipt returns an unresolved receipt.
func NewReceipt() *Receipt { return &Receipt{done: make(chan struct{})} }

// Resolved returns a receipt already resolved with o.
func Resolved(o Outcome) *Receipt {
	r := NewReceipt()
	r.Resolve(o)
	return r
}

// Resolve sets the outcome; later calls do nothing.
func (r *Receipt) Resolve(o Outcome) {
	r.once.Do(func() {
		r.outcome = o
		close(r.done)
	})
}

// Done is closed when the receipt is resolved.
func (r *Receipt) Done() <-chan struct{} { return r.done }

// Outcome returns the outcome (zero until Done).
func (r *Receipt) Outcome() Outcome {
	select {
	case <-r.done:
		return r.outcome
	default:
		return Outcome{Status: StatusPending}
	}
}

// Refused reports whether the gateway turned a message away at the door
// (it resolves such receipts at once, skipped, with an error: it is
// shutting down, or it could not store the message) rather than taking
// it. An adapter must not acknowledge a refused message to its platform.
func Refused(r *Receipt) bool {
	if r == nil {
		return false
	}
	select {
	case <-r.Done():
		o := r.Outcome()
		return o.Status == StatusSkipped && o.Err != nil
	default:
		return false
	}
}

// RetryAfterError is a rate limit: retry after After.
type RetryAfterError struct {
	After time.Duration
	Err   error
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("rate limited (retry after %s): %v", e.After, e.Err)
}
func (e *RetryAfterError) Unwrap() error { return e.Err }

// TemporaryError is a network failure worth retrying.
type TemporaryError struct{ Err error }

func (e *TemporaryError) Error() string { return "temporary: " + e.Err.Error() }
func (e *TemporaryError) Unwrap() error { return e.Err }

// MaybeSentError is a send whose outcome is unknown: the request was
// written and no answer came in time, so the message may have gone
// through. The gateway does not send it again (that could double it).
type MaybeSentError struct{ Err error }

func (e *MaybeSentError) Error() string {
	return "outcome unknown (may have been sent): " + e.Err.Error()
}
func (e *MaybeSentError) Unwrap() error { return e.Err }

// FatalError stops an adapter for good (an invalid token, say). Msg is a
// sentence for the user, e.g. naming the token to check.
type FatalError struct {
	Msg string
	Err error
}

func (e *FatalError) Error() string {
	if e.Err == nil {
		return e.Msg
	}
	return e.Msg + ": " + e.Err.Error()
}
func (e *FatalError) Unwrap() error { return e.Err }

// IsFatal reports whether err is a *FatalError.
func IsFatal(err error) bool {
	var f *FatalError
	return errors.As(err, &f)
}
