package telegram

// webhook.go is webhook mode: an HTTP endpoint Telegram posts updates to,
// guarded by the secret-token header, served at WebhookPath on the shared
// inbound listener, or on a listener of its own at WebhookListen (the
// older form).

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/heraldgw/herald/adapters"
)

// SecretHeader is the header Telegram sets to the webhook's secret_token.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// maxUpdateSize bounds one webhook body.
const maxUpdateSize = 4 << 20

// WebhookPath is the webhook's path on the shared inbound listener.
const WebhookPath = "/telegram/webhook"

// webhookMode reports whether updates come by webhook rather than polling.
func (a *Adapter) webhookMode() bool {
	return a.cfg.WebhookListen != "" || a.cfg.WebhookURL != ""
}

// InboundRoutes implements adapters.InboundRouter: in webhook mode
// without a listener of its own, the webhook is served on the shared
// inbound listener.
func (a *Adapter) InboundRoutes() map[string]http.Handler {
	if a.cfg.WebhookListen != "" || a.cfg.WebhookURL == "" {
		return nil
	}
	return map[string]http.Handler{WebhookPath: &a.inbound}
}

func (a *Adapter) runWebhook(ctx context.Context, sink adapters.Sink) error {
	if a.cfg.WebhookSecret == "" {
		return &adapters.FatalError{Msg: "telegram: webhook mode needs a secret: set TELEGRAM_WEBHOOK_SECRET or platforms.telegram.webhook_secret"}
	}
	var ln net.Listener
	if a.cfg.WebhookListen != "" {
		var err error
		if ln, err = net.Listen("tcp", a.cfg.WebhookListen); err != nil {
			return &adapters.FatalError{Msg: fmt.Sprintf("telegram: webhook: cannot listen on %s", a.cfg.WebhookListen), Err: err}
		}
	}
	if a.cfg.WebhookURL != "" {
		p := tgbotapi.Params{}
		p["url"] = a.cfg.WebhookURL
		p["secret_token"] = a.cfg.WebhookSecret
		p.AddInterface("allowed_updates", allowedUpdates)
		if _, err := a.bot(ctx).MakeRequest("setWebhook", p); err != nil {
			if ln != nil {
				ln.Close()
			}
			return a.classify("setWebhook", err)
		}
	}
	if ln == nil {
		defer a.inbound.Put(a.webhookHandler(ctx, sink))()
		a.setState("connected (webhook)")
		a.log.Info("telegram webhook served on the inbound listener", "path", WebhookPath)
		<-ctx.Done()
		return nil
	}
	a.setState("connected (webhook)")
	a.log.Info("telegram webhook listening", "addr", ln.Addr().String())
	if a.cfg.OnListen != nil {
		a.cfg.OnListen(ln.Addr().String())
	}
	// the listener faces the internet: shared limits on header and body
	// time, idle connections, header and body size, and connections
	limits := adapters.HTTPLimits{MaxBody: maxUpdateSize}
	if err := adapters.ServeHTTP(ctx, ln, a.webhookHandler(ctx, sink), limits, 5*time.Second); err != nil {
		return fmt.Errorf("telegram: webhook server: %w", err)
	}
	return nil
}

// webhookHandler accepts updates whose secret header matches. It answers
// 200 once the sink took the update, so Telegram retries anything herald
// did not take.
func (a *Adapter) webhookHandler(ctx context.Context, sink adapters.Sink) http.Handler {
	secret := []byte(a.cfg.WebhookSecret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(SecretHeader)), secret) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxUpdateSize))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, "update too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		self := a.self
		a.mu.Unlock()
		_, m, ok, err := translate(body, self)
		if err != nil {
			// Telegram would retry a 4xx forever for an update that can
			// never be read; say so and drop it.
			a.log.Warn("telegram webhook: unreadable update dropped", "err", err)
			w.WriteHeader(http.StatusOK)
			return
		}
		if from, to, moved := migration(body); moved && !a.moveChat(ctx, sink, from, to) {
			http.Error(w, "could not move the chat", http.StatusServiceUnavailable)
			return
		}
		if !ok {
			a.handlePress(ctx, sink, body)
		}
		if ok && adapters.Refused(a.rx.Receive(ctx, sink, m, m.Source.ChatID)) {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

var _ adapters.InboundRouter = (*Adapter)(nil)
