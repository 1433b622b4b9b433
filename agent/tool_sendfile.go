package agent

// tool_sendfile.go: the send_file tool. The file is checked here (so the
// model learns at once that a path is refused) and sent by the gateway
// with the turn's answer, which checks it again: what is sent is what the
// file is then, through the same confinement as read_file plus a refusal
// of names that hold secrets.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SendFile is the send_file tool: queues a file to be sent to the chat
// with the answer. Paths confines it: the working directory, the media
// cache and tools.send_file.allowed_dirs.
type SendFile struct{ Paths *Paths }

var _ Tool = (*SendFile)(nil)

func (*SendFile) Name() string { return "send_file" }
func (*SendFile) Description() string {
	return "Send a file (an image, a document, audio, video) to the person you are talking with, in this chat, with an optional caption. " +
		"path is a file in the working directory, in the media cache (attachments you received) or in a directory allowed for sending. " +
		"The file goes out with your answer. You can also put a line MEDIA:/path/to/file in your answer."
}
func (*SendFile) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"The file to send"},` +
		`"caption":{"type":"string","description":"Text shown with the file"}},"required":["path"]}`)
}

func (t *SendFile) Run(ctx context.Context, c *Call) (string, error) {
	f, real, err := t.Paths.OpenForSend(c.String("path"), c.mediaDir())
	if err != nil {
		return "", fmt.Errorf("send_file: %w", err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return "", fmt.Errorf("send_file: %w", err)
	}
	if c.run == nil || c.Turn == nil || c.Turn.ChatID == "" {
		// cron jobs and BOOT.md deliver text only
		return "", errors.New("send_file: this run has no chat to send a file to")
	}
	c.run.files = append(c.run.files, OutFile{Path: real, Caption: c.String("caption")})
	b, err := json.Marshal(map[string]any{"queued": true, "path": real, "size": fi.Size(), "note": "the file is sent with your answer"})
	return string(b), err
}

// OpenForSend opens p to send it to a chat: a regular file read_file
// could read (the working directory, the allowed paths, the media cache),
// whose name does not mark a secret (.env files, tokens, state.db,
// config.yaml, private keys). Of the media cache, only mediaDir (the
// conversation's own part) may be sent. It returns the open file and its
// real path.
func (ps *Paths) OpenForSend(p, mediaDir string) (*os.File, string, error) {
	if ps == nil {
		return nil, "", fmt.Errorf("%w: sending files is not configured", ErrOutside)
	}
	f, real, err := ps.openFile(p, accessRead, os.O_RDONLY)
	if err != nil {
		return nil, "", err
	}
	if err := ps.checkMedia(p, real, mediaDir); err != nil {
		f.Close()
		return nil, "", err
	}
	if secretFileName(filepath.Base(real)) || secretFileName(filepath.Base(p)) {
		f.Close()
		return nil, "", fmt.Errorf("%w: %s may hold secrets (its name says so); it is never sent", ErrOutside, p)
	}
	return f, real, nil
}

// secretFileName reports whether a file's name says it holds credentials.
func secretFileName(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case ".env", "state.db", "config.yaml", "config.yml", ".netrc", ".pgpass", "credentials", "credentials.json", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519":
		return true
	}
	for _, pre := range []string{".env.", "state.db-", "state.db."} {
		if strings.HasPrefix(n, pre) {
			return true
		}
	}
	for _, suf := range []string{".env", ".token", ".pem", ".key", ".p12", ".pfx"} {
		if strings.HasSuffix(n, suf) {
			return true
		}
	}
	return false
}
