package config

import (
	"strings"
	"testing"
)

func TestMediaKeys(t *testing.T) {
	cfg, warns, err := Parse([]byte(`model:
  default: gpt-4o
  api_key: sk-model-key-123456
  base_url: http://127.0.0.1:9/v1
  vision: false
media:
  max_bytes: 1024
stt:
  enabled: true
tools:
  send_file:
    allowed_dirs: [/srv/out]
`))
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse = %v, %v", warns, err)
	}
	if cfg.Media.MaxBytes != 1024 || len(cfg.Tools.SendFile.AllowedDirs) != 1 {
		t.Fatalf("media/tools not read: %+v %+v", cfg.Media, cfg.Tools)
	}
	if cfg.Vision(func(string) bool { return true }) {
		t.Fatal("model.vision: false still sends images")
	}
	e, ok := cfg.STTEndpoint()
	if !ok || e.Model != DefaultSTTModel || e.APIKey != "sk-model-key-123456" || e.BaseURL != "http://127.0.0.1:9/v1" {
		t.Fatalf("STTEndpoint = %+v, %v; want whisper-1 with the model's key and base URL", e, ok)
	}
}

func TestMediaDefaults(t *testing.T) {
	cfg, _, err := Parse([]byte("model: gpt-3.5-turbo\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Media.MaxBytes != 20<<20 {
		t.Fatalf("media.max_bytes default = %d", cfg.Media.MaxBytes)
	}
	if _, ok := cfg.STTEndpoint(); ok {
		t.Fatal("speech-to-text is on by default")
	}
	var asked string
	if !cfg.Vision(func(m string) bool { asked = m; return true }) || asked != "echo" {
		t.Fatalf("vision auto asked about %q", asked)
	}
}

func TestBadVisionWarns(t *testing.T) {
	cfg, warns, err := Parse([]byte("model:\n  vision: maybe\nmedia:\n  max_bytes: -5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 2 || !strings.Contains(warns[0].String(), "model.vision") || cfg.Model.Vision != "auto" || cfg.Media.MaxBytes != DefaultMediaMaxBytes {
		t.Fatalf("warnings %v, vision %q, max %d", warns, cfg.Model.Vision, cfg.Media.MaxBytes)
	}
}

func TestSTTKeyIsASecret(t *testing.T) {
	cfg, _, err := Parse([]byte("stt:\n  enabled: true\n  api_key: sk-stt-secret-98765\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := collectSecrets(cfg, func(string) string { return "" })
	if got["stt.api_key"] != "sk-stt-secret-98765" {
		t.Fatalf("stt.api_key not among the secrets: %v", got)
	}
}
