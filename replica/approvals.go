package replica

// approvals.go: approvals as rows, so that a button pressed on one replica
// answers an approval waiting on another. The answer is written once
// (choice IS NULL), then NOTIFY wakes the waiting replica; its poll reads
// answers a lost notification did not bring.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
)

// OpenApproval records an approval waiting here.
func (c *Coordinator) OpenApproval(ctx context.Context, a gateway.SharedApproval) (<-chan gateway.SharedAnswer, error) {
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return nil, err
	}
	ch := make(chan gateway.SharedAnswer, 1)
	c.mu.Lock()
	c.waiters[a.Token] = ch
	c.mu.Unlock()
	_, err = c.db.ExecContext(ctx, `INSERT INTO herald_approvals (token, chat_key, platform, chat_id, thread_id, asker, replica)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, a.Token, a.Key, a.Platform, a.ChatID, a.ThreadID, a.Asker, c.cfg.ID)
	if err != nil {
		c.dropWaiter(a.Token)
		return nil, fmt.Errorf("replica: record approval: %w", err)
	}
	return ch, nil
}

func (c *Coordinator) dropWaiter(token string) {
	c.mu.Lock()
	delete(c.waiters, token)
	c.mu.Unlock()
}

// CloseApproval ends a wait and deletes its row.
func (c *Coordinator) CloseApproval(token string) {
	c.dropWaiter(token)
	ctx, cancel, err := c.scope(context.Background())
	defer cancel()
	if err != nil {
		return
	}
	ctx, cancelT := context.WithTimeout(ctx, 10*time.Second)
	defer cancelT()
	if _, err := c.db.ExecContext(ctx, `DELETE FROM herald_approvals WHERE token = $1`, token); err != nil {
		c.log.Warn("could not delete an approval that no longer waits", "err", err)
	}
}

// LookupApproval reads a waiting (unanswered) approval.
func (c *Coordinator) LookupApproval(ctx context.Context, token string) (gateway.SharedApproval, bool, error) {
	a := gateway.SharedApproval{Token: token}
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return a, false, err
	}
	err = c.db.QueryRowContext(ctx, `SELECT chat_key, platform, chat_id, thread_id, asker FROM herald_approvals
		WHERE token = $1 AND choice IS NULL`, token).Scan(&a.Key, &a.Platform, &a.ChatID, &a.ThreadID, &a.Asker)
	if errors.Is(err, sql.ErrNoRows) {
		return a, false, nil
	}
	if err != nil {
		return a, false, fmt.Errorf("replica: look up approval: %w", err)
	}
	return a, true, nil
}

// AnswerApproval writes the answer once and wakes the waiting replica.
func (c *Coordinator) AnswerApproval(ctx context.Context, token string, ans gateway.SharedAnswer) (bool, error) {
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return false, err
	}
	res, err := c.db.ExecContext(ctx, `UPDATE herald_approvals SET choice = $2, answered_by = $3, answered_at = now()
		WHERE token = $1 AND choice IS NULL`, token, string(ans.Choice), ans.Who)
	if err != nil {
		return false, fmt.Errorf("replica: answer approval: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if _, err := c.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, chanApproval, token); err != nil {
		c.log.Warn("could not notify an approval's answer; the waiting replica polls for it", "err", err)
	}
	return true, nil
}

// approvalAnswered reads the answer to an approval waiting here.
func (c *Coordinator) approvalAnswered(ctx context.Context, token string) {
	c.mu.Lock()
	_, waiting := c.waiters[token]
	c.mu.Unlock()
	if waiting {
		c.readAnswers(ctx, []string{token})
	}
}

// pollApprovals reads answers to every approval waiting here.
func (c *Coordinator) pollApprovals(ctx context.Context) {
	c.mu.Lock()
	tokens := make([]string, 0, len(c.waiters))
	for t := range c.waiters {
		tokens = append(tokens, t)
	}
	c.mu.Unlock()
	if len(tokens) > 0 {
		c.readAnswers(ctx, tokens)
	}
}

func (c *Coordinator) readAnswers(ctx context.Context, tokens []string) {
	rows, err := c.db.QueryContext(ctx, `SELECT token, choice, answered_by FROM herald_approvals
		WHERE token = ANY($1) AND choice IS NOT NULL`, tokens)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("could not read approval answers", "err", err)
		}
		return
	}
	defer rows.Close()
	for rows.Next() {
		var token, choice, who string
		if rows.Scan(&token, &choice, &who) != nil {
			continue
		}
		c.mu.Lock()
		ch := c.waiters[token]
		delete(c.waiters, token)
		c.mu.Unlock()
		if ch != nil {
			ch <- gateway.SharedAnswer{Choice: agent.Choice(choice), Who: who}
		}
	}
}
