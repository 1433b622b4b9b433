package sessions_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/sessions"
	"github.com/heraldgw/herald/sessions/pgtest"
	"github.com/heraldgw/herald/sessions/storetest"
)

// The store suite on each backend.

func TestStoreSQLite(t *testing.T) {
	storetest.Run(t, func(t testing.TB) storetest.Opener {
		p := filepath.Join(t.TempDir(), "state.db")
		return func() (*sessions.Store, error) { return sessions.Open(p) }
	})
}

func TestStorePostgres(t *testing.T) {
	storetest.Run(t, func(t testing.TB) storetest.Opener {
		u := pgtest.URL(t)
		return func() (*sessions.Store, error) { return sessions.OpenURL(t.Context(), u) }
	})
}

// BenchmarkAppend stores a turn (a user and an assistant message) per op,
// from parallel writers each in its own chat, on each engine.
func BenchmarkAppend(b *testing.B) {
	for _, engine := range []struct {
		name string
		open func(b *testing.B) (*sessions.Store, error)
	}{
		{"sqlite", func(b *testing.B) (*sessions.Store, error) {
			return sessions.Open(filepath.Join(b.TempDir(), "state.db"))
		}},
		{"postgres", func(b *testing.B) (*sessions.Store, error) { return sessions.OpenURL(b.Context(), pgtest.URL(b)) }},
	} {
		b.Run(engine.name, func(b *testing.B) {
			st, err := engine.open(b)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			var chats atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				src := herald.Source{Platform: "local", ChatID: fmt.Sprint("c", chats.Add(1)), ChatType: herald.ChatDM, UserID: "u"}
				sess := sessions.NewSession(sessions.Key(src, sessions.KeyOptions{}), src, time.Now())
				create := sess
				for pb.Next() {
					err := st.Append(b.Context(), create,
						sessions.Message{SessionID: sess.ID, Role: "user", Content: "hello"},
						sessions.Message{SessionID: sess.ID, Role: "assistant", Content: "hi there"})
					if err != nil {
						b.Error(err)
						return
					}
					create = nil
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}
