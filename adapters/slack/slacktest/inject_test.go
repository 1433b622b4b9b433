package slacktest_test

import (
	"net/http"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/heraldgw/herald/adapters/slack/slacktest"
)

// Slack's documented example request
// (https://api.slack.com/authentication/verifying-requests-from-slack).
const (
	docSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	docTS     = 1531420618
	docBody   = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	docSig    = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
)

func TestSignature(t *testing.T) {
	if got := slacktest.Signature(docSecret, time.Unix(docTS, 0), []byte(docBody)); got != docSig {
		t.Errorf("Signature = %s, want Slack's %s", got, docSig)
	}
	// and slack-go's verifier accepts what Sign sets
	body := []byte(`{"type":"event_callback"}`)
	h := http.Header{}
	slacktest.Sign(h, "s3cr3t-value", time.Now(), body)
	sv, err := slackapi.NewSecretsVerifier(h, "s3cr3t-value")
	if err != nil {
		t.Fatal(err)
	}
	sv.Write(body)
	if err := sv.Ensure(); err != nil {
		t.Errorf("slack-go refused the signature: %v", err)
	}
}
