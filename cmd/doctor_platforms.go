package cmd

// doctor_platforms.go is the credentials part of `herald doctor`: for
// each configured platform, one real call that needs its token and
// changes nothing (Telegram getMe, Slack auth.test, Discord users/@me,
// WhatsApp the phone number, Teams a client-credentials token, Matrix
// whoami), and whether the local API can listen. A token is never part of
// a line: a Telegram URL holds it, so errors are reported without their
// URL, and every line is redacted besides.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/heraldgw/herald/adapters/discord"
	"github.com/heraldgw/herald/adapters/slack"
	"github.com/heraldgw/herald/adapters/teams"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/adapters/whatsapp"
	"github.com/heraldgw/herald/config"
)

// probeResult is what a probe got back.
type probeResult struct {
	// code is the HTTP status code (0: no answer); status its line
	code   int
	status string
	// message is the error a JSON body gave, if any
	message string
}

// reason is ": <message>" when the answer said why in more words than
// its status line, else "".
func (p probeResult) reason() string {
	msg := strings.TrimPrefix(p.message, strconv.Itoa(p.code)+": ")
	if msg == "" || strings.Contains(p.status, msg) {
		return ""
	}
	return ": " + p.message
}

// probe makes one request and decodes a JSON answer into out. Its error
// never holds the URL (a Telegram URL holds the bot token): a transport
// error is reported by what went wrong and the host only.
func probe(ctx context.Context, method, rawURL string, hdr map[string]string, body io.Reader, out any) (probeResult, error) {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	u, err := url.Parse(rawURL)
	if err != nil {
		return probeResult{}, errors.New("the API address is not a URL")
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err != nil {
		return probeResult{}, fmt.Errorf("the API address %s is not usable", u.Host)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return probeResult{}, fmt.Errorf("cannot reach %s: %v", u.Host, err)
	}
	defer resp.Body.Close()
	res := probeResult{code: resp.StatusCode, status: resp.Status}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return res, fmt.Errorf("reading the answer of %s: %v", u.Host, err)
	}
	res.message = errorMessage(data)
	if err := json.Unmarshal(data, out); err != nil {
		return res, fmt.Errorf("%s answered %s that is not JSON", u.Host, resp.Status)
	}
	return res, nil
}

// errorMessage finds the reason an API gave in its JSON error body, in
// the shapes Telegram, Slack, Discord, the Graph API, OAuth and Matrix
// use.
func errorMessage(data []byte) string {
	var body struct {
		Description string `json:"description"` // Telegram
		Message     string `json:"message"`     // Discord
		ErrorDesc   string `json:"error_description"`
		Error       any    `json:"error"` // Slack, OAuth: a string; OpenAI, Graph: an object
		MatrixError string `json:"errcode"`
	}
	if json.Unmarshal(data, &body) != nil {
		return ""
	}
	switch e := body.Error.(type) {
	case map[string]any:
		if m, ok := e["message"].(string); ok && m != "" {
			return m
		}
	case string:
		// OAuth's description runs to several lines (a trace id, a
		// timestamp): its first says why
		for _, line := range strings.Split(body.ErrorDesc, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				return line
			}
		}
		if e != "" {
			if body.MatrixError != "" {
				return body.MatrixError + ": " + e
			}
			return e
		}
	}
	return firstNonEmpty(body.Description, body.Message, body.MatrixError)
}

// platformCheck checks one platform's credentials; it adds its lines to
// the report. ok is false when the platform is not configured (no line).
type platformCheck func(ctx context.Context, r *doctorReport, cfg *config.Config) (configured bool)

var platformChecks = []platformCheck{checkTelegram, checkDiscord, checkSlack, checkWhatsApp, checkTeams, checkMatrix}

// checkPlatforms checks the local API and each configured platform.
func (r *doctorReport) checkPlatforms(ctx context.Context, e *env, cfg *config.Config) {
	r.checkLocal(cfg)
	any := false
	for _, check := range platformChecks {
		if check(ctx, r, cfg) {
			any = true
		}
	}
	if !any {
		r.add("platforms", checkOK, "only the local platform is configured (no Telegram, Discord, Slack, WhatsApp, Teams or Matrix credentials)")
	}
}

// checkLocal says whether the local API can listen: served by a running
// gateway, or its address is free.
func (r *doctorReport) checkLocal(cfg *config.Config) {
	listen := cfg.Platforms.Local.Listen
	if pid := runningGateway(cfg.Home); pid != 0 {
		pidText := "unknown"
		if pid > 0 {
			pidText = fmt.Sprint(pid)
		}
		r.add("local", checkOK, "a gateway runs on this home (pid %s); herald status shows it", pidText)
		return
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		r.add("local", checkFail, "the local API cannot listen on %s: %v (platforms.local.listen or HERALD_LOCAL_LISTEN)", listen, unwrapOp(err))
		return
	}
	ln.Close()
	r.add("local", checkOK, "the local API can listen on %s", listen)
}

// unwrapOp drops the "listen tcp 127.0.0.1:1:" prefix of a net error.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

func checkTelegram(ctx context.Context, r *doctorReport, cfg *config.Config) bool {
	tc := cfg.Platforms.Telegram
	if !config.On(tc.Enabled, tc.Token != "") {
		return false
	}
	if tc.Token == "" {
		r.add("telegram", checkFail, "enabled, but there is no bot token (TELEGRAM_BOT_TOKEN or platforms.telegram.token)")
		return true
	}
	endpoint := firstNonEmpty(tc.APIEndpoint, telegram.DefaultAPIEndpoint)
	var me struct {
		OK     bool `json:"ok"`
		Result struct {
			Username string `json:"username"`
		} `json:"result"`
	}
	res, err := probe(ctx, http.MethodGet, fmt.Sprintf(endpoint, tc.Token, "getMe"), nil, nil, &me)
	switch {
	case err != nil && res.code == 0:
		r.add("telegram", checkFail, "getMe: %v", err)
	case res.code == http.StatusUnauthorized || res.code == http.StatusNotFound:
		r.add("telegram", checkFail, "getMe: the bot token was refused (%s)%s", res.status, res.reason())
	case err != nil || !me.OK:
		r.add("telegram", checkFail, "getMe answered %s%s", res.status, res.reason())
	default:
		r.add("telegram", checkOK, "getMe: token accepted, the bot is @%s", me.Result.Username)
	}
	return true
}

func checkDiscord(ctx context.Context, r *doctorReport, cfg *config.Config) bool {
	dc := cfg.Platforms.Discord
	if !config.On(dc.Enabled, dc.Token != "") {
		return false
	}
	if dc.Token == "" {
		r.add("discord", checkFail, "enabled, but there is no bot token (DISCORD_BOT_TOKEN or platforms.discord.token)")
		return true
	}
	base := firstNonEmpty(dc.APIBase, discord.DefaultAPIBase)
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	var me struct {
		Username string `json:"username"`
	}
	res, err := probe(ctx, http.MethodGet, base+"users/@me", map[string]string{"Authorization": "Bot " + dc.Token}, nil, &me)
	switch {
	case err != nil && res.code == 0:
		r.add("discord", checkFail, "users/@me: %v", err)
	case res.code == http.StatusUnauthorized || res.code == http.StatusForbidden:
		r.add("discord", checkFail, "users/@me: the bot token was refused (%s)%s", res.status, res.reason())
	case err != nil || res.code != http.StatusOK:
		r.add("discord", checkFail, "users/@me answered %s%s", res.status, res.reason())
	default:
		r.add("discord", checkOK, "users/@me: token accepted, the bot is %s", me.Username)
	}
	return true
}

func checkSlack(ctx context.Context, r *doctorReport, cfg *config.Config) bool {
	sc := cfg.Platforms.Slack
	if !config.On(sc.Enabled, sc.BotToken != "") {
		return false
	}
	if sc.BotToken == "" {
		r.add("slack", checkFail, "enabled, but there is no bot token (SLACK_BOT_TOKEN or platforms.slack.bot_token)")
		return true
	}
	switch sc.Mode {
	case "", slack.ModeSocket:
		if sc.AppToken == "" {
			r.add("slack", checkFail, "Socket Mode needs an app-level token (SLACK_APP_TOKEN or platforms.slack.app_token), or mode: events")
		}
	case slack.ModeEvents:
		if sc.SigningSecret == "" {
			r.add("slack", checkFail, "mode: events needs the signing secret (SLACK_SIGNING_SECRET or platforms.slack.signing_secret)")
		}
	}
	base := firstNonEmpty(sc.APIURL, slack.DefaultAPIURL)
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	var auth struct {
		OK    bool   `json:"ok"`
		User  string `json:"user"`
		Team  string `json:"team"`
		Error string `json:"error"`
	}
	res, err := probe(ctx, http.MethodPost, base+"auth.test", map[string]string{"Authorization": "Bearer " + sc.BotToken}, nil, &auth)
	switch {
	case err != nil && res.code == 0:
		r.add("slack", checkFail, "auth.test: %v", err)
	case err != nil || res.code != http.StatusOK:
		r.add("slack", checkFail, "auth.test answered %s%s", res.status, res.reason())
	case !auth.OK:
		r.add("slack", checkFail, "auth.test: the bot token was refused (%s)", auth.Error)
	default:
		r.add("slack", checkOK, "auth.test: token accepted, the bot is %s in %s", auth.User, auth.Team)
	}
	return true
}

func checkWhatsApp(ctx context.Context, r *doctorReport, cfg *config.Config) bool {
	wc := cfg.Platforms.WhatsApp
	if !config.On(wc.Enabled, wc.AccessToken != "") {
		return false
	}
	if wc.AccessToken == "" || wc.PhoneNumberID == "" {
		r.add("whatsapp", checkFail, "enabled, but the access token or the phone number id is missing (WHATSAPP_ACCESS_TOKEN, WHATSAPP_PHONE_NUMBER_ID)")
		return true
	}
	base := strings.TrimSuffix(firstNonEmpty(wc.APIBase, whatsapp.DefaultAPIBase), "/")
	var phone struct {
		ID                 string `json:"id"`
		DisplayPhoneNumber string `json:"display_phone_number"`
	}
	res, err := probe(ctx, http.MethodGet, base+"/"+url.PathEscape(wc.PhoneNumberID), map[string]string{"Authorization": "Bearer " + wc.AccessToken}, nil, &phone)
	switch {
	case err != nil && res.code == 0:
		r.add("whatsapp", checkFail, "phone number %s: %v", wc.PhoneNumberID, err)
	case res.code == http.StatusUnauthorized || res.code == http.StatusForbidden:
		r.add("whatsapp", checkFail, "phone number %s: the access token was refused (%s)%s", wc.PhoneNumberID, res.status, res.reason())
	case err != nil || res.code != http.StatusOK:
		r.add("whatsapp", checkFail, "phone number %s: the Graph API answered %s%s", wc.PhoneNumberID, res.status, res.reason())
	default:
		r.add("whatsapp", checkOK, "token accepted for phone number %s %s", wc.PhoneNumberID, phone.DisplayPhoneNumber)
	}
	return true
}

func checkTeams(ctx context.Context, r *doctorReport, cfg *config.Config) bool {
	tc := cfg.Platforms.Teams
	if !config.On(tc.Enabled, tc.AppID != "") {
		return false
	}
	if tc.AppID == "" || tc.AppPassword == "" {
		r.add("teams", checkFail, "enabled, but the app id or password is missing (MICROSOFT_APP_ID, MICROSOFT_APP_PASSWORD)")
		return true
	}
	tokenURL := tc.TokenURL
	switch {
	case tokenURL != "":
	case tc.TenantID != "":
		tokenURL = teams.TenantTokenURL(tc.TenantID)
	default:
		tokenURL = teams.DefaultTokenURL
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {tc.AppID}, "client_secret": {tc.AppPassword}, "scope": {teams.Scope}}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	res, err := probe(ctx, http.MethodPost, tokenURL, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, strings.NewReader(form.Encode()), &tok)
	switch {
	case err != nil && res.code == 0:
		r.add("teams", checkFail, "token: %v", err)
	case err != nil || res.code != http.StatusOK || tok.AccessToken == "":
		r.add("teams", checkFail, "token: app %s was refused (%s)%s", tc.AppID, res.status, res.reason())
	default:
		r.add("teams", checkOK, "token: app %s got a Bot Framework token", tc.AppID)
	}
	return true
}

func checkMatrix(ctx context.Context, r *doctorReport, cfg *config.Config) bool {
	mc := cfg.Platforms.Matrix
	if !config.On(mc.Enabled, mc.Homeserver != "") {
		return false
	}
	switch {
	case mc.Homeserver == "":
		r.add("matrix", checkFail, "enabled, but there is no homeserver (MATRIX_HOMESERVER or platforms.matrix.homeserver)")
		return true
	case mc.AccessToken == "" && mc.Password != "":
		r.add("matrix", checkWarn, "not checked: a password login happens when the gateway starts (an access token, MATRIX_ACCESS_TOKEN, can be checked)")
		return true
	case mc.AccessToken == "":
		r.add("matrix", checkFail, "no access token or password (MATRIX_ACCESS_TOKEN, or MATRIX_USER_ID and MATRIX_PASSWORD)")
		return true
	}
	var who struct {
		UserID string `json:"user_id"`
	}
	base := strings.TrimSuffix(mc.Homeserver, "/")
	res, err := probe(ctx, http.MethodGet, base+"/_matrix/client/v3/account/whoami", map[string]string{"Authorization": "Bearer " + mc.AccessToken}, nil, &who)
	switch {
	case err != nil && res.code == 0:
		r.add("matrix", checkFail, "whoami: %v", err)
	case err != nil || res.code != http.StatusOK:
		r.add("matrix", checkFail, "whoami: the access token was refused (%s)%s", res.status, res.reason())
	default:
		r.add("matrix", checkOK, "whoami: token accepted, the bot is %s", who.UserID)
	}
	return true
}
