package replica

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/sessions/pgtest"
)

// Short leases for tests; waits are on events, these bound how long a
// dead replica's chat waits.
var testConfig = Config{LeaseTTL: 2 * time.Second, RenewEvery: 400 * time.Millisecond, PollEvery: 100 * time.Millisecond}

// Three replicas receive 3,000 messages for 300 chats, each chat's
// messages spread over all three (and one of each chat's delivered twice,
// to another replica): every message is answered exactly once, in order
// per chat.
func TestThreeReplicasAnswerEachMessageOnceInOrder(t *testing.T) {
	url := pgtest.URL(t)
	rec := newRecorder()
	// no replica dies here: a lease long enough that a loaded machine
	// (and -race) never lets one expire under a live replica
	cfg := testConfig
	cfg.LeaseTTL, cfg.RenewEvery = 20*time.Second, time.Second
	var nodes []*node
	for i := range 3 {
		nodes = append(nodes, startNode(t, rec, fmt.Sprintf("r%d", i), nodeOptions{dbURL: url, cfg: cfg}))
	}
	const chats, per = 300, 10
	sendAll(t, nodes, "c", chats, per, true)
	rec.waitFor(t, 4*time.Minute, "every answer", func(all []sent) bool { return countAnswers(all) >= chats*per })
	for _, n := range nodes {
		n.stop()
	}
	all := rec.snapshot()
	byReplica := map[string]int{}
	for c := range chats {
		chat := chatName("c", c)
		texts, by := answers(all, chat)
		want := make([]string, per)
		for i := range want {
			want[i] = msgText(chat, i)
		}
		if !slices.Equal(texts, want) {
			t.Errorf("chat %s answered\n %q\nwant\n %q", chat, texts, want)
		}
		for _, r := range by {
			byReplica[r]++
		}
	}
	t.Logf("answers by replica: %v", byReplica)
}

func chatName(prefix string, c int) string { return fmt.Sprintf("%s%03d", prefix, c) }

// sendAll posts per messages to each of chats chats (named prefix and a
// number), message i of chat c
// to replica (c+i) mod len(nodes), each chat's in order, chats in
// parallel; with redeliver, message 4 of each chat is posted again, with
// its id, to the next replica.
func sendAll(t testing.TB, nodes []*node, prefix string, chats, per int, redeliver bool) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for c := range chats {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			chat := chatName(prefix, c)
			for i := range per {
				id := fmt.Sprintf("%s-%d", chat, i)
				nodes[(c+i)%len(nodes)].post(t, chat, id, msgText(chat, i))
				if redeliver && i == 4 {
					nodes[(c+i+1)%len(nodes)].post(t, chat, id, msgText(chat, i))
				}
			}
		}()
	}
	wg.Wait()
}

func countAnswers(all []sent) int {
	n := 0
	for _, s := range all {
		if strings.HasPrefix(s.text, "[echo") {
			n++
		}
	}
	return n
}

// A replica killed mid-turn (its context cancelled, nothing cleaned up)
// loses its chat when the lease expires; another replica answers the
// message it was answering and the chat's next ones, once, in order.
func TestKilledReplicaChatsMoveOn(t *testing.T) {
	url := pgtest.URL(t)
	rec := newRecorder()
	held := make(chan string, 1)
	a := startNode(t, rec, "a", nodeOptions{dbURL: url, cfg: testConfig})
	b := startNode(t, rec, "b", nodeOptions{dbURL: url, cfg: testConfig, model: holdModel{hold: true, held: held}})
	c := startNode(t, rec, "c", nodeOptions{dbURL: url, cfg: testConfig})
	b.post(t, "k", "k-0", "hold on")
	<-held // b runs the turn
	b.kill()
	a.post(t, "k", "k-1", "after one")
	c.post(t, "k", "k-2", "after two")
	want := []string{"hold on", "after one", "after two"}
	rec.waitFor(t, time.Minute, "the chat answered elsewhere", func(all []sent) bool {
		texts, _ := answers(all, "k")
		return len(texts) >= len(want)
	})
	b.stop() // its running turn is cancelled: nothing more is sent
	a.stop()
	c.stop()
	texts, by := answers(rec.snapshot(), "k")
	if !slices.Equal(texts, want) || slices.Contains(by, "b") {
		t.Fatalf("chat k answered %q by %q; want %q by a or c", texts, by, want)
	}
}

// /approve sent to replica A answers the approval a turn waits for on
// replica B, and so does a button pressed on A.
func TestApprovalAnsweredOnAnotherReplica(t *testing.T) {
	url := pgtest.URL(t)
	rec := newRecorder()
	a := startNode(t, rec, "a", nodeOptions{dbURL: url, cfg: testConfig})
	b := startNode(t, rec, "b", nodeOptions{dbURL: url, cfg: testConfig})
	dir := t.TempDir()
	prompt := func(chat string) sent {
		var p sent
		rec.waitFor(t, time.Minute, "the approval prompt", func(all []sent) bool {
			for _, s := range all {
				if s.chat == chat && strings.Contains(s.text, "needs your approval") {
					p = s
					return true
				}
			}
			return false
		})
		if p.replica != "b" {
			t.Fatalf("prompt sent by %s, want b", p.replica)
		}
		return p
	}
	ran := func(chat string) {
		all := rec.waitFor(t, time.Minute, "the approved command's result", func(all []sent) bool {
			texts, _ := answers(all, chat)
			return len(texts) > 0 && strings.Contains(texts[len(texts)-1], "the command returned")
		})
		_, by := answers(all, chat)
		if by[len(by)-1] != "b" {
			t.Fatalf("the turn was finished by %s, want b", by[len(by)-1])
		}
	}

	t.Run("typed", func(t *testing.T) {
		b.post(t, "ap1", "ap1-0", "run: rm -rf "+filepath.Join(dir, "x"))
		prompt("ap1")
		a.post(t, "ap1", "ap1-1", "/approve")
		ran("ap1")
	})
	t.Run("pressed", func(t *testing.T) {
		b.post(t, "ap2", "ap2-0", "run: rm -rf "+filepath.Join(dir, "y"))
		p := prompt("ap2")
		var buttons []struct{ Data string }
		if err := json.Unmarshal([]byte(p.buttons), &buttons); err != nil || len(buttons) == 0 {
			t.Fatalf("prompt buttons %q: %v", p.buttons, err)
		}
		if got := a.press(t, "ap2", "someone-else", buttons[0].Data); got != "Only the person who asked, or an approver, can answer this." {
			t.Fatalf("a stranger's press answered %q", got)
		}
		if got := a.press(t, "ap2", "u-ap2", buttons[0].Data); got != "✅ Approved (once)." {
			t.Fatalf("press answered %q", got)
		}
		ran("ap2")
		if got := a.press(t, "ap2", "u-ap2", buttons[0].Data); got != "This approval is no longer waiting." {
			t.Fatalf("a second press answered %q", got)
		}
	})
}

// /healthz names the replica, says whether it leads cron, and counts the
// chat leases it (and all replicas) hold.
func TestHealthzReportsTheReplica(t *testing.T) {
	url := pgtest.URL(t)
	rec := newRecorder()
	held := make(chan string, 1)
	a := startNode(t, rec, "a", nodeOptions{dbURL: url, cfg: testConfig, model: holdModel{hold: true, held: held}})
	a.post(t, "h", "h-0", "hold")
	<-held // a holds chat h while the turn runs
	req, _ := http.NewRequest("GET", a.url+"/healthz", nil)
	req.Header.Set("Authorization", "Bearer test-token")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Replica *gateway.ReplicaStatus `json:"replica"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	want := gateway.ReplicaStatus{ID: "a", Leases: 1, AllLeases: 1}
	if body.Replica == nil || !reflect.DeepEqual(*body.Replica, want) {
		t.Fatalf("healthz replica %+v, want %+v", body.Replica, want)
	}
}

// Replicas starting together create the tables once (the migration holds
// an advisory lock), and a replica started later finds them.
func TestOpenTogether(t *testing.T) {
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := sql.Open("pgx", url)
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			_, err = Open(t.Context(), db, Config{ID: fmt.Sprintf("r%d", i)})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var versions int
	if err := db.QueryRow(`SELECT count(*) FROM herald_replica_schema`).Scan(&versions); err != nil || versions != 1 {
		t.Fatalf("schema versions recorded: %d, %v", versions, err)
	}
	if _, err := Open(t.Context(), db, Config{ID: "a|b"}); err == nil {
		t.Fatal(`an id with "|" was taken`)
	}
}
