package cron

// leader.go: one scheduler among several gateway replicas. With
// Config.Leader set, Run schedules only while this process leads; the
// at-most-once claim of each slot stays, so a slot is never run twice
// even while two processes believe they lead.

import (
	"context"
	"time"
)

// Leader elects the process that runs the scheduler (replica.Leader, a
// PostgreSQL advisory lock).
type Leader interface {
	// Lead blocks until this process leads, trying every interval, or ctx
	// ends (then it returns an error). lost is closed when leadership
	// ends; the leader checks that it still leads every interval.
	Lead(ctx context.Context, every time.Duration) (lost <-chan struct{}, err error)
}

// runLed schedules while this process leads, and waits to lead again
// after losing it, until ctx ends.
func (s *Scheduler) runLed(ctx context.Context) error {
	for ctx.Err() == nil {
		lost, err := s.cfg.Leader.Lead(ctx, s.cfg.Tick)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.log.Error("cron: leader election failed; the scheduler does not run here", "err", err)
			return err
		}
		lctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-lost:
				cancel()
			case <-lctx.Done():
			}
		}()
		s.log.Info("cron: this process leads; scheduling")
		s.schedule(lctx)
		cancel()
		if ctx.Err() == nil {
			s.log.Warn("cron: leadership lost; another process schedules")
		}
	}
	return nil
}
