package sessions

// reset.go: the automatic reset policy (Hermes' session_reset). It is a
// pure function of times so that the gateway's expiry sweep and its
// per-message check agree, and so tests need no clock.

import (
	"fmt"
	"strings"
	"time"
)

// Reset modes.
const (
	ResetDaily = "daily"
	ResetIdle  = "idle"
	ResetBoth  = "both"
	ResetNone  = "none"
)

// ResetPolicy says when a session expires by itself.
type ResetPolicy struct {
	// Mode is daily, idle, both or none ("" means both).
	Mode string
	// AtHour is the daily reset hour (0–23, local time of the times
	// given), default 4.
	AtHour int
	// IdleMinutes is how long a session may sit unused, default 1440.
	IdleMinutes int
}

// DefaultResetPolicy is Hermes' default: both, at 4:00, after a day idle.
var DefaultResetPolicy = ResetPolicy{Mode: ResetBoth, AtHour: 4, IdleMinutes: 1440}

// Validate reports a policy that names an unknown mode or an impossible
// hour.
func (p ResetPolicy) Validate() error {
	switch strings.ToLower(p.Mode) {
	case "", ResetDaily, ResetIdle, ResetBoth, ResetNone:
	default:
		return fmt.Errorf("session_reset.mode %q: want daily, idle, both or none", p.Mode)
	}
	if p.AtHour < 0 || p.AtHour > 23 {
		return fmt.Errorf("session_reset.at_hour %d: want 0–23", p.AtHour)
	}
	if p.IdleMinutes < 0 {
		return fmt.Errorf("session_reset.idle_minutes %d: must not be negative", p.IdleMinutes)
	}
	return nil
}

// Expired reports whether a session last active at last has expired at
// now, and why ("idle" or "daily"); idle is checked first.
func (p ResetPolicy) Expired(last, now time.Time) (reason string, expired bool) {
	mode := strings.ToLower(p.Mode)
	if mode == "" {
		mode = ResetBoth
	}
	if mode == ResetNone {
		return "", false
	}
	if mode == ResetIdle || mode == ResetBoth {
		idle := p.IdleMinutes
		if idle <= 0 {
			idle = DefaultResetPolicy.IdleMinutes
		}
		if now.Sub(last) >= time.Duration(idle)*time.Minute {
			return ResetIdle, true
		}
	}
	if mode == ResetDaily || mode == ResetBoth {
		if last.Before(p.lastDailyReset(now)) {
			return ResetDaily, true
		}
	}
	return "", false
}

// lastDailyReset is the most recent AtHour:00 at or before now, in now's
// location.
func (p ResetPolicy) lastDailyReset(now time.Time) time.Time {
	h := p.AtHour
	if h < 0 || h > 23 {
		h = DefaultResetPolicy.AtHour
	}
	y, m, d := now.Date()
	t := time.Date(y, m, d, h, 0, 0, 0, now.Location())
	if now.Before(t) {
		t = time.Date(y, m, d-1, h, 0, 0, 0, now.Location())
	}
	return t
}

// Describe is the reason as a user reads it in the reset notice.
func (p ResetPolicy) Describe(reason string) string {
	switch reason {
	case ResetIdle:
		idle := p.IdleMinutes
		if idle <= 0 {
			idle = DefaultResetPolicy.IdleMinutes
		}
		d := time.Duration(idle) * time.Minute
		if d%time.Hour == 0 {
			return fmt.Sprintf("inactive for %dh", int(d.Hours()))
		}
		return fmt.Sprintf("inactive for %dm", idle)
	case ResetDaily:
		return fmt.Sprintf("daily reset at %d:00", p.AtHour)
	}
	return reason
}
