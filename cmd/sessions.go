package cmd

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/heraldgw/herald/sessions"
)

func (e *env) sessions(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "list" && args[0] != "ls" {
		return usagef("usage: herald sessions list [--platform P] [--limit N]")
	}
	fs := e.flags("sessions list")
	platform := fs.String("platform", "", "only this platform")
	limit := fs.Int("limit", 50, "at most this many")
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	cfg, err := e.loadConfigWarned()
	if err != nil {
		return err
	}
	st, err := openStore(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	list, err := st.List(ctx, sessions.ListOptions{Platform: *platform, Limit: *limit})
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
