package teams

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/teams/teamstest"
)

// The bot's token is reused until a minute before it expires (half its
// life for short ones), then fetched anew; wrong credentials are an
// error that names the settings to check.
func TestBotTokenCachedUntilShortlyBeforeExpiry(t *testing.T) {
	fake := teamstest.New(teamstest.Options{TokenTTL: 10 * time.Minute})
	defer fake.Close()
	clk := &clock{t: time.Now()}
	ts := &tokenSource{url: fake.TokenURL(), appID: fake.AppID(), password: fake.AppPassword(), client: http.DefaultClient, now: clk.now}
	ctx := context.Background()
	first, err := ts.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clk.add(8 * time.Minute)
	if again, err := ts.get(ctx); err != nil || again != first || fake.TokenRequests() != 1 {
		t.Fatalf("8 minutes into 10: %v, same %v, %d requests", err, again == first, fake.TokenRequests())
	}
	clk.add(90 * time.Second)
	if next, err := ts.get(ctx); err != nil || next == first || fake.TokenRequests() != 2 {
		t.Fatalf("30 s before expiry: %v, new %v, %d requests", err, next != first, fake.TokenRequests())
	}

	bad := &tokenSource{url: fake.TokenURL(), appID: fake.AppID(), password: "wrong", client: http.DefaultClient, now: clk.now}
	if _, err := bad.get(ctx); err == nil || !strings.Contains(err.Error(), "MICROSOFT_APP_PASSWORD") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong password: %v", err)
	}
}
