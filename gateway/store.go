package gateway

// store.go: what the gateway needs of herald's state store. The store is
// an interface defined here, where it is consumed, so that the engine
// behind it (SQLite for one process, PostgreSQL for replicas) is chosen by
// whoever builds the Runner; *sessions.Store is one on either.

import (
	"context"
	"time"

	"github.com/heraldgw/herald/sessions"
)

// Store keeps sessions and their messages, the inbound journal, the send
// queue and pairings. Every write has committed when it returns.
type Store interface {
	// sessions and messages
	OpenSession(ctx context.Context, key string) (*sessions.Session, error)
	Session(ctx context.Context, id string) (*sessions.Session, error)
	OpenSessionsOfChat(ctx context.Context, platform, chatID, threadID string) ([]*sessions.Session, error)
	Append(ctx context.Context, create *sessions.Session, msgs ...sessions.Message) error
	EndSession(ctx context.Context, id, reason string, at time.Time) error
	ReplaceSession(ctx context.Context, old *sessions.Session, reason string, next *sessions.Session) error
	Messages(ctx context.Context, sessionID string, limit int) ([]sessions.Message, error)
	MoveChat(ctx context.Context, platform, from, to string) (int, error)

	// the inbound journal
	RecordInbound(ctx context.Context, in sessions.Inbound) (fresh bool, err error)
	SetInboundState(ctx context.Context, platform, chatID, messageID, state string, at time.Time) error
	FinishInbound(ctx context.Context, keys []sessions.InboundKey, state string, at time.Time) error
	UnfinishedInbound(ctx context.Context) ([]sessions.Inbound, error)
	PruneInbound(ctx context.Context, cutoff time.Time, keep int) (int64, error)

	// the send queue
	QueueOutbound(ctx context.Context, rows ...sessions.Outbound) error
	PendingOutbound(ctx context.Context) ([]sessions.Outbound, error)
	DeleteOutbound(ctx context.Context, id int64) error
	DeferOutbound(ctx context.Context, platform, chatID string, notBefore time.Time) error

	// pairing
	RequestPairing(ctx context.Context, platform, userID, userName, chatID string, now time.Time) (sessions.PairingRequest, error)
	Paired(ctx context.Context, platform, userID string) (bool, error)

	// Check reports damage to the store (run once at start).
	Check(ctx context.Context) error
	// ReplicaID names this process among the replicas sharing the store.
	ReplicaID() string
}

var _ Store = (*sessions.Store)(nil)
