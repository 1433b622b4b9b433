package agent

import (
	"context"
	"errors"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultRetries is how many times a 429 or 5xx answer is retried.
const DefaultRetries = 3

// DefaultBackoff waits 1 s, 2 s, 4 s, … between attempts, at most 30 s.
func DefaultBackoff(attempt int) time.Duration {
	d := time.Second << max(attempt-1, 0)
	return min(d, 30*time.Second)
}

// retryable reports whether a model error is worth another attempt:
// rate limits (429) and server errors (5xx). go-openai does not retry on
// its own.
func retryable(err error) bool {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return statusRetryable(apiErr.HTTPStatusCode)
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return statusRetryable(reqErr.HTTPStatusCode)
	}
	var st interface{ HTTPStatus() int }
	if errors.As(err, &st) {
		return statusRetryable(st.HTTPStatus())
	}
	return false
}

func statusRetryable(code int) bool {
	return code == http.StatusTooManyRequests || code >= 500 && code <= 599
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
