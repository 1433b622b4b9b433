package gateway

// press.go: approval prompts with buttons. Where the adapter draws buttons
// (adapters.ButtonSender), a prompt's last part carries Approve once /
// Approve for session / Always / Deny, each naming the approval by a
// fresh random token ("ap:<token>:<choice>"). A press (Runner.Press)
// answers the approval as /approve or /deny would, through the same
// resolveApproval, but only while that approval is the one waiting, only
// in the prompt's chat and thread, and only for the person whose message
// needs it or a listed approver (Config.ApproverUsers). When the wait
// ends, by any answer, a timeout or a stopped turn, the prompt is edited
// to say so and loses its buttons (CloseButtons), off the turn: a failed
// edit is logged and nothing else.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
)

var _ adapters.PressSink = (*Runner)(nil)

// Answers to a press, shown to the presser alone.
const (
	// StaleApprovalText answers a press on a prompt nothing waits on.
	StaleApprovalText = "This approval is no longer waiting."
	// NotYourApprovalText answers a press by someone who may not answer.
	NotYourApprovalText = "Only the person who asked, or an approver, can answer this."
	// UnknownButtonText answers a press whose data herald does not know.
	UnknownButtonText = "This button no longer works."
)

// approvalDataPrefix starts the data of an approval button.
const approvalDataPrefix = "ap:"

// closeTimeout bounds the edit that closes a prompt (retries included).
const closeTimeout = 30 * time.Second

// pressables are the approvals waiting now, by token.
type pressables struct {
	mu sync.Mutex
	m  map[string]pressable
}

type pressable struct {
	c *chat
	p *pendingApproval
}

func (ps *pressables) add(token string, c *chat, p *pendingApproval) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[string]pressable{}
	}
	ps.m[token] = pressable{c: c, p: p}
}

func (ps *pressables) remove(token string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	delete(ps.m, token)
}

func (ps *pressables) get(token string) (pressable, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	x, ok := ps.m[token]
	return x, ok
}

// newApprovalToken is 64 random bits, hex: unguessable, and short enough
// that every button's data stays far under adapters.MaxButtonData.
func newApprovalToken() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// approvalChoices are the buttons' choices, in their order.
var approvalChoices = []agent.Choice{agent.ChoiceOnce, agent.ChoiceSession, agent.ChoiceAlways, agent.ChoiceDeny}

// approvalButtons are a prompt's four buttons for the approval token.
func approvalButtons(token string) []adapters.Button {
	labels := map[agent.Choice]string{agent.ChoiceOnce: "Approve once", agent.ChoiceSession: "Approve for session",
		agent.ChoiceAlways: "Always", agent.ChoiceDeny: "Deny"}
	styles := map[agent.Choice]string{agent.ChoiceOnce: "primary", agent.ChoiceDeny: "danger"}
	out := make([]adapters.Button, 0, len(approvalChoices))
	for _, c := range approvalChoices {
		out = append(out, adapters.Button{Label: labels[c], Data: approvalDataPrefix + token + ":" + string(c), Style: styles[c]})
	}
	return out
}

// parseApprovalData reads a button's data; ok is false when it is not an
// approval button's.
func parseApprovalData(data string) (token string, choice agent.Choice, ok bool) {
	rest, found := strings.CutPrefix(data, approvalDataPrefix)
	if !found {
		return "", "", false
	}
	token, c, found := strings.Cut(rest, ":")
	if !found || token == "" || !slices.Contains(approvalChoices, agent.Choice(c)) {
		return "", "", false
	}
	return token, agent.Choice(c), true
}

// Press implements adapters.PressSink. It never waits on a turn: the
// answer is handed over under the chat's lock, and the prompt is closed
// by the waiting approval.
func (r *Runner) Press(ctx context.Context, pr adapters.Press) string {
	token, choice, ok := parseApprovalData(pr.Data)
	if !ok {
		return UnknownButtonText
	}
	x, ok := r.pressable.get(token)
	if !ok && r.coord != nil {
		return r.pressShared(ctx, pr, token, choice)
	}
	if !ok {
		return StaleApprovalText
	}
	p := x.p
	if pr.Chat.Platform != p.where.Platform || pr.Chat.ChatID != p.where.ChatID || pr.Chat.ThreadID != p.where.ThreadID {
		r.log.Warn("approval button pressed outside its chat; ignored", "platform", pr.Chat.Platform, "chat", pr.Chat.ChatID, "user", pr.UserID)
		return StaleApprovalText
	}
	if !r.mayAnswer(p, pr.UserID) {
		r.log.Info("approval button pressed by someone who may not answer it", "platform", pr.Chat.Platform, "chat", pr.Chat.ChatID, "user", pr.UserID)
		return NotYourApprovalText
	}
	if !r.resolveApproval(x.c, p, approvalAnswer{choice: choice, who: personName(pr.UserName, pr.UserID)}) {
		return StaleApprovalText
	}
	r.log.Info("approval answered by a button", "platform", pr.Chat.Platform, "chat", pr.Chat.ChatID, "user", pr.UserID, "choice", choice)
	return answerAck(choice)
}

// mayAnswer reports whether user may press p's buttons: the person whose
// message needs the approval, or an approver listed for the platform.
func (r *Runner) mayAnswer(p *pendingApproval, user string) bool {
	return r.mayAnswerAs(p.where.Platform, p.asker.msg.Source.UserID, user)
}

// mayAnswerAs reports whether user may answer an approval on platform p
// that asker's message needs.
func (r *Runner) mayAnswerAs(p herald.Platform, asker, user string) bool {
	if user == "" {
		return false
	}
	return user == asker || slices.Contains(r.cfg.ApproverUsers[p], user)
}

// prompt is an approval prompt as posted: where its buttons are, and the
// text of the part that carries them. The zero value has none.
type prompt struct {
	a    adapters.Adapter
	bs   adapters.ButtonSender
	to   herald.Target
	id   string
	text string
}

// postPrompt sends text to the chat j came from, as a reply to j, with
// p's buttons under its last part where the adapter draws buttons.
func (r *Runner) postPrompt(j *job, p *pendingApproval, text string) prompt {
	a, ok := r.adapters[j.msg.Source.Platform]
	bs, drawsButtons := a.(adapters.ButtonSender)
	if !ok || !drawsButtons {
		r.reply(j, text)
		return prompt{}
	}
	to := j.msg.Source.Target()
	outs := numbered(splitFor(r.cfg.Redactor.Redact(text), a), j.msg.ID, r.quoteFor(j.msg))
	last := len(outs) - 1
	outs[last].Buttons = approvalButtons(p.token)
	// the part with the buttons is sent on its own, for its id
	if last > 0 {
		if _, err := r.sendParts(r.baseCtx, a, to, outs[:last]); err != nil {
			return prompt{}
		}
	}
	res, err := r.sendParts(r.baseCtx, a, to, outs[last:])
	if err != nil || res.firstID == "" {
		return prompt{}
	}
	return prompt{a: a, bs: bs, to: to, id: res.firstID, text: outs[last].Text}
}

// closePrompt edits a posted prompt to show decision in place of the
// instructions, and takes its buttons away; in the background, paced and
// retried as sends are, bounded by closeTimeout.
func (r *Runner) closePrompt(pr prompt, decision string) {
	if pr.bs == nil {
		return
	}
	text := closedText(pr.text, decision, pr.a.Limits())
	r.background(func() {
		ctx, cancel := context.WithTimeout(r.baseCtx, closeTimeout)
		defer cancel()
		err := r.retry(ctx, pr.a, pr.to, func(ctx context.Context) error { return safeClose(ctx, pr, text) }, nil)
		if err != nil {
			r.log.Warn("approval prompt not closed; its buttons stay but answer nothing", "platform", pr.a.Platform(), "chat", pr.to.ChatID, "message_id", pr.id, "err", r.cfg.Redactor.Redact(err.Error()))
		}
	})
}

func safeClose(ctx context.Context, pr prompt, text string) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("adapter %s panicked in CloseButtons: %v", pr.a.Platform(), x)
		}
	}()
	return pr.bs.CloseButtons(ctx, pr.to, pr.id, text)
}

// closedText is a prompt part with decision in place of the typed
// instructions; decision alone when that would not fit the platform.
func closedText(text, decision string, lim adapters.Limits) string {
	body := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), approvalInstructions))
	out := decision
	if body != "" {
		out = body + "\n\n" + decision
	}
	if lim.MaxLength > 0 && lim.Len(out) > lim.MaxLength {
		return decision
	}
	return out
}

// decisionText says what was decided and by whom, for a closed prompt.
func decisionText(ans approvalAnswer) string {
	switch ans.choice {
	case agent.ChoiceOnce:
		return "✅ Approved once by " + ans.who
	case agent.ChoiceSession:
		return "✅ Approved for this session by " + ans.who
	case agent.ChoiceAlways:
		return "✅ Always approved by " + ans.who
	}
	return "❌ Denied by " + ans.who
}

// personName is how a closed prompt names a person.
func personName(name, id string) string {
	if name != "" {
		return name
	}
	if id != "" {
		return id
	}
	return "someone"
}
