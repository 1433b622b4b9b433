package sessions

// pairing.go: pairing codes for users a platform does not know yet. A
// code is requested by the gateway when an unknown user writes in a DM and
// approved by the owner with `herald pairing approve <platform> <code>`;
// the gateway reads approvals from the store on every check, so an
// approval made by the CLI while a gateway runs applies at once.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Pairing rules, as Hermes has them.
const (
	// PairingAlphabet leaves out 0/O and 1/I, which people misread.
	PairingAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	PairingCodeLen  = 8
	PairingTTL      = time.Hour
	// PairingInterval is how often one user may ask for a code.
	PairingInterval = 10 * time.Minute
	// MaxPendingPairings is how many codes one platform may have waiting.
	MaxPendingPairings = 3
	// MaxPairingFailures wrong codes within PairingLockout lock a
	// platform's approvals (and new codes) for PairingLockout.
	MaxPairingFailures = 5
	PairingLockout     = time.Hour
)

// Pairing errors.
var (
	ErrPairingRateLimited = errors.New("pairing: this user asked for a code less than 10 minutes ago")
	ErrTooManyPairings    = errors.New("pairing: too many codes are waiting for approval on this platform")
	ErrPairingLocked      = errors.New("pairing: too many wrong codes; pairing is locked for an hour")
	ErrNoSuchPairingCode  = errors.New("pairing: no such code (it may have expired)")
)

// PairingRequest is a code waiting for approval.
type PairingRequest struct {
	Platform  string    `json:"platform"`
	Code      string    `json:"code"`
	UserID    string    `json:"user_id"`
	UserName  string    `json:"user_name"`
	ChatID    string    `json:"chat_id"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Pairing is an approved user.
type Pairing struct {
	Platform   string    `json:"platform"`
	UserID     string    `json:"user_id"`
	UserName   string    `json:"user_name"`
	ApprovedAt time.Time `json:"approved_at"`
}

// Attempt kinds in pairing_attempts.
const (
	attemptRequest = "request"
	attemptFailure = "failure"
)

// NewPairingCode returns a random code from PairingAlphabet.
func NewPairingCode() string {
	var b [PairingCodeLen]byte
	rand.Read(b[:])
	for i := range b {
		// 256 is a multiple of 32: no bias
		b[i] = PairingAlphabet[int(b[i])%len(PairingAlphabet)]
	}
	return string(b[:])
}

// RequestPairing issues a code for an unknown user. It fails with
// ErrPairingRateLimited when the user asked within PairingInterval (the
// gateway then says nothing), ErrTooManyPairings when the platform has
// MaxPendingPairings codes waiting and ErrPairingLocked during a lockout
// (the gateway then says "too many requests"; both count as the user's
// request for the rate limit). A new code replaces the user's older one.
func (s *Store) RequestPairing(ctx context.Context, platform, userID, userName, chatID string, now time.Time) (PairingRequest, error) {
	req := PairingRequest{Platform: platform, UserID: userID, UserName: userName, ChatID: chatID, CreatedAt: now, ExpiresAt: now.Add(PairingTTL)}
	var outcome error
	err := s.Write(ctx, func(tx *sql.Tx) error {
		outcome = nil
		if _, err := tx.Exec(`DELETE FROM pairing_codes WHERE expires_at <= ?`, ms(now)); err != nil {
			return err
		}
		if _, err := tx.Exec(`DELETE FROM pairing_attempts WHERE at <= ?`, ms(now.Add(-PairingLockout-PairingInterval))); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(`SELECT COUNT(*) FROM pairing_attempts WHERE platform = ? AND user_id = ? AND kind = ? AND at > ?`,
			platform, userID, attemptRequest, ms(now.Add(-PairingInterval))).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			outcome = ErrPairingRateLimited
			return nil
		}
		if _, err := tx.Exec(`INSERT INTO pairing_attempts(platform, user_id, kind, at) VALUES (?,?,?,?)`, platform, userID, attemptRequest, ms(now)); err != nil {
			return err
		}
		locked, err := lockedTx(tx, platform, now)
		if err != nil {
			return err
		}
		if locked {
			outcome = ErrPairingLocked
			return nil
		}
		if _, err := tx.Exec(`DELETE FROM pairing_codes WHERE platform = ? AND user_id = ?`, platform, userID); err != nil {
			return err
		}
		if err := tx.QueryRow(`SELECT COUNT(*) FROM pairing_codes WHERE platform = ?`, platform).Scan(&n); err != nil {
			return err
		}
		if n >= MaxPendingPairings {
			outcome = ErrTooManyPairings
			return nil
		}
		for range 8 {
			req.Code = NewPairingCode()
			res, err := tx.Exec(`INSERT INTO pairing_codes(platform, code, user_id, user_name, chat_id, created_at, expires_at) VALUES (?,?,?,?,?,?,?)
				ON CONFLICT DO NOTHING`,
				platform, req.Code, userID, userName, chatID, ms(now), ms(req.ExpiresAt))
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k == 1 {
				return nil
			}
		}
		return errors.New("could not draw an unused code")
	})
	if err != nil {
		return PairingRequest{}, fmt.Errorf("sessions: request pairing for %s/%s: %w", platform, userID, err)
	}
	if outcome != nil {
		return PairingRequest{}, outcome
	}
	return req, nil
}

func lockedTx(tx *sql.Tx, platform string, now time.Time) (bool, error) {
	var n int
	err := tx.QueryRow(`SELECT COUNT(*) FROM pairing_attempts WHERE platform = ? AND kind = ? AND at > ?`,
		platform, attemptFailure, ms(now.Add(-PairingLockout))).Scan(&n)
	return n >= MaxPairingFailures, err
}

// ApprovePairing approves the user a code was issued to. A wrong or
// expired code counts as a failure; MaxPairingFailures of them lock the
// platform's pairing for PairingLockout (ErrPairingLocked), even for a
// right code.
func (s *Store) ApprovePairing(ctx context.Context, platform, code string, now time.Time) (Pairing, error) {
	code = strings.ToUpper(strings.TrimSpace(code))
	var p Pairing
	var outcome error
	err := s.Write(ctx, func(tx *sql.Tx) error {
		outcome = nil
		locked, err := lockedTx(tx, platform, now)
		if err != nil {
			return err
		}
		if locked {
			outcome = ErrPairingLocked
			return nil
		}
		var userName string
		err = tx.QueryRow(`SELECT user_id, user_name FROM pairing_codes WHERE platform = ? AND code = ? AND expires_at > ?`, platform, code, ms(now)).Scan(&p.UserID, &userName)
		if errors.Is(err, sql.ErrNoRows) {
			outcome = ErrNoSuchPairingCode
			_, err = tx.Exec(`INSERT INTO pairing_attempts(platform, user_id, kind, at) VALUES (?,'',?,?)`, platform, attemptFailure, ms(now))
			return err
		}
		if err != nil {
			return err
		}
		p.Platform, p.UserName, p.ApprovedAt = platform, userName, now
		if _, err := tx.Exec(`INSERT INTO pairings(platform, user_id, user_name, approved_at) VALUES (?,?,?,?)
			ON CONFLICT(platform, user_id) DO UPDATE SET user_name = excluded.user_name, approved_at = excluded.approved_at`,
			platform, p.UserID, userName, ms(now)); err != nil {
			return err
		}
		_, err = tx.Exec(`DELETE FROM pairing_codes WHERE platform = ? AND user_id = ?`, platform, p.UserID)
		return err
	})
	if err != nil {
		return Pairing{}, fmt.Errorf("sessions: approve pairing %s on %s: %w", code, platform, err)
	}
	if outcome != nil {
		return Pairing{}, outcome
	}
	return p, nil
}

// Paired reports whether a user was approved on a platform.
func (s *Store) Paired(ctx context.Context, platform, userID string) (bool, error) {
	var one int
	err := s.rdb.QueryRowContext(ctx, `SELECT 1 FROM pairings WHERE platform = ? AND user_id = ?`, platform, userID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sessions: read pairing %s/%s: %w", platform, userID, err)
	}
	return true, nil
}

// RevokePairing removes an approval; it reports whether there was one.
func (s *Store) RevokePairing(ctx context.Context, platform, userID string) (bool, error) {
	var n int64
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM pairings WHERE platform = ? AND user_id = ?`, platform, userID)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("sessions: revoke pairing %s/%s: %w", platform, userID, err)
	}
	return n > 0, nil
}

// Pairings lists approved users and the codes still waiting at now.
func (s *Store) Pairings(ctx context.Context, now time.Time) ([]Pairing, []PairingRequest, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT platform, user_id, user_name, approved_at FROM pairings ORDER BY platform, approved_at`)
	if err != nil {
		return nil, nil, fmt.Errorf("sessions: list pairings: %w", err)
	}
	var approved []Pairing
	for rows.Next() {
		var p Pairing
		var at int64
		if err := rows.Scan(&p.Platform, &p.UserID, &p.UserName, &at); err != nil {
			rows.Close()
			return nil, nil, err
		}
		p.ApprovedAt = fromMS(at)
		approved = append(approved, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	rows, err = s.rdb.QueryContext(ctx, `SELECT platform, code, user_id, user_name, chat_id, created_at, expires_at FROM pairing_codes WHERE expires_at > ? ORDER BY platform, created_at`, ms(now))
	if err != nil {
		return nil, nil, fmt.Errorf("sessions: list pairing codes: %w", err)
	}
	defer rows.Close()
	var pending []PairingRequest
	for rows.Next() {
		var r PairingRequest
		var c, e int64
		if err := rows.Scan(&r.Platform, &r.Code, &r.UserID, &r.UserName, &r.ChatID, &c, &e); err != nil {
			return nil, nil, err
		}
		r.CreatedAt, r.ExpiresAt = fromMS(c), fromMS(e)
		pending = append(pending, r)
	}
	return approved, pending, rows.Err()
}
