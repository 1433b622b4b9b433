package sessions_test

import (
	"path/filepath"
	"testing"

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
