package slack

// files.go is the adapter's file side: the files of a message event as
// herald.Media, Fetch (url_private with the bot token, sent only to
// Slack's file host), and SendFile (files.uploadV2's three steps).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// MaxFileSize is the largest file Slack takes: 1 GiB.
const MaxFileSize = 1 << 30

// DefaultFilesURL is where Slack serves url_private.
const DefaultFilesURL = "https://files.slack.com/"

// DefaultFetchTimeout bounds one Fetch, reading the body included.
const DefaultFetchTimeout = 5 * time.Minute

// maxRedirects bounds the redirects a Fetch follows on the file host.
const maxRedirects = 5

// mediaOf turns the files of a message into herald.Media. Files with
// nothing to fetch (deleted, hidden by the plan's limit, no URL) are
// skipped. A Slack Connect file arrives as its id alone (file_access:
// check_file_info): its Media has only Ref, and Fetch looks it up.
func mediaOf(files []slackapi.File) []herald.Media {
	var out []herald.Media
	for _, f := range files {
		if f.ID == "" || f.Mode == "tombstone" || f.Mode == "hidden_by_limit" {
			continue
		}
		if f.FileAccess == "check_file_info" {
			out = append(out, herald.Media{Type: herald.MediaDocument, Ref: f.ID})
			continue
		}
		u := fileURL(f)
		if u == "" {
			continue
		}
		kind, mimeType := mediaKind(f)
		out = append(out, herald.Media{Type: kind, MIME: mimeType, Name: f.Name, Size: max(int64(f.Size), 0), URL: u, Ref: f.ID})
	}
	return out
}

// fileURL is where a file's bytes are: url_private_download, or
// url_private.
func fileURL(f slackapi.File) string {
	if f.URLPrivateDownload != "" {
		return f.URLPrivateDownload
	}
	return f.URLPrivate
}

// mediaKind reads a Slack file's kind and MIME type. Slack's audio clips
// (recorded in the app; shown as audio, named audio_message.*) are voice
// notes, and their container's video/… MIME type is read as audio/….
func mediaKind(f slackapi.File) (kind, mimeType string) {
	mimeType = strings.ToLower(strings.TrimSpace(f.Mimetype))
	if mimeType == "" {
		mimeType = mime.TypeByExtension(path.Ext(f.Name))
		if i := strings.IndexByte(mimeType, ';'); i >= 0 {
			mimeType = mimeType[:i]
		}
	}
	if isAudioClip(f) {
		if rest, ok := strings.CutPrefix(mimeType, "video/"); ok {
			mimeType = "audio/" + rest
		}
		return herald.MediaVoice, mimeType
	}
	return herald.MediaType(mimeType), mimeType
}

func isAudioClip(f slackapi.File) bool {
	mimeType := strings.ToLower(f.Mimetype)
	audioOrVideo := strings.HasPrefix(mimeType, "audio/") || strings.HasPrefix(mimeType, "video/")
	if audioOrVideo && strings.HasPrefix(strings.ToLower(f.Name), "audio_message") {
		return true
	}
	// an uploaded audio file is shown as audio too, but keeps its audio/…
	// MIME type; a clip is recorded into a video container
	return f.MediaDisplayType == "audio" && strings.HasPrefix(mimeType, "video/")
}

// fileRef names a file in errors: its id, or failing that its name.
func fileRef(m herald.Media) string {
	if m.Ref != "" {
		return m.Ref
	}
	if m.Name != "" {
		return strconv.Quote(m.Name)
	}
	return "(unnamed)"
}

// tokenHosts are the origins (scheme://host[:port]) the bot token may be
// sent to for files: Slack's file host, and the Web API's host, which gets
// the token with every call anyway.
func (a *Adapter) tokenHosts() []*url.URL {
	var out []*url.URL
	for _, s := range []string{a.cfg.FilesURL, a.cfg.APIURL} {
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			out = append(out, u)
		}
	}
	return out
}

// mayGetToken reports whether a request to u may carry the bot token: the
// same scheme and host (port included) as one of tokenHosts, and no user
// info (which would replace the Authorization header).
func (a *Adapter) mayGetToken(u *url.URL) bool {
	if u == nil || u.User != nil || u.Host == "" || u.Opaque != "" {
		return false
	}
	for _, h := range a.tokenHosts() {
		if strings.EqualFold(u.Scheme, h.Scheme) && strings.EqualFold(u.Host, h.Host) {
			return true
		}
	}
	return false
}

// Fetch implements adapters.Fetcher: it GETs the file's url_private with
// the bot token (a Media with only a Ref, a Slack Connect file, is looked
// up with files.info first). The URL came from an event, so the token goes only to
// Slack's file host (Config.FilesURL) or the Web API's host; any other
// URL is refused before a request is made, and a redirect to another host
// is not followed. A file the token cannot read (Slack answers with its
// sign-in page) is an error, as is a body past Config.FetchLimit.
func (a *Adapter) Fetch(ctx context.Context, m herald.Media) (io.ReadCloser, error) {
	ref := fileRef(m)
	if m.URL == "" && m.Ref != "" {
		// a Slack Connect file: its URL is read with files.info
		f, _, _, err := a.api.GetFileInfoContext(ctx, m.Ref, 1, 1)
		if err != nil {
			return nil, mapError("fetch file "+ref+": files.info", err, "SLACK_BOT_TOKEN")
		}
		// its type tells an HTML file from Slack's sign-in page
		m.URL, m.MIME, m.Name = fileURL(*f), f.Mimetype, f.Name
	}
	u, err := url.Parse(m.URL)
	if err != nil || m.URL == "" {
		return nil, fmt.Errorf("slack: fetch file %s: no usable url_private", ref)
	}
	if !a.mayGetToken(u) {
		return nil, fmt.Errorf("slack: fetch file %s: refusing to send the bot token to %s: not Slack's file host (%s)", ref, hostOf(u), a.cfg.FilesURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("slack: fetch file %s: %w", ref, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.cfg.BotToken)
	resp, err := a.fetcher.Do(req)
	if err != nil {
		return nil, mapError("fetch file "+ref, redactURLError(err), "SLACK_BOT_TOKEN")
	}
	if err := a.checkFileResponse(resp, m, ref); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if resp.ContentLength > a.cfg.FetchLimit {
		resp.Body.Close()
		return nil, fmt.Errorf("slack: fetch file %s: %d bytes is over the %d-byte limit", ref, resp.ContentLength, a.cfg.FetchLimit)
	}
	return &ceilingReader{rc: resp.Body, left: a.cfg.FetchLimit, limit: a.cfg.FetchLimit, ref: ref}, nil
}

func hostOf(u *url.URL) string {
	if u.Host == "" {
		return "a URL without a host"
	}
	return u.Scheme + "://" + u.Host
}

// redactURLError drops the URL from a client error (it names the file,
// which is fine, but keeps errors short and free of query strings).
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &url.Error{Op: ue.Op, URL: hostOf(mustParse(ue.URL)), Err: ue.Err}
	}
	return err
}

func mustParse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		return &url.URL{}
	}
	return u
}

// signInHelp says what to check when Slack answers with its sign-in page.
const signInHelp = "the bot token cannot read it: check that the app has the files:read scope and is in the conversation, and SLACK_BOT_TOKEN"

// checkFileResponse turns a file host's answer into an error, or nil when
// it is the file.
func (a *Adapter) checkFileResponse(resp *http.Response, m herald.Media, ref string) error {
	op := "fetch file " + ref
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return &adapters.RetryAfterError{After: time.Duration(max(after, 0)) * time.Second, Err: fmt.Errorf("slack: %s: HTTP 429", op)}
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		// a redirect off the file host: Slack's sign-in page
		return fmt.Errorf("slack: %s: Slack redirected to its sign-in page (%s): %s", op, hostOf(mustParse(resp.Header.Get("Location"))), signInHelp)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("slack: %s: HTTP %d: %s", op, resp.StatusCode, signInHelp)
	case resp.StatusCode >= 500:
		return &adapters.TemporaryError{Err: fmt.Errorf("slack: %s: HTTP %d", op, resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("slack: %s: HTTP %d", op, resp.StatusCode)
	}
	if resp.Request != nil && resp.Request.URL.Query().Get("redir") != "" {
		return fmt.Errorf("slack: %s: Slack answered with its sign-in page: %s", op, signInHelp)
	}
	if isHTML(resp.Header.Get("Content-Type")) && !isHTML(m.MIME) && !isHTML(mime.TypeByExtension(path.Ext(m.Name))) {
		return fmt.Errorf("slack: %s: Slack answered with an HTML page, not the %s file (its sign-in page): %s", op, orUnknown(m.MIME), signInHelp)
	}
	return nil
}

func isHTML(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/html" || mt == "application/xhtml+xml"
}

func orUnknown(s string) string {
	if s == "" {
		return "declared"
	}
	return s
}

// ceilingReader fails a read past limit bytes instead of truncating.
type ceilingReader struct {
	rc          io.ReadCloser
	left, limit int64
	ref         string
}

func (c *ceilingReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, c.overErr()
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n - int(-c.left), c.overErr()
	}
	return n, err
}

func (c *ceilingReader) overErr() error {
	return fmt.Errorf("slack: fetch file %s: larger than the %d-byte limit", c.ref, c.limit)
}

func (c *ceilingReader) Close() error { return c.rc.Close() }

// newFetchClient is the client Fetch uses: the Web API client's transport,
// a bound on the whole fetch, and redirects followed only on hosts that
// may get the token (Go would drop the header on another host; herald
// does not go there at all).
func (a *Adapter) newFetchClient() *http.Client {
	return &http.Client{
		Transport: a.cfg.HTTPClient.Transport,
		Timeout:   a.cfg.FetchTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if !a.mayGetToken(req.URL) {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
}

// MaxFileSize implements adapters.FileSender: 1 GiB.
func (a *Adapter) MaxFileSize() int64 { return MaxFileSize }

// SendFile implements adapters.FileSender with slack-go's UploadFileContext
// (files.getUploadURLExternal, the upload, files.completeUploadExternal)
// into the target's channel, in its thread when it has one (or
// f.ReplyTo's), with the caption, in mrkdwn, as the initial comment. Sent
// carries the file's id: Slack does not say which message shows it.
func (a *Adapter) SendFile(ctx context.Context, to herald.Target, f adapters.OutgoingFile) (adapters.Sent, error) {
	channel, thread, err := a.destination(to, f.ReplyTo)
	if err != nil {
		return adapters.Sent{}, err
	}
	name := f.Name
	if name == "" {
		name = filepath.Base(f.Path)
	}
	file, err := os.Open(f.Path)
	if err != nil {
		return adapters.Sent{}, fmt.Errorf("slack: upload %q: %w", name, err)
	}
	defer file.Close()
	st, err := file.Stat()
	switch {
	case err != nil:
		return adapters.Sent{}, fmt.Errorf("slack: upload %q: %w", name, err)
	case !st.Mode().IsRegular():
		return adapters.Sent{}, fmt.Errorf("slack: upload %q: not a regular file", name)
	case st.Size() == 0:
		return adapters.Sent{}, fmt.Errorf("slack: upload %q: the file is empty, and Slack takes no empty files", name)
	case st.Size() > MaxFileSize:
		return adapters.Sent{}, fmt.Errorf("slack: upload %q: %d bytes is over Slack's 1 GiB limit", name, st.Size())
	}
	params := slackapi.UploadFileParameters{
		Reader: file, FileSize: int(st.Size()), Filename: name, Title: name,
		Channel: channel, ThreadTimestamp: thread,
	}
	if strings.TrimSpace(f.Caption) != "" {
		params.InitialComment = toMrkdwn(f.Caption)
	}
	if thread != "" {
		a.joined(ctx, channel, thread)
	}
	sum, err := a.api.UploadFileContext(ctx, params)
	if err != nil {
		return adapters.Sent{}, mapError(fmt.Sprintf("upload %q to %s", name, channel), err, "SLACK_BOT_TOKEN")
	}
	return adapters.Sent{MessageID: sum.ID}, nil
}
