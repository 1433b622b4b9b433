package teams

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/teams/teamstest"
)

// clock is a settable time for the verifier.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The signing keys are fetched once and cached; a token naming an
// unknown key id fetches them again at most once a minute, however many
// such tokens arrive; a day later they are fetched again.
func TestSigningKeysCachedAndRefetchBounded(t *testing.T) {
	fake := teamstest.New(teamstest.Options{})
	defer fake.Close()
	clk := &clock{t: time.Now()}
	v := &verifier{appID: fake.AppID(), metadataURL: fake.OpenIDMetadataURL(), client: http.DefaultClient, now: clk.now}
	ctx := context.Background()
	good := "Bearer " + fake.Token(fake.ServiceURL(), teamstest.Signing{})
	for range 3 {
		if _, err := v.verify(ctx, good, "msteams"); err != nil {
			t.Fatal(err)
		}
	}
	if n := fake.KeyFetches(); n != 1 {
		t.Fatalf("%d key fetches for 3 tokens, want 1", n)
	}
	clk.add(2 * time.Minute)
	for range 5 {
		_, err := v.verify(ctx, "Bearer "+fake.Token(fake.ServiceURL(), teamstest.Signing{KeyID: "made-up"}), "msteams")
		if !errors.Is(err, errUnauthorized) {
			t.Fatalf("unknown key id: %v", err)
		}
	}
	if n := fake.KeyFetches(); n != 2 {
		t.Fatalf("%d key fetches after 5 unknown key ids, want 2", n)
	}
	if _, err := v.verify(ctx, good, "msteams"); err != nil {
		t.Fatalf("the known key after a refetch: %v", err)
	}
	// the fake's key endorses msteams only
	if _, err := v.verify(ctx, good, "slack"); !errors.Is(err, errUnauthorized) {
		t.Fatalf("a channel the key does not endorse: %v", err)
	}
	// a day later the keys are read again (and the token, signed against
	// the real clock, has long expired)
	clk.add(25 * time.Hour)
	if _, err := v.verify(ctx, good, "msteams"); !errors.Is(err, errUnauthorized) {
		t.Fatalf("a token a day old: %v", err)
	}
	if n := fake.KeyFetches(); n != 3 {
		t.Fatalf("%d key fetches, want 3 (keys older than a day are read again)", n)
	}
}
