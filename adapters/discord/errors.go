package discord

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/heraldgw/herald/adapters"
)

// classify maps a discordgo REST error to what the gateway does next: a
// rate limit waits for Discord's retry_after, a refused token stops the
// adapter, a network failure or a 5xx is retried, anything else (400 for
// a message over 2000 characters, 403 for a channel the bot may not write
// in, 404) is this message's failure only.
func classify(ctx context.Context, op string, err error) error {
	wrapped := fmt.Errorf("discord: %s: %w", op, err)
	if ctx.Err() != nil {
		return fmt.Errorf("discord: %s: %w", op, ctx.Err())
	}
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) && rl.RateLimit != nil && rl.TooManyRequests != nil {
		return &adapters.RetryAfterError{After: rl.RetryAfter, Err: wrapped}
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil {
		switch code := re.Response.StatusCode; {
		case code == http.StatusUnauthorized:
			return &adapters.FatalError{Msg: tokenHint, Err: restError(op, re)}
		case code >= 500, code == http.StatusRequestTimeout:
			return &adapters.TemporaryError{Err: restError(op, re)}
		default:
			return restError(op, re)
		}
	}
	if isNetwork(err) {
		return &adapters.TemporaryError{Err: wrapped}
	}
	return wrapped
}

// restError words a REST failure with Discord's own message and code
// rather than the raw body.
func restError(op string, re *discordgo.RESTError) error {
	if re.Message != nil && re.Message.Message != "" {
		return fmt.Errorf("discord: %s: HTTP %d: %s (code %d)", op, re.Response.StatusCode, re.Message.Message, re.Message.Code)
	}
	return fmt.Errorf("discord: %s: HTTP %d", op, re.Response.StatusCode)
}

func isNetwork(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed)
}

// connectError maps a failure to connect: a refused token (401/403 on
// REST, close code 4004 on the gateway) or intents Discord will not grant
// (4013, 4014) are fatal; the rest is worth another try.
func connectError(ctx context.Context, op string, err error) error {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		switch ce.Code {
		case 4004:
			return &adapters.FatalError{Msg: tokenHint, Err: err}
		case 4013, 4014:
			return &adapters.FatalError{Msg: "discord: the gateway refused herald's intents; enable the Message Content intent for the bot in the Discord developer portal", Err: err}
		case 4010, 4011, 4012:
			return &adapters.FatalError{Msg: "discord: the gateway refused the connection (shard or API version)", Err: err}
		}
		return &adapters.TemporaryError{Err: fmt.Errorf("discord: %s: %w", op, err)}
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusForbidden {
		return &adapters.FatalError{Msg: tokenHint, Err: restError(op, re)}
	}
	err = classify(ctx, op, err)
	var ra *adapters.RetryAfterError
	var tmp *adapters.TemporaryError
	if adapters.IsFatal(err) || errors.As(err, &ra) || errors.As(err, &tmp) || ctx.Err() != nil {
		return err
	}
	return &adapters.TemporaryError{Err: err}
}
