// Package approvalnotify tells someone when a dangerous command waits for
// approval (pre_approval_request) and logs the decision
// (post_approval_response). It observes only: approval hooks cannot veto
// or pre-answer; block a tool with pre_tool_call instead.
//
// The notice is a signed webhook to $HERALD_APPROVAL_WEBHOOK (secret in
// $HERALD_APPROVAL_SECRET); the decision is an "approval" log line.
package approvalnotify

import (
	"context"
	"os"
	"time"

	"github.com/heraldgw/herald/examples/plugins/signed"
	"github.com/heraldgw/herald/hooks"
)

// Plugin is the approval notifier and decision log.
var Plugin = hooks.Plugin{
	Name:        "approval-notify",
	Description: "notify on approval requests and log decisions (pre_approval_request, post_approval_response)",
	Register: func(c *hooks.PluginContext) error {
		log := c.Logger()
		c.RegisterHook(hooks.PreApprovalRequestHook, hooks.Observe(func(ctx context.Context, p *hooks.Approval) {
			url := os.Getenv("HERALD_APPROVAL_WEBHOOK")
			if url == "" {
				return
			}
			body := p.Command
			if len(body) > 80 {
				body = body[:80]
			}
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := signed.Post(ctx, url, "HERALD_APPROVAL_SECRET", map[string]string{
				"title": "herald needs approval", "body": p.Description + ": " + body, "session_key": p.SessionKey, "surface": p.Surface,
			}, nil); err != nil {
				log.Warn("approval notification failed", "err", err)
			}
		}))
		c.RegisterHook(hooks.PostApprovalResponseHook, hooks.Observe(func(ctx context.Context, p *hooks.Approval) {
			cmd := p.Command
			if len(cmd) > 60 {
				cmd = cmd[:60]
			}
			log.Info("approval "+p.Choice+": "+cmd, "session_key", p.SessionKey, "pattern", p.PatternKey)
		}))
		return nil
	},
}
