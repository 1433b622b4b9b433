package matrix_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/matrix"
	"github.com/heraldgw/herald/adapters/matrix/matrixtest"
)

const (
	ann   = "@ann:localhost"
	bob   = "@bob:localhost"
	dmID  = "!dm:localhost"
	grpID = "!group:localhost"
	// markerID is a room for markers (see sink.none)
	markerID = "!marker:localhost"
)

// memStore is a kv store that outlives one adapter, as state.db does.
type memStore struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *memStore) KV(_ context.Context, k string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	return v, ok, nil
}

func (s *memStore) SetKV(_ context.Context, k, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[k] = v
	return nil
}

// sink records what the adapter hands over.
type sink struct {
	ch chan herald.Message
}

func (s *sink) Receive(_ context.Context, m herald.Message) *adapters.Receipt {
	s.ch <- m
	return adapters.Resolved(adapters.Outcome{Status: adapters.StatusDone})
}

func (s *sink) next(t *testing.T) herald.Message {
	t.Helper()
	select {
	case m := <-s.ch:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message reached the sink")
	}
	return herald.Message{}
}

// none checks that nothing reached the sink before a marker message
// said after whatever was under test.
func (s *sink) none(t *testing.T, fake *matrixtest.Server) {
	t.Helper()
	id := fake.Say(markerID, ann, matrixtest.Text("marker"))
	if m := s.next(t); m.ID != id {
		t.Fatalf("unexpected message %+v", m)
	}
}

type running struct {
	ad   *matrix.Adapter
	sink *sink
	stop func() error
}

// start runs an adapter on fake and waits until its first sync is done
// (the backlog skipped) and the next one is waiting.
func start(t *testing.T, fake *matrixtest.Server, cfg matrix.Config) *running {
	t.Helper()
	cfg.Homeserver = fake.URL()
	if cfg.AccessToken == "" && cfg.Password == "" {
		cfg.AccessToken = fake.Token()
	}
	if cfg.Store == nil {
		cfg.Store = &memStore{}
	}
	cfg.SyncTimeout = 5 * time.Second
	ad := matrix.New(cfg)
	s := &sink{ch: make(chan herald.Message, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	syncs := len(fake.Sinces())
	want := syncs + 2 // the first sync, without waiting, then the long poll
	go func() { done <- ad.Run(ctx, s) }()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := fake.WaitSyncs(wctx, want); err != nil {
		cancel()
		t.Fatalf("the adapter did not sync: %v (health %q)", err, ad.Health())
	}
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { stop() })
	return &running{ad: ad, sink: s, stop: stop}
}

func newFake(t *testing.T) *matrixtest.Server {
	fake := matrixtest.New(matrixtest.Options{})
	t.Cleanup(fake.Close)
	fake.Room(dmID, map[string]string{ann: "Ann"})
	fake.Room(grpID, map[string]string{ann: "Ann", bob: "Bob"})
	fake.Room(markerID, map[string]string{ann: "Ann"})
	return fake
}

func TestDMAndBacklog(t *testing.T) {
	fake := newFake(t)
	fake.Say(dmID, ann, matrixtest.Text("said before herald started"))
	r := start(t, fake, matrix.Config{})
	id := fake.Say(dmID, ann, matrixtest.Text("hello"))
	m := r.sink.next(t)
	want := herald.Source{Platform: matrix.Platform, ChatID: dmID, ChatType: herald.ChatDM, UserID: ann, UserName: "Ann"}
	if m.ID != id || m.Text != "hello" || m.Source != want {
		t.Fatalf("got %+v", m)
	}
	if r.ad.Health() != "connected" {
		t.Errorf("health %q", r.ad.Health())
	}
}

func TestSendFormatsRepliesAndThreads(t *testing.T) {
	fake := newFake(t)
	r := start(t, fake, matrix.Config{})
	ctx := context.Background()
	to := herald.Target{Platform: matrix.Platform, ChatID: grpID}
	sent, err := r.ad.Send(ctx, to, adapters.Outgoing{Text: "**bold** and <b>raw</b>", ReplyTo: "$q"})
	if err != nil {
		t.Fatal(err)
	}
	got := fake.Sent()[0]
	if got.EventID != sent.MessageID || got.Body != "**bold** and <b>raw</b>" || got.Format != "org.matrix.custom.html" ||
		got.FormattedBody != "<strong>bold</strong> and &lt;b&gt;raw&lt;/b&gt;" || got.ReplyTo != "$q" || got.ThreadRoot != "" {
		t.Errorf("sent %+v", got)
	}
	if _, err := r.ad.Send(ctx, to, adapters.Outgoing{Text: "plain words", Plain: true}); err != nil {
		t.Fatal(err)
	}
	if got := fake.Sent()[1]; got.Format != "" || got.FormattedBody != "" {
		t.Errorf("plain sent %+v", got)
	}
	to.ThreadID = "$root"
	if _, err := r.ad.Send(ctx, to, adapters.Outgoing{Text: "in the thread"}); err != nil {
		t.Fatal(err)
	}
	if got := fake.Sent()[2]; got.ThreadRoot != "$root" || got.ReplyTo != "$root" {
		t.Errorf("thread sent %+v", got)
	}
}

func TestMentionsAndThreadsInbound(t *testing.T) {
	fake := newFake(t)
	r := start(t, fake, matrix.Config{})
	for _, c := range []struct {
		content   map[string]any
		mentioned bool
		text      string
	}{
		{matrixtest.Text("just chatting"), false, "just chatting"},
		{matrixtest.Mention("hey you", fake.UserID()), true, "hey you"},
		{matrixtest.Text("Herald: what time is it"), true, "what time is it"},
		{matrixtest.Text("ask " + fake.UserID() + " later"), true, "ask " + fake.UserID() + " later"},
		{matrixtest.Text("heraldry is old"), false, "heraldry is old"},
	} {
		id := fake.Say(grpID, bob, c.content)
		m := r.sink.next(t)
		if m.ID != id || m.Mentioned != c.mentioned || m.Text != c.text || m.Source.ChatType != herald.ChatGroup || m.Source.UserName != "Bob" {
			t.Errorf("%v: got %+v", c.content, m)
		}
	}
	root := fake.Say(grpID, bob, matrixtest.Text("root"))
	r.sink.next(t)
	fake.Say(grpID, bob, matrixtest.InThread("in thread", root))
	if m := r.sink.next(t); m.Source.ThreadID != root || m.ReplyTo != "" {
		t.Errorf("thread message %+v", m)
	}
	fake.Say(grpID, bob, matrixtest.ReplyTo("> <@ann:localhost> root\n\nthe answer", root))
	if m := r.sink.next(t); m.ReplyTo != root || m.Text != "the answer" || m.Source.ThreadID != "" {
		t.Errorf("reply %+v", m)
	}
	// a reply to the bot's own message addresses it
	mine, err := r.ad.Send(context.Background(), herald.Target{ChatID: grpID}, adapters.Outgoing{Text: "a question?"})
	if err != nil {
		t.Fatal(err)
	}
	fake.Say(grpID, bob, matrixtest.ReplyTo("yes", mine.MessageID))
	if m := r.sink.next(t); !m.Mentioned || m.ReplyTo != mine.MessageID {
		t.Errorf("a reply to the bot %+v", m)
	}
	// notices (other bots) and edits are not answered
	fake.Say(grpID, bob, map[string]any{"msgtype": "m.notice", "body": "a bot says"})
	fake.Say(grpID, bob, map[string]any{"msgtype": "m.text", "body": "* edited", "m.relates_to": map[string]any{"rel_type": "m.replace", "event_id": root}})
	r.sink.none(t, fake)
}

func TestEditAndTyping(t *testing.T) {
	fake := newFake(t)
	r := start(t, fake, matrix.Config{})
	ctx := context.Background()
	to := herald.Target{Platform: matrix.Platform, ChatID: dmID}
	if err := r.ad.Typing(ctx, to); err != nil {
		t.Fatal(err)
	}
	if err := r.ad.Typing(ctx, to); err != nil { // within the renewal: nothing sent
		t.Fatal(err)
	}
	sent, err := r.ad.Send(ctx, to, adapters.Outgoing{Text: "draft"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ad.Edit(ctx, to, sent.MessageID, "final *text*"); err != nil {
		t.Fatal(err)
	}
	got := fake.Sent()[1]
	if got.Replaces != sent.MessageID || got.NewBody != "final *text*" || got.Body != "* final *text*" || !strings.Contains(got.FormattedBody, "<em>text</em>") {
		t.Errorf("edit %+v", got)
	}
	if err := r.ad.Delete(ctx, to, sent.MessageID); err != nil {
		t.Fatal(err)
	}
	if red := fake.Redacted(); len(red) != 1 || red[0] != sent.MessageID {
		t.Errorf("redacted %q", red)
	}
	ty := fake.Typings()
	if len(ty) != 2 || !ty[0].Typing || ty[0].Timeout != 30000 || ty[1].Typing || ty[0].Room != dmID {
		t.Errorf("typing %+v, want on once, then off after the answer", ty)
	}
}

func TestRateLimitIsRetryAfter(t *testing.T) {
	fake := newFake(t)
	r := start(t, fake, matrix.Config{})
	fake.RateLimit(1, 1500*time.Millisecond)
	_, err := r.ad.Send(context.Background(), herald.Target{ChatID: dmID}, adapters.Outgoing{Text: "x"})
	var ra *adapters.RetryAfterError
	if !errors.As(err, &ra) || ra.After != 1500*time.Millisecond {
		t.Fatalf("err %v, want retry after 1.5s", err)
	}
	if _, err := r.ad.Send(context.Background(), herald.Target{ChatID: dmID}, adapters.Outgoing{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if n := len(fake.Sent()); n != 1 {
		t.Errorf("%d sent", n)
	}
}

// A restart resumes from the stored since token: what was said while
// herald was down arrives, what was answered before does not come again.
func TestRestartNeitherReplaysNorLoses(t *testing.T) {
	fake := newFake(t)
	store := &memStore{}
	r := start(t, fake, matrix.Config{Store: store})
	first := fake.Say(dmID, ann, matrixtest.Text("before the restart"))
	if m := r.sink.next(t); m.ID != first {
		t.Fatalf("got %+v", m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// the token after the first message is stored once the next sync
	// starts
	if err := fake.WaitSyncs(ctx, len(fake.Sinces())+1); err != nil {
		t.Fatal(err)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	down := fake.Say(dmID, ann, matrixtest.Text("while herald was down"))
	r2 := start(t, fake, matrix.Config{Store: store})
	if m := r2.sink.next(t); m.ID != down {
		t.Fatalf("after the restart got %+v, want the message said while down", m)
	}
	r2.sink.none(t, fake)
	if s := fake.Sinces(); s[len(s)-1] == "" {
		t.Errorf("syncs %q", s)
	}
}

func TestEncryptedRoomGetsOneNotice(t *testing.T) {
	fake := newFake(t)
	r := start(t, fake, matrix.Config{})
	fake.Post(grpID, bob, "m.room.encrypted", matrixtest.Encrypted())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sent, err := fake.WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sent[0].Room != grpID || sent[0].MsgType != "m.notice" || !strings.Contains(sent[0].Body, "does not support end-to-end encryption") {
		t.Fatalf("notice %+v", sent[0])
	}
	fake.Post(grpID, bob, "m.room.encrypted", matrixtest.Encrypted())
	r.sink.none(t, fake)
	if n := len(fake.Sent()); n != 1 {
		t.Errorf("%d notices, want one", n)
	}
	// nothing herald says goes there
	_, err = r.ad.Send(ctx, herald.Target{ChatID: grpID}, adapters.Outgoing{Text: "hi"})
	if !errors.Is(err, matrix.ErrEncrypted) {
		t.Errorf("send to an encrypted room: %v", err)
	}
	// a room turned encrypted later: the notice, and its messages unread
	fake.Encrypt(dmID, ann)
	fake.Say(dmID, ann, matrixtest.Text("plain text in an encrypted room"))
	if _, err := fake.WaitSent(ctx, 2); err != nil {
		t.Fatal(err)
	}
	r.sink.none(t, fake)
}

func TestInvites(t *testing.T) {
	fake := newFake(t)
	paired := func(_ context.Context, u string) bool { return u == "@paired:localhost" }
	start(t, fake, matrix.Config{AllowedUsers: []string{ann}, Paired: paired})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fake.Invite("!stranger:localhost", "@mallory:localhost", "Mallory", false)
	fake.Invite("!new:localhost", ann, "Ann", false)
	if err := fake.WaitJoined(ctx, "!new:localhost"); err != nil {
		t.Fatal(err)
	}
	fake.Invite("!pairedroom:localhost", "@paired:localhost", "Pat", false)
	if err := fake.WaitJoined(ctx, "!pairedroom:localhost"); err != nil {
		t.Fatal(err)
	}
	fake.Invite("!secret:localhost", ann, "Ann", true)
	if err := fake.WaitJoined(ctx, "!secret:localhost"); err != nil {
		t.Fatal(err)
	}
	sent, err := fake.WaitSent(ctx, 1)
	if err != nil || sent[0].Room != "!secret:localhost" || sent[0].MsgType != "m.notice" {
		t.Fatalf("sent %+v %v", sent, err)
	}
	for _, j := range fake.Joins() {
		if j == "!stranger:localhost" {
			t.Error("joined a stranger's room")
		}
	}
}

func TestPasswordLoginReusesTheDevice(t *testing.T) {
	fake := newFake(t)
	store := &memStore{}
	cfg := matrix.Config{UserID: fake.UserID(), Password: fake.Password(), Store: store}
	r := start(t, fake, cfg)
	r.stop()
	start(t, fake, cfg)
	l := fake.Logins()
	if len(l) != 2 || l[0]["device_id"] != nil || l[1]["device_id"] == nil || l[1]["password"] != "(redacted)" {
		t.Errorf("logins %v, want the second to reuse the first's device", l)
	}
	wrong := matrix.New(matrix.Config{Homeserver: fake.URL(), UserID: fake.UserID(), Password: "nope"})
	err := wrong.Run(context.Background(), &sink{})
	if !adapters.IsFatal(err) || !strings.Contains(err.Error(), "MATRIX_PASSWORD") || strings.Contains(err.Error(), "nope") {
		t.Errorf("wrong password: %v", err)
	}
	bad := matrix.New(matrix.Config{Homeserver: fake.URL(), AccessToken: "syt_wrong_token_123"})
	if err := bad.Run(context.Background(), &sink{}); !adapters.IsFatal(err) || !strings.Contains(err.Error(), "MATRIX_ACCESS_TOKEN") {
		t.Errorf("wrong token: %v", err)
	}
}

// refusing is a gateway that turns messages away at the door until told
// otherwise.
type refusing struct {
	sink
	mu      sync.Mutex
	refuse  bool
	refused chan struct{}
}

func (s *refusing) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	s.mu.Lock()
	refuse := s.refuse
	s.mu.Unlock()
	if refuse {
		select {
		case s.refused <- struct{}{}:
		default:
		}
		return adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped, Err: errors.New("gateway stopping")})
	}
	return s.sink.Receive(ctx, m)
}

// A message the gateway refused is not lost: its batch is synced again
// (the token is not moved past it), and taken once the gateway takes it.
func TestRefusedBatchIsSyncedAgain(t *testing.T) {
	fake := newFake(t)
	s := &refusing{sink: sink{ch: make(chan herald.Message, 10)}, refuse: true, refused: make(chan struct{}, 1)}
	ad := matrix.New(matrix.Config{Homeserver: fake.URL(), AccessToken: fake.Token(), Store: &memStore{}, SyncTimeout: 5 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, s) }()
	defer func() { cancel(); <-done }()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := fake.WaitSyncs(wctx, 2); err != nil {
		t.Fatal(err)
	}
	id := fake.Say(dmID, ann, matrixtest.Text("refused at first"))
	select {
	case <-s.refused:
	case <-wctx.Done():
		t.Fatal("the message never reached the gateway")
	}
	s.mu.Lock()
	s.refuse = false
	s.mu.Unlock()
	if m := s.next(t); m.ID != id {
		t.Fatalf("got %+v", m)
	}
	// the batch was asked for twice from the same token
	sinces, again := fake.Sinces(), 0
	for _, since := range sinces {
		if since == sinces[1] {
			again++
		}
	}
	if again < 2 {
		t.Errorf("syncs %q: the retry did not resume from the token before the refused batch", sinces)
	}
}
