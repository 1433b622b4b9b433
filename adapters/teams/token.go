package teams

// token.go: the bot's own token for the Connector REST API, from the
// client-credentials grant (app id and password), cached until
// tokenEarly before it expires. Concurrent sends share one request.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/heraldgw/herald/adapters"
)

const (
	// Scope is what the bot's token is asked for.
	Scope = "https://api.botframework.com/.default"
	// tokenEarly is how long before its expiry a token is replaced.
	tokenEarly = time.Minute
	// tokenFetchTimeout bounds one token request.
	tokenFetchTimeout = 30 * time.Second
)

// tokenSource fetches and caches the bot's token.
type tokenSource struct {
	url, appID, password string
	client               *http.Client
	now                  func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
}

// get returns a token valid for at least tokenEarly more.
func (ts *tokenSource) get(ctx context.Context) (string, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.token != "" && ts.now().Before(ts.expires) {
		return ts.token, nil
	}
	// the token is every sender's: a caller that gives up (a typing
	// indicator's short deadline) does not throw away the request the
	// next caller would make again
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tokenFetchTimeout)
	defer cancel()
	tok, ttl, err := ts.fetch(fctx)
	if err != nil {
		return "", err
	}
	early := min(tokenEarly, ttl/2)
	ts.token, ts.expires = tok, ts.now().Add(ttl-early)
	return tok, nil
}

// forget drops the cached token (the Connector refused it).
func (ts *tokenSource) forget(tok string) {
	ts.mu.Lock()
	if ts.token == tok {
		ts.token = ""
	}
	ts.mu.Unlock()
}

func (ts *tokenSource) fetch(ctx context.Context) (string, time.Duration, error) {
	form := url.Values{
		"grant_type": {"client_credentials"}, "client_id": {ts.appID},
		"client_secret": {ts.password}, "scope": {Scope},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.url, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("teams: token endpoint %s: %w", ts.url, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := ts.client.Do(req)
	if err != nil {
		return "", 0, &adapters.TemporaryError{Err: fmt.Errorf("teams: token endpoint: %w", err)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var t struct {
		AccessToken string          `json:"access_token"`
		ExpiresIn   json.Number     `json:"expires_in"`
		Error       string          `json:"error"`
		Description json.RawMessage `json:"error_description"`
	}
	json.Unmarshal(body, &t)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return "", 0, &adapters.RetryAfterError{After: retryAfter(resp.Header), Err: fmt.Errorf("teams: token endpoint: HTTP 429")}
	case resp.StatusCode >= 500:
		return "", 0, &adapters.TemporaryError{Err: fmt.Errorf("teams: token endpoint: HTTP %d", resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return "", 0, fmt.Errorf("teams: the token endpoint refused the bot's credentials (HTTP %d %s): check MICROSOFT_APP_ID, MICROSOFT_APP_PASSWORD and MICROSOFT_APP_TENANT_ID", resp.StatusCode, t.Error)
	case t.AccessToken == "":
		return "", 0, fmt.Errorf("teams: the token endpoint answered no access_token")
	}
	secs, err := t.ExpiresIn.Int64()
	if err != nil || secs <= 0 {
		secs = 3600
	}
	return t.AccessToken, time.Duration(secs) * time.Second, nil
}
