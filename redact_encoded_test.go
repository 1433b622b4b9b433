package herald

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// A secret must not come back out through an encoder: `base64` of a file
// that holds it (any alignment, wrapped at 76 columns, either alphabet) or
// its hex dump.
func TestRedactEncodedSecrets(t *testing.T) {
	const secret = "tg-bot-token-0123456789-abcdef"
	r := NewRedactor(secret)
	wrap := func(s string, n int) string {
		var b strings.Builder
		for len(s) > n {
			b.WriteString(s[:n] + "\n")
			s = s[n:]
		}
		b.WriteString(s)
		return b.String()
	}
	for prefix := 0; prefix < 6; prefix++ {
		env := strings.Repeat("P", prefix) + "PATH=/usr/bin\x00TELEGRAM_BOT_TOKEN=" + secret + "\x00HOME=/root\x00"
		for name, out := range map[string]string{
			"std":     base64.StdEncoding.EncodeToString([]byte(env)),
			"url":     base64.URLEncoding.EncodeToString([]byte(env)),
			"wrapped": wrap(base64.StdEncoding.EncodeToString([]byte(env)), 76),
			"crlf":    strings.ReplaceAll(wrap(base64.StdEncoding.EncodeToString([]byte(env)), 20), "\n", "\r\n"),
			"hex":     hex.EncodeToString([]byte(env)),
			"HEX":     strings.ToUpper(hex.EncodeToString([]byte(env))),
		} {
			got := r.Redact("out: " + out)
			if !strings.Contains(got, Mask) {
				t.Errorf("prefix %d, %s: nothing masked in %q", prefix, name, got)
				continue
			}
			flat := strings.NewReplacer("\n", "", "\r", "").Replace(got)
			var dec []byte
			switch name {
			case "hex", "HEX":
				continue // the mask is proof enough: hex has one alignment
			default:
				// Decode what is left around the mask: no window of it
				// may hold the secret.
				for _, part := range strings.Split(strings.TrimPrefix(flat, "out: "), Mask) {
					for start := 0; start < 4 && start < len(part); start++ {
						d, _ := base64.RawStdEncoding.DecodeString(strings.TrimRight(part[start:], "=")[:len(strings.TrimRight(part[start:], "="))/4*4])
						dec = append(dec, d...)
						d, _ = base64.RawURLEncoding.DecodeString(strings.TrimRight(part[start:], "=")[:len(strings.TrimRight(part[start:], "="))/4*4])
						dec = append(dec, d...)
					}
				}
			}
			if strings.Contains(string(dec), secret) || strings.Contains(string(dec), secret[:12]) {
				t.Errorf("prefix %d, %s: the secret can still be decoded from %q", prefix, name, got)
			}
		}
	}
	// Text that merely looks encoded stays.
	plain := "aGVsbG8gd29ybGQ= is base64 for hello world; cafe1234 is hex"
	if got := r.Redact(plain); got != plain {
		t.Errorf("Redact(%q) = %q", plain, got)
	}
}

func BenchmarkRedactToolOutput(b *testing.B) {
	r := NewRedactor("tg-bot-token-0123456789-abcdef", "sk-not-a-real-key-but-long-enough", "local-token-abcdefabcdef")
	out := strings.Repeat("drwxr-xr-x  2 root root 4096 Dec  2 23:16 some-directory-name\n", 1600) // ~100 KB of ls -l
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		r.Redact(out)
	}
}
