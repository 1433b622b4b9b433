package herald

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Redactor removes secrets from text before it reaches a log line, a
// transcript, a tool result or a hook's output. There is one per process,
// shared by all of them, so that what one path hides no other path leaks.
//
// It replaces two kinds of thing: the exact values of secrets herald knows
// (bot tokens, API keys, the local token), added with Add; and anything
// shaped like a well-known credential (sk-…, xoxb-…, ghp_…, AKIA…,
// Authorization/Bearer headers, private key blocks, user:pass@ in URLs).
type Redactor struct {
	mu     sync.RWMutex
	values []string // longest first
	// encoded holds, per value, the forms a command can turn it into
	// without changing what it reveals: hex, and the base64 runs (both
	// alphabets, all three alignments) that stand for it inside a longer
	// encoded stream such as `base64 /proc/self/environ`.
	encoded []string
}

// NewRedactor returns a redactor that knows the given secret values.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add teaches the redactor more secret values. Values shorter than 8
// characters are ignored: hiding "abc" everywhere would hide prose.
func (r *Redactor) Add(secrets ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) < 8 {
			continue
		}
		dup := false
		for _, v := range r.values {
			if v == s {
				dup = true
				break
			}
		}
		if !dup {
			r.values = append(r.values, s)
			r.encoded = append(r.encoded, encodedForms(s)...)
		}
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	sort.Slice(r.encoded, func(i, j int) bool { return len(r.encoded[i]) > len(r.encoded[j]) })
}

// Mask is what a redacted secret is replaced with.
const Mask = "[REDACTED]"

var secretShapes = []*regexp.Regexp{
	regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)`),
	regexp.MustCompile(`(?i)\b(authorization|proxy-authorization)(\s*[:=]\s*)("?)[^\s"]+(\s+[^\s"]+)?`),
	regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}`),
	regexp.MustCompile(`\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}`),
	regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`),
	regexp.MustCompile(`\bxapp-[A-Za-z0-9-]{10,}`),
	regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`),
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`),
	regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{16,}`),
	regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),
	regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{30,}`),
	regexp.MustCompile(`\b\d{8,10}:AA[A-Za-z0-9_-]{30,}`), // Telegram bot token
	regexp.MustCompile(`\beyJhbGciOi[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`),
	regexp.MustCompile(`(?i)\b((?:api[_-]?key|secret|password|passwd|token)["']?\s*[:=]\s*["']?)[^\s"',;]{8,}`),
}

var userinfo = regexp.MustCompile(`(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:)[^/\s@]+@`)

// Redact returns s with every known secret and secret-shaped run masked.
func (r *Redactor) Redact(s string) string {
	if s == "" {
		return s
	}
	if r != nil {
		r.mu.RLock()
		for _, v := range r.values {
			if strings.Contains(s, v) {
				s = strings.ReplaceAll(s, v, Mask)
			}
		}
		s = maskEncoded(s, r.encoded)
		r.mu.RUnlock()
	}
	if !mayHoldShape(s) {
		return s
	}
	for i, re := range secretShapes {
		switch i {
		case 1: // keep the header name
			s = re.ReplaceAllString(s, "${1}${2}${3}"+Mask)
		case len(secretShapes) - 1: // keep "password=" and similar
			s = re.ReplaceAllString(s, "${1}"+Mask)
		default:
			s = re.ReplaceAllString(s, Mask)
		}
	}
	return userinfo.ReplaceAllString(s, "${1}"+Mask+"@")
}

// mayHoldShape is a cheap pre-check so that ordinary chat text skips the
// regular expressions.
func mayHoldShape(s string) bool {
	for _, m := range shapeMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	ls := strings.ToLower(s)
	for _, m := range lowerMarkers {
		if strings.Contains(ls, m) {
			return true
		}
	}
	return false
}

var shapeMarkers = []string{"-----BEGIN", "sk-", "xox", "xapp-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "AKIA", "ASIA", "AIza", ":AA", "eyJhbGciOi", "://"}
var lowerMarkers = []string{"authorization", "bearer", "api_key", "api-key", "apikey", "secret", "password", "passwd", "token"}
