package hooks

// hookhttp.go: http hooks. The payload (the same JSON a shell hook reads
// on stdin, secrets masked) is POSTed; the answer is read like a shell
// hook's stdout. The address dialed is checked after resolution, on every
// connection (net.Dialer.Control sees the IP the socket connects to), so
// neither DNS rebinding nor a hostname pointing inward reaches the
// gateway's own API; redirects are never followed.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"syscall"
	"time"
)

// MaxHTTPAnswer bounds an http hook's answer; a longer one is a failure.
const MaxHTTPAnswer = 1 << 20

// SignatureHeader carries the body's HMAC-SHA256 when a secret is set
// (GitHub's form: sha256=<hex>).
const SignatureHeader = "X-Herald-Signature-256"

// ErrRefusedAddress is the dial refusal of an address an http hook may
// not reach.
var ErrRefusedAddress = errors.New("address refused")

// metadataAddrs are the cloud metadata services: refused even with
// allow_private, since they hand out the machine's credentials.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, …
	netip.MustParseAddr("100.100.100.200"), // Alibaba
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// CheckHookAddr says why an http hook may not connect to ip, or nil.
// Without allowPrivate it refuses loopback, link-local (the metadata
// range included), unspecified, multicast, private (RFC 1918, IPv6 ULA)
// and carrier-grade NAT addresses, IPv4-mapped forms included; with it,
// only the cloud metadata addresses.
func CheckHookAddr(ip netip.Addr, allowPrivate bool) error {
	ip = ip.Unmap()
	for _, m := range metadataAddrs {
		if ip == m {
			return fmt.Errorf("%w: %s is a cloud metadata address", ErrRefusedAddress, ip)
		}
	}
	if allowPrivate {
		return nil
	}
	var what string
	switch {
	case ip.IsLoopback():
		what = "a loopback"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		what = "a link-local"
	case ip.IsUnspecified():
		what = "an unspecified"
	case ip.IsMulticast() || ip.IsInterfaceLocalMulticast():
		what = "a multicast"
	case ip.IsPrivate() || cgnat.Contains(ip):
		what = "a private"
	default:
		return nil
	}
	return fmt.Errorf("%w: %s is %s address (set allow_private: true on the hook to allow it)", ErrRefusedAddress, ip, what)
}

// hookClients are the two shared clients (private addresses refused, or
// allowed); one pool of connections each, so repeated calls reuse them.
var hookClients struct {
	once   sync.Once
	strict *http.Client
	open   *http.Client
}

func hookClient(allowPrivate bool) *http.Client {
	hookClients.once.Do(func() {
		hookClients.strict = newHookClient(false)
		hookClients.open = newHookClient(true)
	})
	if allowPrivate {
		return hookClients.open
	}
	return hookClients.strict
}

func newHookClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{
		Timeout: 10 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("%w: %s is not an IP address", ErrRefusedAddress, host)
			}
			return CheckHookAddr(ip, allowPrivate)
		},
	}
	t := &http.Transport{
		Proxy:               nil, // a proxy would dial the hook's host for us, unchecked
		DialContext:         d.DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Sign returns the X-Herald-Signature-256 value of body under secret.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// post sends body and returns the answer of a 2xx; anything else (a
// refused address, no answer, a redirect, another status, an answer over
// MaxHTTPAnswer) is a failure.
func (h *typedHook) post(ctx context.Context, event string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.spec.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("http hook %s: %w", redactURL(h.spec.URL), err)
	}
	for k, v := range h.spec.Headers {
		req.Header.Set(k, expandEnv(v, h.lookup))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Herald-Event", event)
	if h.spec.Secret != "" {
		req.Header.Set(SignatureHeader, Sign(expandEnv(h.spec.Secret, h.lookup), body))
	}
	resp, err := hookClient(h.spec.AllowPrivate).Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("POST %s: no answer within %s", redactURL(h.spec.URL), h.timeout)
		}
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			err = ue.Unwrap() // drop url.Error's copy of the URL (its query may hold a token)
		}
		return nil, fmt.Errorf("POST %s: %w", redactURL(h.spec.URL), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxHTTPAnswer+1))
	switch {
	case resp.StatusCode/100 == 3:
		return nil, fmt.Errorf("POST %s: answered %s; redirects are not followed", redactURL(h.spec.URL), resp.Status)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("POST %s: answered %s", redactURL(h.spec.URL), resp.Status)
	case err != nil:
		return nil, fmt.Errorf("POST %s: reading the answer: %w", redactURL(h.spec.URL), err)
	case len(b) > MaxHTTPAnswer:
		return nil, fmt.Errorf("POST %s: answer over %d bytes", redactURL(h.spec.URL), MaxHTTPAnswer)
	}
	return b, nil
}
