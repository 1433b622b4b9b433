package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// store: selects PostgreSQL; HERALD_DATABASE_URL wins over it; a value
// that is no PostgreSQL URL is an error naming where it came from without
// repeating it; the URL and its password are secrets.
func TestStoreKey(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("store: postgres://herald:filepw@db:5432/herald\nreplica_id: web-1\n"), 0o600)
	cfg, warns, err := Load(home, func(string) string { return "" })
	if err != nil || len(warns) != 0 {
		t.Fatalf("load: %v %v", warns, err)
	}
	if cfg.Store != "postgres://herald:filepw@db:5432/herald" || cfg.ReplicaID != "web-1" {
		t.Fatalf("store %q replica %q", cfg.Store, cfg.ReplicaID)
	}
	if cfg.Secrets["store.password"] != "filepw" || cfg.Secrets["store"] != cfg.Store {
		t.Fatalf("secrets lack the store: %v", cfg.Secrets)
	}
	env := map[string]string{"HERALD_DATABASE_URL": "postgresql://u:envpw@other/db", "HERALD_REPLICA_ID": "web-2"}
	cfg, _, err = Load(home, func(k string) string { return env[k] })
	if err != nil || cfg.Store != env["HERALD_DATABASE_URL"] || cfg.ReplicaID != "web-2" {
		t.Fatalf("env: %q %q %v", cfg.Store, cfg.ReplicaID, err)
	}
	for _, tc := range []struct{ file, env, where string }{
		{"store: mysql://u:s3cret@h/db\n", "", "config.yaml"},
		{"", "/var/lib/s3cret.db", "HERALD_DATABASE_URL"},
	} {
		os.WriteFile(filepath.Join(home, "config.yaml"), []byte(tc.file), 0o600)
		_, _, err := Load(home, func(k string) string {
			if k == "HERALD_DATABASE_URL" {
				return tc.env
			}
			return ""
		})
		if err == nil || !strings.HasPrefix(err.Error(), tc.where+": store:") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q/%q: err = %v", tc.file, tc.env, err)
		}
	}
	for _, name := range []string{"HERALD_DATABASE_URL", "PGPASSWORD"} {
		if !IsSecretName(name) {
			t.Errorf("%s is not scrubbed from hook environments", name)
		}
	}
}
