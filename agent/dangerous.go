package agent

import (
	"regexp"
	"strings"
)

// Danger is one reason a terminal command needs approval. Key is the
// stable pattern key approvals are remembered by ("always", "session")
// and hooks see as pattern_key.
type Danger struct {
	Key         string
	Description string
}

type dangerRule struct {
	Danger
	re *regexp.Regexp
}

// Each rule has its own key, so that approving "sudo" for a session does
// not approve "rm_rf".
var dangerRules = []dangerRule{
	{Danger{"rm_rf", "recursive delete (rm -r/-rf)"}, regexp.MustCompile(`(?:^|[\s;&|(\x60])rm\s+(?:[^;&|]*\s)?(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\b`)},
	{Danger{"sudo", "runs as root (sudo/su/doas)"}, regexp.MustCompile(`(?:^|[;&|(\x60]|\$\()\s*(?:sudo|doas|su)(?:\s|$)`)},
	{Danger{"mkfs", "formats a filesystem (mkfs)"}, regexp.MustCompile(`(?:^|[\s;&|(])mkfs(?:\.[a-z0-9]+)?\b`)},
	{Danger{"dd_of", "raw disk write (dd of=)"}, regexp.MustCompile(`(?:^|[\s;&|(])dd\s[^;&|]*\bof=`)},
	{Danger{"chmod_777_recursive", "makes a tree world-writable (chmod -R 777)"}, regexp.MustCompile(`\bchmod\s+(?:[^;&|]*\s)?(?:-[a-zA-Z]*R[a-zA-Z]*|--recursive)\s+(?:[^;&|]*\s)?0?777\b|\bchmod\s+0?777\s+(?:[^;&|]*\s)?-[a-zA-Z]*R`)},
	{Danger{"chown_recursive", "changes ownership of a tree (chown -R)"}, regexp.MustCompile(`\bchown\s+(?:[^;&|]*\s)?(?:-[a-zA-Z]*R[a-zA-Z]*|--recursive)\b`)},
	{Danger{"pipe_to_shell", "runs a downloaded script (curl/wget … | sh)"}, regexp.MustCompile(`\b(?:curl|wget|fetch)\b[^|;&]*\|\s*(?:sudo\s+)?(?:env\s+)?(?:ba|z|da|k|fi)?sh\b`)},
	{Danger{"git_force_push", "rewrites remote history (git push --force)"}, regexp.MustCompile(`\bgit\s+(?:[^;&|]*\s)?push\b[^;&|]*(?:\s--force(?:-with-lease)?\b|\s-[a-zA-Z]*f\b|\s\+[^\s]+)`)},
	{Danger{"git_reset_hard", "discards local changes (git reset --hard / clean -f)"}, regexp.MustCompile(`\bgit\s+(?:reset\s+[^;&|]*--hard|clean\s+[^;&|]*-[a-zA-Z]*f)`)},
	{Danger{"block_device_write", "writes to a block device (> /dev/sd*)"}, regexp.MustCompile(`>\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)[a-z0-9]*`)},
	{Danger{"fork_bomb", "fork bomb"}, regexp.MustCompile(`:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;?\s*:`)},
	{Danger{"system_power", "shuts down or reboots the machine"}, regexp.MustCompile(`(?:^|[\s;&|(])(?:shutdown|reboot|halt|poweroff)\b|\binit\s+[06]\b|\bsystemctl\s+(?:poweroff|reboot|halt)\b`)},
	{Danger{"kill_all", "kills every process (kill -9 -1)"}, regexp.MustCompile(`\bkill\s+-(?:9|KILL|SIGKILL)\s+-1\b|\bpkill\s+-9\b|\bkillall\b`)},
	{Danger{"overwrite_system_file", "overwrites a system file (> /etc/…)"}, regexp.MustCompile(`>\s*/(?:etc|boot|usr|bin|sbin|lib)/`)},
	{Danger{"find_delete", "bulk delete (find -delete / -exec rm, xargs rm)"}, regexp.MustCompile(`\bfind\b[^;&|]*\s(?:-delete\b|-exec\s+rm\b)|\bxargs\s+(?:[^;&|]*\s)?rm\b`)},
	{Danger{"sql_destructive", "destroys database data (DROP/TRUNCATE)"}, regexp.MustCompile(`(?i)\b(?:drop\s+(?:table|database|schema)|truncate\s+table)\b`)},
}

// DetectDangerous returns every rule a command matches, in rule order; an
// empty result means the command runs without asking.
func DetectDangerous(command string) []Danger {
	c := strings.TrimSpace(command)
	if c == "" {
		return nil
	}
	var out []Danger
	for _, r := range dangerRules {
		if r.re.MatchString(c) {
			out = append(out, r.Danger)
		}
	}
	return out
}

func dangerKeys(ds []Danger) (keys []string, description string) {
	descs := make([]string, 0, len(ds))
	for _, d := range ds {
		keys = append(keys, d.Key)
		descs = append(descs, d.Description)
	}
	return keys, strings.Join(descs, "; ")
}
