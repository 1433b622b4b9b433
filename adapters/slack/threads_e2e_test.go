package slack_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/agent/agenttest"
)

// A follow-up in a thread the bot was answering, sent after a restart and
// without a mention, is answered, and the model sees what was said in the
// thread while herald was down (and not again what its history holds).
func TestGatewayThreadFollowUpAfterRestart(t *testing.T) {
	srv := newFake(t)
	llm := agenttest.New(t)
	model := agent.NewOpenAI(llm.BaseURL(), "sk-test", nil)
	path := filepath.Join(t.TempDir(), "state.db")

	_, stop := startGatewayAt(t, path, srv, model)
	in := srv.Mention("C1", "U1", "help me with the deploy")
	if _, err := srv.WaitMessages(ctxT(t), 1); err != nil {
		stop()
		t.Fatal(err)
	}
	stop()

	srv.AddMessage("C1", in.TS, "U2", "it failed at step 3 with exit code 137")
	_, stop = startGatewayAt(t, path, srv, model)
	t.Cleanup(stop)
	srv.ThreadReply("C1", in.TS, "U1", "any idea why?")
	posts, err := srv.WaitMessages(ctxT(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if p := posts[1]; p.Channel != "C1" || p.ThreadTS != in.TS {
		t.Errorf("follow-up answered with %+v, want in thread %s", p, in.TS)
	}
	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	last := reqs[1].LastMessage().Content
	if !strings.Contains(last, "U2: it failed at step 3 with exit code 137") || !strings.HasSuffix(last, "any idea why?") {
		t.Errorf("the follow-up's prompt lacks the thread's missed message:\n%s", last)
	}
	var inHistory bool
	for _, m := range reqs[1].Body.Messages[:len(reqs[1].Body.Messages)-1] {
		inHistory = inHistory || strings.Contains(m.Content, "help me with the deploy")
	}
	if !inHistory {
		t.Error("the thread's session history did not survive the restart")
	}
	if strings.Contains(last, "help me with the deploy") {
		t.Errorf("the thread context repeats what the history holds:\n%s", last)
	}
	if n := srv.Calls("conversations.replies"); n != 1 {
		t.Errorf("conversations.replies called %d times, want 1", n)
	}
	// the thread is known now: a further follow-up reads no history
	srv.ThreadReply("C1", in.TS, "U1", "thanks")
	if _, err := srv.WaitMessages(ctxT(t), 3); err != nil {
		t.Fatal(err)
	}
	if n := srv.Calls("conversations.replies"); n != 1 {
		t.Errorf("conversations.replies called %d times after a second follow-up, want 1", n)
	}
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
}
