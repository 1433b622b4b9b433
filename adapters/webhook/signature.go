package webhook

// signature.go checks a request's signature against its route's secret,
// in the forms senders use: GitHub's X-Hub-Signature-256, GitLab's
// X-Gitlab-Token, and a generic X-Webhook-Signature-256 (Hermes'
// X-Webhook-Signature, the bare hex digest, too). Every comparison takes
// constant time.

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// Signature headers.
const (
	HeaderGitHub     = "X-Hub-Signature-256"
	HeaderGitLab     = "X-Gitlab-Token"
	HeaderGeneric    = "X-Webhook-Signature-256"
	HeaderHermesHMAC = "X-Webhook-Signature"
)

// Verify reports whether h carries a valid signature of body under
// secret. The first signature header present decides; none, or an empty
// secret, is false.
func Verify(h http.Header, body []byte, secret string) bool {
	if secret == "" {
		return false
	}
	if sig := h.Get(HeaderGitHub); sig != "" {
		return checkHMAC(sig, true, body, secret)
	}
	if tok := h.Get(HeaderGitLab); tok != "" {
		return subtle.ConstantTimeCompare([]byte(tok), []byte(secret)) == 1
	}
	if sig := h.Get(HeaderGeneric); sig != "" {
		return checkHMAC(sig, true, body, secret)
	}
	if sig := h.Get(HeaderHermesHMAC); sig != "" {
		return checkHMAC(sig, false, body, secret)
	}
	return false
}

// Sign returns the HMAC-SHA256 of body under secret as "sha256=<hex>",
// the value of X-Hub-Signature-256 and X-Webhook-Signature-256.
func Sign(body []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// checkHMAC compares sig ("sha256=<hex>" when prefixed, else bare hex)
// with the body's HMAC-SHA256.
func checkHMAC(sig string, prefixed bool, body []byte, secret string) bool {
	sig = strings.TrimSpace(sig)
	if prefixed {
		algo, hexsum, ok := strings.Cut(sig, "=")
		if !ok || !strings.EqualFold(algo, "sha256") {
			return false
		}
		sig = hexsum
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}
