package gateway

// approval.go: the agent's approval prompts in a chat. The prompt is
// posted to the chat (with Approve once / Approve for session / Always /
// Deny buttons where the platform draws them, press.go), the waiting
// message's receipt resolves with awaiting_input, and the next /approve…
// or /deny in that chat, or a press by someone allowed, answers. A typed
// answer makes the /approve message the one the rest of the turn answers
// (its receipt covers the rest of the turn); a press leaves the asker's.
// Whatever ends the wait, the prompt's buttons are closed to show it.

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
const ApprovalPromptText = "⚠️ This command needs your approval:\n```\n%s\n```\nReason: %s\n\n" + approvalInstructions

// approvalInstructions ends every prompt; a closed prompt shows the
// decision in its place.
const approvalInstructions = "Reply /approve, /approve session, /approve always or /deny."

type pendingApproval struct {
	answer chan approvalAnswer // buffered 1; written once, by resolveApproval
	// token names this approval in its buttons' data (press.go).
	token string
	// asker is the job whose message needs the approval; where is the
	// chat (and thread) its prompt went to.
	asker *job
	where herald.Target
}

type approvalAnswer struct {
	choice agent.Choice
	// by is the typed answer's job, which the rest of the turn answers;
	// nil for a press (the asker's job goes on being answered).
	by *job
	// who names the person who decided, for the closed prompt.
	who string
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
	c.mu.Lock()
	asker := c.running
	var p *pendingApproval
	if asker != nil {
		p = &pendingApproval{answer: make(chan approvalAnswer, 1), token: newApprovalToken(), asker: asker, where: asker.msg.Source.Target()}
		c.approval = p
	}
	c.mu.Unlock()
	if asker == nil {
		return agent.ChoiceDeny, errors.New("approval asked outside a turn")
	}
	r.pressable.add(p.token, c, p)
	defer r.pressable.remove(p.token)
	defer r.shareApproval(ctx, c, p)()
	prompt := r.postPrompt(asker, p, fmt.Sprintf(ApprovalPromptText, req.Command, req.Description))
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
			r.closePrompt(prompt, "⌛ No answer in time")
			r.reply(asker, "⌛ No answer in time: the command was not run.")
			return agent.ChoiceTimeout, nil
		}
		r.closePrompt(prompt, "⏹ No longer waiting: the turn was stopped")
		return agent.ChoiceDeny, ctx.Err()
	}
	r.closePrompt(prompt, decisionText(ans))
	c.mu.Lock()
	if c.running != nil && ans.by != nil {
		c.running = ans.by
	}
	c.mu.Unlock()
	return ans.choice, nil
}

// resolveApproval hands ans to p if p is still the approval c waits for,
// and reports whether it did. It is the one way an approval is answered
// (typed or pressed); under the chat's lock, so the prompt cannot time
// out in between unseen.
func (r *Runner) resolveApproval(c *chat, p *pendingApproval, ans approvalAnswer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p == nil || c.approval != p {
		return false
	}
	c.approval = nil
	p.answer <- ans
	return true
}

// approvalChoice reads the argument of /approve (canonical "approve") or
// /deny; ok is false for an argument /approve does not know.
func approvalChoice(canonical, args string) (choice agent.Choice, ok bool) {
	if canonical != "approve" {
		return agent.ChoiceDeny, true
	}
	switch strings.ToLower(strings.TrimSpace(args)) {
	case "", "once":
		return agent.ChoiceOnce, true
	case "session":
		return agent.ChoiceSession, true
	case "always":
		return agent.ChoiceAlways, true
	}
	return "", false
}

// answerAck is what the person who answered is told.
func answerAck(choice agent.Choice) string {
	if choice == agent.ChoiceDeny {
		return "❌ Denied."
	}
	return fmt.Sprintf("✅ Approved (%s).", choice)
}

// answerApproval is /approve [session|always] and /deny.
func (r *Runner) answerApproval(c *chat, j *job, canonical, args string) {
	choice, ok := approvalChoice(canonical, args)
	if !ok {
		r.reply(j, "Usage: /approve, /approve session or /approve always")
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: c.sessID()})
		return
	}
	c.mu.Lock()
	p := c.approval
	c.mu.Unlock()
	if p == nil {
		r.reply(j, "Nothing is waiting for approval.")
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: c.sessID()})
		return
	}
	r.reply(j, answerAck(choice))
	// the turn then answers j and resolves it when it ends
	if !r.resolveApproval(c, p, approvalAnswer{choice: choice, by: j, who: personName(j.msg.Source.UserName, j.msg.Source.UserID)}) {
		r.reply(j, "Too late: the approval prompt had already timed out.")
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: c.sessID()})
	}
}
