package config

import (
	"os"
	"path/filepath"
	"testing"
)

// Hermes' MATRIX_* names fill platforms.matrix, and its credentials are
// secrets to redact, from the environment or from config.yaml.
func TestMatrixFromEnv(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("platforms:\n  matrix:\n    password: pw-from-file-0123456789\n    require_mention: false\n"), 0o600)
	env := map[string]string{
		"MATRIX_HOMESERVER": "https://matrix.example.org", "MATRIX_ACCESS_TOKEN": "syt_env_token_0123456789",
		"MATRIX_USER_ID": "@herald:example.org", "MATRIX_DEVICE_ID": "HERALDDEV",
		"MATRIX_HOME_ROOM": "!home:example.org", "MATRIX_ALLOWED_USERS": "@ann:example.org, @bob:example.org",
		"MATRIX_FREE_RESPONSE_ROOMS": "!free:example.org", "MATRIX_ALLOWED_ROOMS": "!a:example.org,!b:example.org",
	}
	cfg, _, err := Load(home, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Platforms.Matrix
	if m.Homeserver != "https://matrix.example.org" || m.AccessToken != "syt_env_token_0123456789" || m.UserID != "@herald:example.org" ||
		m.DeviceID != "HERALDDEV" || m.HomeChannel != "!home:example.org" || len(m.AllowedUsers) != 2 || m.AllowedUsers[1] != "@bob:example.org" ||
		m.Password != "pw-from-file-0123456789" || On(m.RequireMention, true) {
		t.Fatalf("platforms.matrix = %+v", m)
	}
	if len(m.FreeResponseChannels) != 1 || len(m.AllowedChannels) != 2 {
		t.Fatalf("rooms: free %q, allowed %q", m.FreeResponseChannels, m.AllowedChannels)
	}
	env["MATRIX_REQUIRE_MENTION"] = "true"
	if cfg, _, _ := Load(home, func(k string) string { return env[k] }); !On(cfg.Platforms.Matrix.RequireMention, false) {
		t.Error("MATRIX_REQUIRE_MENTION=true did not win over config.yaml")
	}
	if cfg.Secrets["platforms.matrix.access_token"] != "syt_env_token_0123456789" || cfg.Secrets["platforms.matrix.password"] != "pw-from-file-0123456789" {
		t.Fatalf("secrets %v", cfg.Secrets)
	}
}
