package discord

// Fetch: the bytes of an inbound attachment, read from Discord's CDN only.
// The URL came from a message, so it is checked against the hosts Discord
// serves attachments from before anything is dialled (and again on every
// redirect); the bot token is never sent with it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// DefaultMediaHosts are the hosts Discord serves attachments from (url and
// proxy_url), over https.
var DefaultMediaHosts = []string{"cdn.discordapp.com", "media.discordapp.net"}

// Defaults for the media parts of Config.
const (
	// DefaultMaxUpload is Discord's upload limit in a server without
	// boosts (and in DMs).
	DefaultMaxUpload = 10 << 20
	// DefaultFetchLimit is the hard ceiling on one download: Discord's
	// largest attachment (500 MiB) and a little more. The gateway's own
	// cap is usually far lower; this one stops a server that never stops
	// sending.
	DefaultFetchLimit = 512 << 20
	// DefaultMediaTimeout bounds one download or upload, body included.
	DefaultMediaTimeout = 5 * time.Minute
)

// ErrForeignURL: an attachment URL names a host Discord does not serve
// attachments from; Fetch refuses it.
var ErrForeignURL = errors.New("not on Discord's attachment hosts")

// ErrFetchTooLarge: a download went past Config.FetchLimit.
var ErrFetchTooLarge = errors.New("larger than the download limit")

// origin is a scheme and a host (with its port; none for the scheme's
// default) that Fetch may read from.
type origin struct{ scheme, host string }

func originOf(u *url.URL) origin {
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	return origin{scheme, host}
}

// mediaOrigins are the https origins of the media hosts, plus the API
// base's own origin when it is not Discord's (a proxy, or a fake in
// tests, that serves attachments too).
func mediaOrigins(hosts []string, apiBase string) []origin {
	var out []origin
	for _, h := range hosts {
		if u, err := url.Parse("https://" + strings.TrimSpace(h)); err == nil && u.Hostname() != "" {
			out = append(out, originOf(u))
		}
	}
	if apiBase != DefaultAPIBase {
		if u, err := url.Parse(apiBase); err == nil && u.Hostname() != "" && (u.Scheme == "http" || u.Scheme == "https") {
			out = append(out, originOf(u))
		}
	}
	return out
}

// allowed reports whether u may be fetched: one of the origins, with no
// user info (https://cdn.discordapp.com@elsewhere/ names elsewhere).
func (a *Adapter) allowed(u *url.URL) bool {
	if u == nil || u.User != nil || u.Opaque != "" {
		return false
	}
	o := originOf(u)
	for _, ok := range a.origins {
		if o == ok {
			return true
		}
	}
	return false
}

// Fetch returns the bytes of an attachment mediaOf described. It refuses
// a URL off Discord's attachment hosts (ErrForeignURL), sends no
// credentials, follows at most three redirects (each checked again), and
// fails a download larger than Config.FetchLimit (ErrFetchTooLarge), on
// Content-Length at once or once the body passes it. Errors name the
// attachment and its host, never the signed URL's query.
func (a *Adapter) Fetch(ctx context.Context, m herald.Media) (io.ReadCloser, error) {
	what := describe(m)
	if m.URL == "" {
		return nil, fmt.Errorf("discord: fetch %s: it has no URL", what)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("discord: fetch %s: bad URL", what)
	}
	if !a.allowed(req.URL) {
		return nil, fmt.Errorf("discord: fetch %s: %s is %w", what, req.URL.Host, ErrForeignURL)
	}
	what += " from " + req.URL.Host
	resp, err := a.media.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("discord: fetch %s: %w", what, ctx.Err())
		}
		var ue *url.Error
		if errors.As(err, &ue) { // its text repeats the URL, query and all
			err = ue.Err
		}
		if errors.Is(err, ErrForeignURL) {
			return nil, fmt.Errorf("discord: fetch %s: redirected to a host that is %w", what, ErrForeignURL)
		}
		return nil, &adapters.TemporaryError{Err: fmt.Errorf("discord: fetch %s: %w", what, err)}
	}
	if err := fetchStatus(what, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if resp.ContentLength > a.cfg.FetchLimit {
		resp.Body.Close()
		return nil, fmt.Errorf("discord: fetch %s: %d bytes, %w of %d", what, resp.ContentLength, ErrFetchTooLarge, a.cfg.FetchLimit)
	}
	return &cappedBody{body: resp.Body, left: a.cfg.FetchLimit, what: what, limit: a.cfg.FetchLimit}, nil
}

// describe names an attachment in errors: its file name and id.
func describe(m herald.Media) string {
	s := "attachment"
	if m.Name != "" {
		s += " " + strconv.Quote(m.Name)
	}
	if m.Ref != "" {
		s += " (id " + m.Ref + ")"
	}
	return s
}

// fetchStatus maps a CDN answer other than 200: 429 waits, 5xx is
// retried, 403/404 is an expired or deleted attachment.
func fetchStatus(what string, resp *http.Response) error {
	switch code := resp.StatusCode; {
	case code == http.StatusOK:
		return nil
	case code == http.StatusTooManyRequests:
		after := time.Second
		if s, err := strconv.ParseFloat(resp.Header.Get("Retry-After"), 64); err == nil && s > 0 && s < 3600 {
			after = time.Duration(s * float64(time.Second))
		}
		return &adapters.RetryAfterError{After: after, Err: fmt.Errorf("discord: fetch %s: HTTP 429", what)}
	case code >= 500:
		return &adapters.TemporaryError{Err: fmt.Errorf("discord: fetch %s: HTTP %d", what, code)}
	case code == http.StatusNotFound, code == http.StatusForbidden:
		return fmt.Errorf("discord: fetch %s: HTTP %d (deleted, or its link expired)", what, code)
	default:
		return fmt.Errorf("discord: fetch %s: HTTP %d", what, code)
	}
}

// checkRedirect follows at most three redirects, each to an allowed
// host.
func (a *Adapter) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 3 {
		return errors.New("more than 3 redirects")
	}
	if !a.allowed(req.URL) {
		return fmt.Errorf("%s is %w", req.URL.Host, ErrForeignURL)
	}
	return nil
}

// cappedBody fails a body that goes past limit instead of cutting it
// short, so a truncated file is never taken for the whole one.
type cappedBody struct {
	body  io.ReadCloser
	left  int64 // bytes still allowed; -1 once past the limit
	what  string
	limit int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, c.tooLarge()
	}
	// one byte more than allowed tells a body of exactly the limit from a
	// longer one
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.body.Read(p)
	if int64(n) > c.left {
		n, c.left = int(c.left), -1
		return n, c.tooLarge()
	}
	c.left -= int64(n)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("discord: fetch %s: %w", c.what, err)
	}
	return n, err
}

func (c *cappedBody) tooLarge() error {
	return fmt.Errorf("discord: fetch %s: %w of %d bytes", c.what, ErrFetchTooLarge, c.limit)
}

func (c *cappedBody) Close() error { return c.body.Close() }
