package cron

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/heraldgw/herald"
)

// SilentMarker in a successful reply means "nothing to report": the output
// is saved but not delivered. It is matched in any case, anywhere.
const SilentMarker = "[SILENT]"

// IsSilent reports whether a reply asks not to be delivered.
func IsSilent(reply string) bool {
	return strings.Contains(strings.ToUpper(reply), SilentMarker)
}

// FailureText is what a failed job delivers, in Hermes' words.
func FailureText(name, errText string) string {
	return fmt.Sprintf("⚠️ Cron job '%s' failed:\n%s", name, errText)
}

// Wrap frames a delivered result with the job's name and id, as Hermes
// does (unless cron.wrap_response is false).
func Wrap(job *Job, content string) string {
	return fmt.Sprintf("Cronjob Response: %s\n(job_id: %s)\n-------------\n\n%s\n\nTo stop or manage this job, send me a new message (e.g. \"stop reminder %s\").",
		job.Name, job.ID, content, job.Name)
}

// errNoTarget is a deliver token that resolves to no chat.
var errNoTarget = errors.New("no delivery target")

// resolveTargets turns a job's deliver setting into chats. homes maps each
// configured platform to its home channel ("" when it has none). "local"
// resolves to nothing; the list is deduplicated in order. Tokens that
// cannot be resolved come back as errors, beside the targets that could.
func resolveTargets(job *Job, homes map[herald.Platform]string) (targets []herald.Target, errs []error) {
	seen := map[string]bool{}
	add := func(t herald.Target) {
		if k := t.String(); !seen[k] {
			seen[k] = true
			targets = append(targets, t)
		}
	}
	withHome := func() []herald.Platform {
		var ps []herald.Platform
		for p, h := range homes {
			if h != "" {
				ps = append(ps, p)
			}
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		return ps
	}
	for _, tok := range strings.Split(job.Deliver, ",") {
		tok = strings.TrimSpace(tok)
		switch strings.ToLower(tok) {
		case "", "local":
			continue
		case "origin":
			if job.Origin.Platform != "" && job.Origin.ChatID != "" {
				add(job.Origin)
				continue
			}
			ps := withHome()
			if len(ps) == 0 {
				errs = append(errs, fmt.Errorf("%w: origin: the job has no origin chat and no platform has a home channel", errNoTarget))
				continue
			}
			add(herald.Target{Platform: ps[0], ChatID: homes[ps[0]]})
			continue
		case "all":
			ps := withHome()
			if len(ps) == 0 {
				errs = append(errs, fmt.Errorf("%w: all: no platform has a home channel", errNoTarget))
			}
			for _, p := range ps {
				add(herald.Target{Platform: p, ChatID: homes[p]})
			}
			continue
		}
		t, err := herald.ParseTarget(tok)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if t.ChatID == "" {
			switch {
			case job.Origin.Platform == t.Platform && job.Origin.ChatID != "":
				t = job.Origin
			case homes[t.Platform] != "":
				t.ChatID = homes[t.Platform]
			default:
				if _, ok := homes[t.Platform]; !ok {
					errs = append(errs, fmt.Errorf("%w: %s: the platform is not configured", errNoTarget, t.Platform))
				} else {
					errs = append(errs, fmt.Errorf("%w: %s: no home channel configured (set %s_HOME_CHANNEL or platforms.%s.home_channel)",
						errNoTarget, t.Platform, strings.ToUpper(string(t.Platform)), t.Platform))
				}
				continue
			}
		}
		add(t)
	}
	return targets, errs
}
