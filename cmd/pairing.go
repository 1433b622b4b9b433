package cmd

// pairing.go: `herald pairing list|approve <platform> <code>|revoke
// <platform> <user>`. It works on the state store directly, whether or not a
// gateway runs; a running gateway reads approvals on every message.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/heraldgw/herald/sessions"
)

func init() {
	registerCommand(command{name: "pairing", synopsis: "pairing <subcommand>", summary: "list, approve and revoke paired users", subcommands: []string{"list", "approve", "revoke"},
		run: func(ctx context.Context, e *env, args []string) error { return e.pairing(ctx, args) }})
}

const pairingUsage = "usage: herald pairing list | approve <platform> <code> | revoke <platform> <user_id>"

func (e *env) pairing(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef(pairingUsage)
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
	now := time.Now()
	switch args[0] {
	case "list", "ls":
		if len(args) != 1 {
			return usagef(pairingUsage)
		}
		approved, pending, err := st.Pairings(ctx, now)
		if err != nil {
			return err
		}
		if len(approved) == 0 && len(pending) == 0 {
			fmt.Fprintln(e.stdout, "No pairings and no codes waiting.")
			return nil
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 2, 2, ' ', 0)
		if len(pending) > 0 {
			fmt.Fprintln(tw, "WAITING\tPLATFORM\tUSER\tNAME\tEXPIRES IN")
			for _, p := range pending {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Code, p.Platform, p.UserID, p.UserName, p.ExpiresAt.Sub(now).Round(time.Minute))
			}
		}
		if len(approved) > 0 {
			if len(pending) > 0 {
				fmt.Fprintln(tw)
			}
			fmt.Fprintln(tw, "APPROVED\tPLATFORM\tUSER\tNAME\tSINCE")
			for _, p := range approved {
				fmt.Fprintf(tw, "-\t%s\t%s\t%s\t%s\n", p.Platform, p.UserID, p.UserName, p.ApprovedAt.Format("2006-01-02 15:04"))
			}
		}
		return tw.Flush()
	case "approve":
		if len(args) != 3 {
			return usagef(pairingUsage)
		}
		platform := strings.ToLower(args[1])
		p, err := st.ApprovePairing(ctx, platform, args[2], now)
		switch {
		case errors.Is(err, sessions.ErrNoSuchPairingCode):
			return fmt.Errorf("no waiting code %s on %s (codes live one hour; see herald pairing list)", strings.ToUpper(args[2]), platform)
		case errors.Is(err, sessions.ErrPairingLocked):
			return fmt.Errorf("pairing on %s is locked for an hour after %d wrong codes", platform, sessions.MaxPairingFailures)
		case err != nil:
			return err
		}
		fmt.Fprintf(e.stdout, "Approved %s on %s (user id %s).\n", nonEmptyName(p.UserName), p.Platform, p.UserID)
		return nil
	case "revoke":
		if len(args) != 3 {
			return usagef(pairingUsage)
		}
		platform := strings.ToLower(args[1])
		ok, err := st.RevokePairing(ctx, platform, args[2])
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("user %s is not paired on %s", args[2], platform)
		}
		fmt.Fprintf(e.stdout, "Revoked %s on %s.\n", args[2], platform)
		return nil
	}
	return usagef(pairingUsage)
}

func nonEmptyName(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return s
}
