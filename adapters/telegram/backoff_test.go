package telegram

import (
	"testing"
	"time"
)

func TestBackoffIsCappedWithJitter(t *testing.T) {
	a := New(Config{ReconnectMin: 100 * time.Millisecond, ReconnectMax: time.Second})
	b := a.newBackoff()
	for _, cur := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		cur *= time.Millisecond
		if cur == 1000*time.Millisecond {
			cur = time.Second
		}
		d := b.next()
		if d < cur/2 || d > cur {
			t.Errorf("wait %s outside [%s, %s]", d, cur/2, cur)
		}
	}
	b.reset()
	if d := b.next(); d > 100*time.Millisecond {
		t.Errorf("after reset: %s", d)
	}
}

func TestHTTPTimeoutExceedsPoll(t *testing.T) {
	a := New(Config{PollTimeout: 40 * time.Second})
	if a.http.Timeout <= 40*time.Second {
		t.Errorf("client timeout %s does not exceed the poll timeout", a.http.Timeout)
	}
}
