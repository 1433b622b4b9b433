package sessions_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/heraldgw/herald/sessions"
)

func TestKV(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"a/1": "x", "a/2": "y", "a%_": "z", "b/1": "w"} {
		if err := st.SetKV(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetKV(ctx, "a/1", "x2"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := st.KV(ctx, "a/1"); err != nil || !ok || v != "x2" {
		t.Errorf("KV(a/1) = %q, %v, %v; want x2", v, ok, err)
	}
	if _, ok, err := st.KV(ctx, "nope"); err != nil || ok {
		t.Errorf("KV(nope) = %v, %v; want absent", ok, err)
	}
	got, err := st.KVWithPrefix(ctx, "a/")
	if err != nil || len(got) != 2 || got["a/1"] != "x2" || got["a/2"] != "y" {
		t.Errorf("KVWithPrefix(a/) = %v, %v", got, err)
	}
	if err := st.DeleteKV(ctx, "a/1", "absent"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// kept across a reopen
	st, err = sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err = st.KVWithPrefix(ctx, "a")
	if err != nil || len(got) != 2 || got["a/2"] != "y" || got["a%_"] != "z" {
		t.Errorf("after reopen KVWithPrefix(a) = %v, %v", got, err)
	}
	if err := st.SetKV(ctx, "", "v"); err == nil {
		t.Error("SetKV with an empty key succeeded")
	}
}
