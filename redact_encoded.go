package herald

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// encodedForms returns the runs of text that reveal secret when it has
// been hex- or base64-encoded. A base64 encoder sees the secret at one of
// three byte alignments within its input; for each, only the characters
// whose six bits all come from the secret are kept, so the run is found
// whatever bytes stood before and after it.
func encodedForms(secret string) []string {
	forms := []string{hex.EncodeToString([]byte(secret)), strings.ToUpper(hex.EncodeToString([]byte(secret)))}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := 0; k < 3; k++ {
			in := append(make([]byte, k), secret...)
			out := enc.EncodeToString(in)
			first := (8*k + 5) / 6            // first character with no prefix bits
			last := (8*(k+len(secret)))/6 - 1 // last character with no trailing bits
			if last-first+1 >= 10 {
				forms = append(forms, out[first:last+1])
			}
		}
	}
	// The URL alphabet equals the standard one for many secrets.
	seen := map[string]bool{}
	uniq := forms[:0]
	for _, f := range forms {
		if !seen[f] {
			seen[f] = true
			uniq = append(uniq, f)
		}
	}
	return uniq
}

// maskEncoded masks every encoded form found in s. Encoders wrap their
// output (base64 at 76 columns), so the search also looks through line
// breaks: it runs on a copy with them removed and masks the matching span
// of the original, breaks included.
func maskEncoded(s string, forms []string) string {
	if len(forms) == 0 || len(s) < 10 {
		return s
	}
	flat, pos := s, []int(nil)
	if wrappedEncoding(s) {
		var b strings.Builder
		pos = make([]int, 0, len(s))
		for i := 0; i < len(s); i++ {
			if s[i] == '\n' || s[i] == '\r' {
				continue
			}
			b.WriteByte(s[i])
			pos = append(pos, i)
		}
		flat = b.String()
	}
	type span struct{ from, to int } // in s, to exclusive
	var spans []span
	for _, f := range forms {
		for off := 0; ; {
			i := strings.Index(flat[off:], f)
			if i < 0 {
				break
			}
			from, to := off+i, off+i+len(f)
			if pos != nil {
				spans = append(spans, span{pos[from], pos[to-1] + 1})
			} else {
				spans = append(spans, span{from, to})
			}
			off = to
		}
	}
	if len(spans) == 0 {
		return s
	}
	// Mask left to right, merging overlaps.
	for i := 1; i < len(spans); i++ {
		for j := i; j > 0 && spans[j].from < spans[j-1].from; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp.to <= last {
			continue
		}
		if sp.from < last {
			sp.from = last
		} else {
			b.WriteString(s[last:sp.from])
			b.WriteString(Mask)
		}
		last = sp.to
	}
	b.WriteString(s[last:])
	return b.String()
}

// wrappedEncoding reports whether some line of s ends in a run of 16 or
// more base64 or hex characters and the next line goes on in that
// alphabet: the output of an encoder that wraps, the only text worth
// searching through line breaks.
func wrappedEncoding(s string) bool {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 || i+1 >= len(s) {
			return false
		}
		line := strings.TrimSuffix(s[:i], "\r")
		run := len(line) - len(strings.TrimRight(line, encodingAlphabet))
		if run >= 16 && strings.IndexByte(encodingAlphabet, s[i+1]) >= 0 {
			return true
		}
		s = s[i+1:]
	}
}

const encodingAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_="
