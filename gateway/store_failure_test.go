package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/sessions"
	"github.com/heraldgw/herald/sessions/sessionstest"
)

// capStore limits the database to the pages it has now, as a full disk
// would: a write that needs a new page fails with SQLITE_FULL. The pragma
// is set on the store's one writer connection, through its own writer.
func capStore(t *testing.T, st *sessions.Store, capped bool) {
	t.Helper()
	pages := 1 << 30
	if capped {
		pages = 1 // raised by SQLite to the current size
	}
	err := st.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec("PRAGMA max_page_count = " + strconv.Itoa(pages))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

type healthBody struct {
	code      int
	Status    string            `json:"status"`
	Store     string            `json:"store"`
	Platforms map[string]string `json:"platforms"`
	Delivery  struct {
		MaybeSent int64 `json:"maybe_sent"`
		Queued    int64 `json:"queued"`
	} `json:"delivery"`
}

func (h *harness) healthz() healthBody {
	h.t.Helper()
	res, err := http.Get(h.srv.URL + "/healthz")
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	var out healthBody
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		h.t.Fatal(err)
	}
	out.code = res.StatusCode
	return out
}

// bigText needs new pages wherever it is stored.
var bigText = strings.Repeat("a long message that needs pages of its own ", 5000)

// On a full disk the turn is not stored, so its answer is not delivered:
// the user is told the message could not be saved, /healthz answers 503
// naming the store, and once the disk has room again all is well.
func TestStoreFullAnswerWithheld(t *testing.T) {
	h := newHarness(t, nil)
	if r := h.post(msg{User: "u1", Text: "hello"}); r.text() != echo+"hello" {
		t.Fatalf("before: %+v", r)
	}
	if hz := h.healthz(); hz.code != 200 || hz.Status != "ok" || hz.Store != "ok" {
		t.Fatalf("healthz before: %+v", hz)
	}
	capStore(t, h.store, true)
	r := h.post(msg{User: "u1", Text: bigText})
	if r.text() != NotSavedText {
		t.Fatalf("with a full disk the user got %q", truncate(r.text(), 200))
	}
	for _, m := range h.transcript(sourceC1()) {
		if strings.Contains(m.Content, "needs pages") {
			t.Fatalf("stored after all: %+v", m.Role)
		}
	}
	hz := h.healthz()
	if hz.code != http.StatusServiceUnavailable || hz.Status != "failing" || !strings.Contains(hz.Store, "full") {
		t.Fatalf("healthz with a full disk: %+v", hz)
	}
	if _, ok := hz.Platforms["store"]; ok || hz.Platforms["local"] == "" {
		t.Fatalf("platforms: %v", hz.Platforms)
	}
	capStore(t, h.store, false)
	if r := h.post(msg{User: "u1", Text: "again"}); r.text() != echo+"again" {
		t.Fatalf("after: %+v", r)
	}
	if hz := h.healthz(); hz.code != 200 || hz.Store != "ok" {
		t.Fatalf("healthz after: %+v", hz)
	}
	// the history is what the user saw: hello, again
	var said []string
	for _, m := range h.transcript(sourceC1()) {
		said = append(said, m.Content)
	}
	if strings.Join(said, "|") != strings.Join([]string{"hello", echo + "hello", "again", echo + "again"}, "|") {
		t.Fatalf("transcript %q", said)
	}
}

// A state.db whose messages table is damaged: nothing is answered as if
// stored, and /healthz says the store fails.
func TestDamagedStoreReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	sessionstest.DamageTable(t, path, "messages")

	h := newHarnessAt(t, path, nil)
	// the integrity check at start finds it before any message does
	deadline := time.Now().Add(10 * time.Second)
	for hz := h.healthz(); hz.code != http.StatusServiceUnavailable; hz = h.healthz() {
		if time.Now().After(deadline) {
			t.Fatalf("healthz 10 s after start: %+v", hz)
		}
		time.Sleep(10 * time.Millisecond) // polling /healthz; no event to wait on
	}
	r := h.post(msg{User: "u1", Text: "hello"})
	if r.text() != NotSavedText {
		t.Fatalf("with a damaged store the user got %q", r.text())
	}
	hz := h.healthz()
	if hz.code != http.StatusServiceUnavailable || !strings.Contains(hz.Store, "malformed") {
		t.Fatalf("healthz with a damaged store: %+v", hz)
	}
}
