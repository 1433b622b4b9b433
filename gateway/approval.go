package gateway

// approval.go: the agent's approval prompts in a chat. The prompt is
// posted to the chat, the waiting message's receipt resolves with
// awaiting_input, and the next /approve… or /deny in that chat answers;
// from then on the turn answers the /approve message (its receipt covers
// the rest of the turn).

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
)

// ApprovalPromptText is posted for a dangerous command (command, reason).
const ApprovalPromptText = "⚠️ This command needs your approval:\n```\n%s\n```\nReason: %s\n\nReply /approve, /approve session, /approve always or /deny."

type pendingApproval struct {
	answer chan approvalAnswer // buffered 1; written once
}

type approvalAnswer struct {
	choice agent.Choice
	by     *job
}

// chatApprover implements agent.Approver for one chat.
type chatApprover struct {
	r       *Runner
	c       *chat
	session string
}

var _ agent.Approver = (*chatApprover)(nil)

// approver is the Approver for a turn on platform p: the configured one
// for p, else the chat's.
func (r *Runner) approver(c *chat, sessionID string, p herald.Platform) agent.Approver {
	if a, ok := r.cfg.Approvers[p]; ok {
		return a
	}
	return &chatApprover{r: r, c: c, session: sessionID}
}

func (a *chatApprover) Approve(ctx context.Context, req agent.ApprovalRequest) (agent.Choice, error) {
	r, c := a.r, a.c
	ctx, cancel := context.WithTimeout(ctx, r.cfg.ApprovalTimeout)
	defer cancel()
	p := &pendingApproval{answer: make(chan approvalAnswer, 1)}
	c.mu.Lock()
	asker := c.running
	if asker != nil {
		c.approval = p
	}
	c.mu.Unlock()
	if asker == nil {
		return agent.ChoiceDeny, errors.New("approval asked outside a turn")
	}
	r.reply(asker, fmt.Sprintf(ApprovalPromptText, req.Command, req.Description))
	asker.rec.Resolve(adapters.Outcome{Status: adapters.StatusAwaitingInput, SessionID: a.session})
	var ans approvalAnswer
	select {
	case ans = <-p.answer:
	case <-ctx.Done():
		c.mu.Lock()
		pending := c.approval == p
		if pending {
			c.approval = nil
		}
		c.mu.Unlock()
		if !pending { // answered at the last moment: the answer stands
			ans = <-p.answer
			break
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			r.reply(asker, "⌛ No answer in time: the command was not run.")
			return agent.ChoiceTimeout, nil
		}
		return agent.ChoiceDeny, ctx.Err()
	}
	c.mu.Lock()
	if c.running != nil {
		c.running = ans.by
	}
	c.mu.Unlock()
	return ans.choice, nil
}

// answerApproval is /approve [session|always] and /deny.
func (r *Runner) answerApproval(c *chat, j *job, canonical, args string) {
	choice := agent.ChoiceDeny
	if canonical == "approve" {
		switch strings.ToLower(strings.TrimSpace(args)) {
		case "", "once":
			choice = agent.ChoiceOnce
		case "session":
			choice = agent.ChoiceSession
		case "always":
			choice = agent.ChoiceAlways
		default:
			r.reply(j, "Usage: /approve, /approve session or /approve always")
			j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: c.sessID()})
			return
		}
	}
	c.mu.Lock()
	p := c.approval
	c.mu.Unlock()
	if p == nil {
		r.reply(j, "Nothing is waiting for approval.")
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: c.sessID()})
		return
	}
	if choice == agent.ChoiceDeny {
		r.reply(j, "❌ Denied.")
	} else {
		r.reply(j, fmt.Sprintf("✅ Approved (%s).", choice))
	}
	// hand over under the lock, so the prompt cannot time out in between
	// unseen; the turn then answers j and resolves it when it ends
	c.mu.Lock()
	taken := c.approval == p
	if taken {
		c.approval = nil
		p.answer <- approvalAnswer{choice: choice, by: j}
	}
	c.mu.Unlock()
	if !taken {
		r.reply(j, "Too late: the approval prompt had already timed out.")
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: c.sessID()})
	}
}
