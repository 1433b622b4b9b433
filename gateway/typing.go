package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// TypingInterval is how often the typing indicator is renewed while a turn
// runs: Telegram shows it for about 5 s, Discord for about 10 s.
const TypingInterval = 4 * time.Second

// typing shows the platform's typing indicator in src's chat now and every
// TypingInterval until the returned function is called. Platforms without
// one (adapters.Typer) cost nothing; a failing indicator is only logged
// once, since the answer matters and the indicator does not.
func (r *Runner) typing(ctx context.Context, src herald.Source) (stop func()) {
	t, ok := r.adapters[src.Platform].(adapters.Typer)
	if !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(TypingInterval)
		defer tick.Stop()
		logged := false
		for {
			tctx, tcancel := context.WithTimeout(ctx, TypingInterval)
			err := t.Typing(tctx, src.Target())
			tcancel()
			if err != nil && !logged && ctx.Err() == nil {
				logged = true
				r.log.Debug("typing indicator failed", "platform", src.Platform, "err", r.cfg.Redactor.Redact(err.Error()))
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}
