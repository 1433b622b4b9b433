package replica

// cluster_test.go: gateway replicas in one test process, each a real
// gateway.Runner behind its own local platform listener, sharing one
// PostgreSQL for coordination and for their state, as gateways whose
// store: names that database do. A node without a database is one
// process on SQLite.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
	"github.com/heraldgw/herald/sessions/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// sent is one message a replica sent to a local chat.
type sent struct {
	replica, chat, text, buttons string
}

// recorder keeps what every replica sent, in order; waitFor wakes on
// each new message.
type recorder struct {
	mu      sync.Mutex
	all     []sent
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (rc *recorder) add(s sent) int64 {
	rc.mu.Lock()
	rc.all = append(rc.all, s)
	n := len(rc.all)
	rc.mu.Unlock()
	select {
	case rc.changed <- struct{}{}:
	default:
	}
	return int64(n)
}

func (rc *recorder) snapshot() []sent {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]sent(nil), rc.all...)
}

// waitFor waits until cond holds over what was sent, failing the test
// after timeout (a bound for a loaded machine, not a measure).
func (rc *recorder) waitFor(t testing.TB, timeout time.Duration, what string, cond func([]sent) bool) []sent {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		all := rc.snapshot()
		if cond(all) {
			return all
		}
		select {
		case <-rc.changed:
		case <-deadline.C:
			t.Fatalf("waiting for %s: %d messages sent, the last: %v", what, len(all), all[max(0, len(all)-5):])
		}
	}
}

// outbox is a replica's local platform outbox, kept by the recorder.
type outbox struct {
	name string
	rec  *recorder
}

func (o outbox) AppendOutbox(ctx context.Context, m sessions.OutboxMessage) (sessions.OutboxMessage, error) {
	m.ID = o.rec.add(sent{replica: o.name, chat: m.ChatID, text: m.Text, buttons: m.Buttons})
	return m, nil
}

func (o outbox) OutboxAfter(ctx context.Context, platform, chatID string, after int64) ([]sessions.OutboxMessage, error) {
	return nil, nil
}

func (o outbox) EditOutbox(ctx context.Context, platform, chatID string, id int64, text, buttons string, at time.Time) error {
	return nil
}

// holdModel is the echo model, except that a message containing "hold"
// is never answered on a replica that holds: it waits for its context,
// after telling held.
type holdModel struct {
	hold bool
	held chan string
}

func (m holdModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if n := len(req.Messages); m.hold && n > 0 && req.Messages[n-1].Role == openai.ChatMessageRoleUser && strings.Contains(req.Messages[n-1].Content, "hold") {
		m.held <- req.Messages[n-1].Content
		<-ctx.Done()
		return openai.ChatCompletionResponse{}, ctx.Err()
	}
	return agent.Echo{}.Complete(ctx, req)
}

// node is one replica.
type node struct {
	name   string
	coord  *Coordinator // nil: a single process without coordination
	kill   context.CancelFunc
	runner *gateway.Runner
	url    string
	stop   func()
}

type nodeOptions struct {
	dbURL string // "": no coordination
	cfg   Config
	model agent.Model
}

// startNode starts a replica; it is stopped (cleanly) when the test ends
// unless stopped before.
func startNode(t testing.TB, rec *recorder, name string, o nodeOptions) *node {
	t.Helper()
	n := &node{name: name}
	// replicas keep their state in the database they coordinate through,
	// as a gateway does (store: postgres://…); one process, in SQLite
	spec := sessions.Spec{Path: filepath.Join(t.TempDir(), "state.db"), URL: o.dbURL, ReplicaID: name}
	st, err := sessions.OpenStore(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	life, kill := context.WithCancel(context.Background())
	n.kill = kill
	var coord gateway.Coordinator
	var db *sql.DB
	if o.dbURL != "" {
		db, err = sql.Open("pgx", o.dbURL)
		if err != nil {
			t.Fatal(err)
		}
		cfg := o.cfg
		cfg.ID = name
		if os.Getenv("REPLICA_DEBUG") != "" {
			cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
		}
		n.coord, err = Open(life, db, cfg)
		if err != nil {
			t.Fatal(err)
		}
		coord = n.coord
	}
	reg := hooks.NewRegistry(nil)
	model := o.model
	if model == nil {
		model = agent.Echo{}
	}
	loc := local.New(local.Config{Listen: "127.0.0.1:0", Token: "test-token", Outbox: outbox{name: name, rec: rec},
		Replica: func() any {
			if st, ok := n.runner.Replica(); ok {
				return st
			}
			return nil
		}})
	n.runner = gateway.New(gateway.Config{
		Adapters: []adapters.Adapter{loc}, Store: st, Hooks: reg,
		Agent:    &agent.Agent{Model: model, Tools: agent.NewTools(&agent.Terminal{Timeout: time.Minute}), Hooks: reg, ModelName: "echo"},
		Auth:     map[herald.Platform]gateway.PlatformAuth{herald.PlatformLocal: {TrustAll: true}},
		BusyMode: "queue", ShutdownGrace: 200 * time.Millisecond, MaxQueue: 1000, Coordinator: coord,
	})
	srv := httptest.NewServer(loc.Handler(n.runner))
	n.url = srv.URL
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.runner.Run(ctx) }()
	var once sync.Once
	n.stop = func() {
		once.Do(func() {
			srv.Close()
			cancel()
			<-done
			kill()
			cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
			reg.Close(cctx)
			ccancel()
			st.Close()
			if db != nil {
				db.Close()
			}
		})
	}
	t.Cleanup(n.stop)
	return n
}

// post sends one message to the replica's local platform without waiting
// for its answer (wait=0: the answer is recorded wherever it is sent).
func (n *node) post(t testing.TB, chat, id, text string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"chat_id": chat, "user_id": "u-" + chat, "text": text, "message_id": id})
	req, _ := http.NewRequest("POST", n.url+"/v1/messages?wait=0", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer test-token")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusAccepted {
		t.Errorf("post %q to %s: status %d", text, n.name, res.StatusCode)
	}
}

// press presses a button under a message of a local chat on the replica.
func (n *node) press(t testing.TB, chat, user, data string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"message_id": "1", "data": data, "user_id": user})
	req, _ := http.NewRequest("POST", n.url+"/v1/chats/"+chat+"/press", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer test-token")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ Reply string }
	json.NewDecoder(res.Body).Decode(&out)
	return out.Reply
}

// answers are the echo answers sent to chat, in order, with who sent them.
func answers(all []sent, chat string) (texts, by []string) {
	for _, s := range all {
		if s.chat == chat {
			if text, ok := strings.CutPrefix(s.text, agent.EchoPrefix); ok {
				texts = append(texts, text)
				by = append(by, s.replica)
			}
		}
	}
	return texts, by
}

func msgText(chat string, i int) string { return fmt.Sprintf("%s m%d", chat, i) }
