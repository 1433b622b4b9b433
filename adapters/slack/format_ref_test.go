package slack

// format_ref_test.go keeps the first link reader, quadratic on a line of
// "[", as the reference the linear one is checked against (FuzzToMrkdwn
// compares them at every '[').

import "strings"

// refLink reads [text](url) at the start of s.
func refLink(s string) (text, url string, n int, ok bool) {
	close := strings.Index(s, "](")
	if close < 1 {
		return "", "", 0, false
	}
	end := strings.IndexByte(s[close+2:], ')')
	if end < 1 {
		return "", "", 0, false
	}
	text, url = s[1:close], s[close+2:close+2+end]
	if strings.ContainsAny(url, " \t") || strings.Contains(text, "]") {
		return "", "", 0, false
	}
	return text, url, close + 2 + end + 1, true
}
