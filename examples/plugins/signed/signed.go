// Package signed posts JSON webhooks signed the way herald's examples sign
// them: HMAC-SHA256 over the exact body, hex, in the header
// X-Herald-Signature-256 as "sha256=<hex>" (GitHub's scheme), with the
// secret read from an environment variable. Receivers verify with Verify.
package signed

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// Header carries the signature.
const Header = "X-Herald-Signature-256"

// Sign returns "sha256=<hex HMAC-SHA256(secret, body)>".
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a signature header in constant time.
func Verify(secret, body []byte, header string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(strings.TrimSpace(header)))
}

// client never follows redirects: a webhook goes where it was configured
// to go, or nowhere.
var client = &http.Client{
	Timeout:       5 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Post sends v as JSON to url, signed with the secret in the environment
// variable secretEnv (unsigned when it is empty), and decodes a JSON
// answer into out when out is not nil.
func Post(ctx context.Context, url, secretEnv string, v, out any) error {
	if url == "" {
		return errors.New("signed: no URL configured")
	}
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if secret := os.Getenv(secretEnv); secretEnv != "" && secret != "" {
		req.Header.Set(Header, Sign([]byte(secret), body))
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("signed: %s answered %d", url, res.StatusCode)
	}
	if out != nil && len(b) > 0 {
		return json.Unmarshal(b, out)
	}
	return nil
}
