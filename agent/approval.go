package agent

import "context"

// Choice is a person's answer to an approval prompt, in Hermes' words.
type Choice string

const (
	ChoiceOnce    Choice = "once"
	ChoiceSession Choice = "session"
	ChoiceAlways  Choice = "always"
	ChoiceDeny    Choice = "deny"
	ChoiceTimeout Choice = "timeout"
)

// Allowed reports whether the choice lets the command run.
func (c Choice) Allowed() bool { return c == ChoiceOnce || c == ChoiceSession || c == ChoiceAlways }

// ApprovalRequest is what a person is asked about.
type ApprovalRequest struct {
	Turn        *Turn
	Command     string
	Description string
	PatternKey  string
	PatternKeys []string
}

// Approver asks a person whether a dangerous command may run. The gateway
// implements it for chats (a prompt answered by /approve or /deny), herald
// chat with a y/N prompt on the terminal. Where nobody can answer (BOOT.md,
// cron) there is no Approver and the answer is deny.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Choice, error)
}
