package cmd

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/heraldgw/herald/sessions"
)

func (e *env) sessions(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("%s", sessionsUsage)
	}
	switch args[0] {
	case "list", "ls":
	case "show":
		return e.sessionsShow(ctx, args[1:])
	case "export":
		return e.sessionsExport(ctx, args[1:])
	case "delete", "rm":
		return e.sessionsDelete(ctx, args[1:])
	case "prune":
		return e.sessionsPrune(ctx, args[1:])
	default:
		return usagef("unknown sessions command %q\n%s", args[0], sessionsUsage)
	}
	fs := e.flags("sessions list")
	platform := fs.String("platform", "", "only this platform")
	limit := fs.Int("limit", 50, "at most this many")
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	h, err := e.openSessions()
	if err != nil {
		return err
	}
	defer h.close()
	list, err := h.store.List(ctx, sessions.ListOptions{Platform: *platform, Limit: *limit})
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "No sessions yet.")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tPLATFORM\tCHAT\tUSER\tMESSAGES\tUPDATED\tSTATE")
	for _, s := range list {
		state := "open"
		if s.EndedAt != nil {
			state = "ended (" + s.EndReason + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.ID, s.Platform, s.ChatID, s.UserID, s.MessageCount, s.UpdatedAt.Format("2006-01-02 15:04:05"), state)
	}
	return tw.Flush()
}
