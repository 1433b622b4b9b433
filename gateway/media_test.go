package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/hooks"
)

// pngBytes is a 1×1 PNG.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// mediaEnv is a gateway on the local platform with a home, a media cache,
// a working directory and the fake OpenAI server as its model.
type mediaEnv struct {
	*harness
	srv        *agenttest.Server
	home, work string
}

type mediaOpt func(e *mediaEnv, c *Config)

func withSTT(e *mediaEnv, c *Config) {
	c.Media.Transcriber = agent.NewTranscriber(e.srv.BaseURL(), "sk-test", "whisper-1", nil)
}

func withMaxBytes(n int64) mediaOpt {
	return func(e *mediaEnv, c *Config) { c.Media.MaxBytes = n }
}

func newMediaEnv(t *testing.T, srv *agenttest.Server, opts ...mediaOpt) *mediaEnv {
	t.Helper()
	root := t.TempDir()
	e := &mediaEnv{srv: srv, home: filepath.Join(root, "home"), work: filepath.Join(root, "work")}
	os.MkdirAll(e.home, 0o700)
	os.MkdirAll(e.work, 0o755)
	os.WriteFile(filepath.Join(e.home, "config.yaml"), []byte("model: x\n"), 0o600)
	os.WriteFile(filepath.Join(e.home, "state.db"), []byte("SQLite format 3\x00"), 0o600)
	paths := &agent.Paths{Workdir: e.work, Home: e.home}
	e.harness = newHarness(t, agent.NewOpenAI(srv.BaseURL(), "sk-test", nil), func(c *Config) {
		c.Adapters[0] = local.New(local.Config{Listen: "127.0.0.1:0", Token: "tok", FilesDir: filepath.Join(e.home, "local-files")})
		c.Agent.Vision = true
		c.Agent.Tools.Add(&agent.ReadFile{Paths: paths})
		c.Agent.Tools.Add(&agent.WriteFile{Paths: paths})
		c.Agent.Tools.Add(&agent.SendFile{Paths: paths})
		c.Media = MediaConfig{Dir: filepath.Join(e.home, "media"), SendPaths: paths}
		for _, o := range opts {
			o(e, c)
		}
	})
	return e
}

type fileReply struct {
	Text string         `json:"text"`
	File *local.FileRef `json:"file"`
}

type mediaResp struct {
	SessionID string      `json:"session_id"`
	Status    string      `json:"status"`
	Replies   []fileReply `json:"replies"`
}

func (r mediaResp) text() string {
	var s []string
	for _, x := range r.Replies {
		s = append(s, x.Text)
	}
	return strings.Join(s, "\n---\n")
}

type attachment struct {
	name, mime string
	data       []byte
}

func (e *mediaEnv) send(text string, media ...attachment) mediaResp {
	e.t.Helper()
	var ms []map[string]string
	for _, m := range media {
		ms = append(ms, map[string]string{"name": m.name, "mime": m.mime, "data": base64.StdEncoding.EncodeToString(m.data)})
	}
	b, _ := json.Marshal(map[string]any{"chat_id": "c1", "user_id": "u1", "text": text, "media": ms})
	req, _ := http.NewRequest("POST", e.harness.srv.URL+"/v1/messages?wait=20", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer tok")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var out mediaResp
	body, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(body, &out); err != nil || res.StatusCode != 200 {
		e.t.Fatalf("POST = %d %s", res.StatusCode, body)
	}
	return out
}

func (e *mediaEnv) get(url string) []byte {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.harness.srv.URL+url, nil)
	req.Header.Set("Authorization", "Bearer tok")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		e.t.Fatalf("GET %s = %d %s", url, res.StatusCode, b)
	}
	return b
}

func (e *mediaEnv) sessionDir(id string) string { return filepath.Join(e.home, "media", id) }

var savedAt = regexp.MustCompile(`saved at (\S+?)[;\]]`)

func TestImageWithoutCaptionReachesTheModelAsAnImagePart(t *testing.T) {
	srv := agenttest.New(t, agenttest.Reply{Content: "a tiny picture"})
	e := newMediaEnv(t, srv)
	out := e.send("", attachment{"photo.png", "image/png", pngBytes})
	if out.Status != adapters.StatusDone || out.text() != "a tiny picture" {
		t.Fatalf("answer = %+v", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Images()) != 1 || !strings.HasPrefix(reqs[0].Images()[0], "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pngBytes)[:20]) {
		t.Fatalf("the model got %d requests, images %v", len(reqs), reqs[0].Images())
	}
	seen := reqs[0].UserText()
	m := savedAt.FindStringSubmatch(seen)
	if m == nil || !strings.Contains(seen, "[attachment: image photo.png (image/png, 67 B)") {
		t.Fatalf("model text = %q", seen)
	}
	path := m[1]
	if want := filepath.Join(e.sessionDir(out.SessionID), "photo.png"); path != want {
		t.Fatalf("stored at %s; want %s", path, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cached file %v %v", fi, err)
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Fatalf("session cache dir mode %v", fi.Mode())
	}
	// the history keeps the text form, never the bytes
	stored := e.transcript(herald.Source{ChatID: "c1", UserID: "u1"})
	if len(stored) != 2 || stored[0].Content != seen || strings.Contains(stored[0].Content, "base64") {
		t.Fatalf("stored = %+v", stored)
	}
	// agent:start and pre_llm_call carry the media with its path
	e.rec.waitFor(t, []string{hooks.AgentStartEv}, hooks.AgentStartEv)
	st := e.rec.payloads(hooks.AgentStartEv)[0].(*hooks.AgentStart)
	if len(st.Media) != 1 || st.Media[0].Path != path || st.Media[0].MIME != "image/png" || st.Media[0].Type != "image" {
		t.Fatalf("agent:start media = %+v", st.Media)
	}
}

func TestVoiceNoteIsTranscribed(t *testing.T) {
	srv := agenttest.New(t, agenttest.Reply{Content: "noted"})
	srv.Transcript = "remind me to water the plants"
	e := newMediaEnv(t, srv, withSTT)
	out := e.send("", attachment{"voice.ogg", "audio/ogg", []byte("OggS\x00\x02fake opus")})
	if out.text() != "noted" {
		t.Fatalf("answer = %q", out.text())
	}
	tr := srv.Transcriptions()
	if len(tr) != 1 || tr[0].Model != "whisper-1" || tr[0].FileName != "voice.ogg" || !bytes.HasPrefix(tr[0].Data, []byte("OggS")) {
		t.Fatalf("transcriptions = %+v", tr)
	}
	seen := srv.Requests()[0].UserText()
	if !strings.HasPrefix(seen, agent.TranscriptPrefix+"remind me to water the plants\n\n[attachment: voice voice.ogg (audio/ogg") {
		t.Fatalf("model text = %q", seen)
	}
}

func TestVoiceNoteWithoutSpeechToText(t *testing.T) {
	srv := agenttest.New(t, agenttest.Reply{Content: "I got a voice note"})
	e := newMediaEnv(t, srv)
	out := e.send("", attachment{"voice.ogg", "audio/ogg", []byte("OggS\x00\x02fake opus")})
	if len(out.Replies) != 2 || out.Replies[0].Text != STTOffText || out.Replies[1].Text != "I got a voice note" {
		t.Fatalf("replies = %q", out.text())
	}
	if seen := srv.Requests()[0].UserText(); !strings.Contains(seen, "not transcribed: speech-to-text is off") {
		t.Fatalf("model text = %q", seen)
	}
	if len(srv.Transcriptions()) != 0 {
		t.Fatal("transcribed with speech-to-text off")
	}
}

func TestDocumentReadableButNotWritable(t *testing.T) {
	var path string
	srv := agenttest.New(t,
		agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
			path = savedAt.FindStringSubmatch(r.UserText())[1]
			args, _ := json.Marshal(map[string]string{"path": path})
			return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "c1", Name: "read_file", Args: string(args)}}}
		}},
		agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
			args, _ := json.Marshal(map[string]string{"path": path, "content": "overwritten"})
			return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "c2", Name: "write_file", Args: string(args)}}}
		}},
		agenttest.Reply{Content: "read it"},
	)
	e := newMediaEnv(t, srv)
	doc := "agenda: launch at noon\n"
	out := e.send("what does it say?", attachment{"notes.txt", "text/plain", []byte(doc)})
	if out.text() != "read it" {
		t.Fatalf("answer = %q", out.text())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls", len(reqs))
	}
	first := reqs[0].UserText()
	if !strings.HasPrefix(first, "what does it say?\n\n[attachment: document notes.txt (text/plain, 23 B) saved at ") ||
		!strings.Contains(first, "--- notes.txt ---\nagenda: launch at noon\n--- end of notes.txt ---") {
		t.Fatalf("model text = %q", first)
	}
	readResult := reqs[1].LastMessage().Content
	writeResult := reqs[2].LastMessage().Content
	if !strings.Contains(readResult, "agenda: launch at noon") {
		t.Fatalf("read_file = %s", readResult)
	}
	if !strings.Contains(writeResult, "error") || !strings.Contains(writeResult, "not allowed") {
		t.Fatalf("write_file into the cache = %s", writeResult)
	}
	if b, _ := os.ReadFile(path); string(b) != doc {
		t.Fatalf("cached document now %q", b)
	}
}

func TestOversizeAttachmentIsRefusedAndNothingElseBreaks(t *testing.T) {
	srv := agenttest.New(t)
	e := newMediaEnv(t, srv, withMaxBytes(1024))
	out := e.send("have a look", attachment{"big.png", "image/png", append(append([]byte{}, pngBytes...), make([]byte, 4096)...)},
		attachment{"small.txt", "text/plain", []byte("small")})
	if len(out.Replies) != 2 || !strings.Contains(out.Replies[0].Text, "big.png is over the 1 KB limit") || out.Replies[1].Text != "ok" {
		t.Fatalf("replies = %q", out.text())
	}
	seen := srv.Requests()[0].UserText()
	if !strings.Contains(seen, "[attachment: image big.png (image/png, 4 KB) not downloaded: over the 1 KB limit]") ||
		!strings.Contains(seen, "[attachment: document small.txt (text/plain, 5 B) saved at ") {
		t.Fatalf("model text = %q", seen)
	}
	if len(srv.Requests()[0].Images()) != 0 {
		t.Fatal("an image over the cap reached the model")
	}
	entries, _ := os.ReadDir(e.sessionDir(out.SessionID))
	if len(entries) != 1 || entries[0].Name() != "small.txt" {
		t.Fatalf("cache holds %v", entries)
	}
	if again := e.send("still there?"); again.text() != "ok" {
		t.Fatalf("next message = %q", again.text())
	}
}

func TestHostileNameLandsSanitisedInTheCache(t *testing.T) {
	srv := agenttest.New(t)
	e := newMediaEnv(t, srv)
	out := e.send("", attachment{"../../.env", "text/plain", []byte("OPENAI_API_KEY=sk-evil")},
		attachment{"../../.env", "text/plain", []byte("again")})
	if out.Status != adapters.StatusDone {
		t.Fatalf("status %s", out.Status)
	}
	dir := e.sessionDir(out.SessionID)
	for _, name := range []string{"env.txt", "env-1.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s not in the cache: %v", name, err)
		}
	}
	for _, p := range []string{filepath.Join(e.home, ".env"), filepath.Join(e.home, "media", ".env"), filepath.Join(dir, ".env")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}

func TestSendFileReachesTheLocalClient(t *testing.T) {
	srv := agenttest.New(t,
		agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "c1", Name: "send_file", Args: `{"path":"chart.png","caption":"your chart"}`}}},
		agenttest.Reply{Content: "sent you the chart"},
	)
	e := newMediaEnv(t, srv)
	os.WriteFile(filepath.Join(e.work, "chart.png"), pngBytes, 0o644)
	out := e.send("chart please")
	if len(out.Replies) != 2 || out.Replies[0].Text != "sent you the chart" || out.Replies[1].File == nil || out.Replies[1].Text != "your chart" {
		t.Fatalf("replies = %+v", out.Replies)
	}
	f := out.Replies[1].File
	if f.Name != "chart.png" || f.MIME != "image/png" || f.Size != int64(len(pngBytes)) || !bytes.Equal(e.get(f.URL), pngBytes) {
		t.Fatalf("file = %+v", f)
	}
}

func TestMediaLineSendsTheFileAndLeavesTheText(t *testing.T) {
	srv := agenttest.New(t)
	e := newMediaEnv(t, srv)
	os.WriteFile(filepath.Join(e.work, "report.pdf"), []byte("%PDF-1.4 tiny"), 0o644)
	srv.Push(agenttest.Reply{Content: "Here is the report.\nMEDIA:" + filepath.Join(e.work, "report.pdf") + "\nMEDIA:" + filepath.Join(e.home, "state.db")})
	out := e.send("report?")
	if len(out.Replies) != 3 || out.Replies[0].Text != "Here is the report." {
		t.Fatalf("replies = %+v", out.Replies)
	}
	if f := out.Replies[1].File; f == nil || f.Name != "report.pdf" || f.MIME != "application/pdf" || string(e.get(f.URL)) != "%PDF-1.4 tiny" {
		t.Fatalf("file reply = %+v", out.Replies[1])
	}
	if r := out.Replies[2]; r.File != nil || !strings.HasPrefix(r.Text, "⚠️ Could not send state.db") {
		t.Fatalf("state.db reply = %+v", r)
	}
}

func TestSendFileRefusesSecretsAndSymlinks(t *testing.T) {
	srv := agenttest.New(t)
	e := newMediaEnv(t, srv)
	os.WriteFile(filepath.Join(e.work, ".env"), []byte("OPENAI_API_KEY=sk-x"), 0o600)
	os.Symlink(filepath.Join(e.home, "config.yaml"), filepath.Join(e.work, "harmless.txt"))
	other := filepath.Join(e.home, "media", "another-session")
	os.MkdirAll(other, 0o700)
	os.WriteFile(filepath.Join(other, "their.png"), pngBytes, 0o600)
	srv.Push(agenttest.Reply{Content: "MEDIA:.env\nMEDIA:harmless.txt\nMEDIA:/etc/hostname\nMEDIA:" + filepath.Join(other, "their.png")})
	out := e.send("files")
	for _, r := range out.Replies {
		if r.File != nil {
			t.Fatalf("a refused file was sent: %+v", r.File)
		}
	}
	if got := out.text(); strings.Count(got, "⚠️ Could not send") != 4 || !strings.Contains(got, "media cache of another conversation") {
		t.Fatalf("replies = %q", got)
	}
}

func TestPlatformWithoutFilesGetsATextFallback(t *testing.T) {
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("hello"), 0o644)
	fa := &fakeAdapter{name: herald.PlatformLocal}
	r := New(Config{Adapters: []adapters.Adapter{fa}, Hooks: hooks.NewRegistry(nil), Media: MediaConfig{SendPaths: &agent.Paths{Workdir: work}}})
	j := &job{msg: herald.Message{ID: "m1", Source: herald.Source{Platform: herald.PlatformLocal, ChatID: "c1", UserID: "u1"}}}
	r.sendFile(r.baseCtx, j, agent.OutFile{Path: "a.txt"}, "")
	if got := fa.texts(); len(got) != 1 || got[0] != "📎 a.txt (5 B) — local cannot receive files from herald, so it was not sent." {
		t.Fatalf("fallback = %q", got)
	}
}

func TestMediaCacheGoesWithTheSession(t *testing.T) {
	srv := agenttest.New(t)
	e := newMediaEnv(t, srv)
	out := e.send("", attachment{"photo.png", "image/png", pngBytes})
	dir := e.sessionDir(out.SessionID)
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	e.send("/new")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("cache of the ended session still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.home, "media")); err != nil {
		t.Fatalf("the cache root went too: %v", err)
	}
}

func TestFetchFailureIsToldAndTheTurnGoesOn(t *testing.T) {
	srv := agenttest.New(t)
	e := newMediaEnv(t, srv)
	j := &job{msg: herald.Message{ID: "m1", Source: herald.Source{Platform: herald.PlatformLocal, ChatID: "c1", UserID: "u1"},
		Media: []herald.Media{{Type: "image", MIME: "image/png", Name: "gone.png", Ref: "u-none"}}}}
	p := e.runner.prepare(e.runner.baseCtx, "s1", j.msg)
	if len(p.notes) != 1 || !strings.HasPrefix(p.notes[0], "⚠️ Could not download gone.png") {
		t.Fatalf("notes = %q", p.notes)
	}
	if !strings.Contains(p.prompt, "[attachment: image gone.png (image/png) not downloaded: the download failed]") || p.media[0].Path != "" {
		t.Fatalf("prompt = %q", p.prompt)
	}
}

func TestSniffing(t *testing.T) {
	for _, tc := range []struct{ head, name, declared, want, kind string }{
		{string(pngBytes), "photo.jpg", "image/jpeg", "image/png", "image"},
		{"just text, really", "photo.jpg", "image/jpeg", "text/plain", "document"},
		{"OggS\x00\x02", "voice", "audio/ogg", "audio/ogg", "voice"},
		{"{\"a\":1}", "data.json", "", "application/json", "document"},
		{"\x00\x01\x02\x03", "x.bin", "image/png", "application/octet-stream", "document"},
		{"%PDF-1.7", "doc", "", "application/pdf", "document"},
	} {
		got := sniffMIME([]byte(tc.head), tc.name, tc.declared)
		if got != tc.want || mediaKind(herald.MediaType(tc.declared), got) != tc.kind {
			t.Errorf("sniff(%q, %s, %s) = %s/%s; want %s/%s", tc.head, tc.name, tc.declared, got, mediaKind(herald.MediaType(tc.declared), got), tc.want, tc.kind)
		}
	}
}

func TestSplitMediaLines(t *testing.T) {
	text, paths := splitMediaLines("Here.\nMEDIA: /tmp/a.png\n```\nMEDIA:/in/code\n```\n  MEDIA:`/tmp/b c.pdf`\nbye")
	if text != "Here.\n```\nMEDIA:/in/code\n```\nbye" || fmt.Sprint(paths) != "[/tmp/a.png /tmp/b c.pdf]" {
		t.Fatalf("text %q paths %q", text, paths)
	}
}

func TestSweepRemovesTheCacheOfEndedSessions(t *testing.T) {
	srv := agenttest.New(t)
	e := newMediaEnv(t, srv)
	out := e.send("", attachment{"photo.png", "image/png", pngBytes})
	open := e.send("", attachment{"photo.png", "image/png", pngBytes})
	if open.SessionID != out.SessionID {
		t.Fatal("a second session")
	}
	stray := filepath.Join(e.home, "media", "not-a-session")
	os.MkdirAll(stray, 0o700)
	e.runner.tidyMedia(e.runner.baseCtx)
	if _, err := os.Stat(e.sessionDir(out.SessionID)); err != nil {
		t.Fatalf("the open session's cache went: %v", err)
	}
	if err := e.store.EndSession(e.runner.baseCtx, out.SessionID, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	e.runner.tidyMedia(e.runner.baseCtx)
	if _, err := os.Stat(e.sessionDir(out.SessionID)); !os.IsNotExist(err) {
		t.Fatalf("the ended session's cache is still there: %v", err)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Fatalf("a directory no session owns was removed: %v", err)
	}
}

func TestHooksSeeTheMedia(t *testing.T) {
	srv := agenttest.New(t)
	e := newMediaEnv(t, srv)
	var mu sync.Mutex
	seen := map[string][]byte{}
	keep := func(ctx context.Context, ev hooks.Event) (any, error) {
		b, err := hooks.Context(ev.Payload)
		mu.Lock()
		seen[ev.Name] = b
		mu.Unlock()
		return nil, err
	}
	register(e.reg, hooks.PreGatewayDispatchHook, keep)
	register(e.reg, hooks.PreLLMCallHook, keep)
	out := e.send("see", attachment{"photo.png", "image/png", pngBytes})
	path := filepath.Join(e.sessionDir(out.SessionID), "photo.png")
	mu.Lock()
	defer mu.Unlock()
	var dispatch struct {
		Event herald.Message `json:"event"`
	}
	json.Unmarshal(seen[hooks.PreGatewayDispatchHook], &dispatch)
	if m := dispatch.Event.Media; len(m) != 1 || m[0].Name != "photo.png" || m[0].Type != "image" || m[0].MIME != "image/png" || m[0].Size != int64(len(pngBytes)) {
		t.Fatalf("pre_gateway_dispatch media = %s", seen[hooks.PreGatewayDispatchHook])
	}
	var llm hooks.PreLLMCall
	json.Unmarshal(seen[hooks.PreLLMCallHook], &llm)
	if len(llm.Media) != 1 || llm.Media[0].Path != path || !strings.Contains(llm.UserMessage, "saved at "+path) {
		t.Fatalf("pre_llm_call = %s", seen[hooks.PreLLMCallHook])
	}
	if strings.Contains(string(seen[hooks.PreLLMCallHook]), "base64") {
		t.Fatal("pre_llm_call carries the image bytes")
	}
}

// fileAdapter records the uploads it is handed, and what their path held
// then.
type fileAdapter struct {
	fakeAdapter
	max   int64
	mu    sync.Mutex
	files []adapters.OutgoingFile
	data  [][]byte
}

func (f *fileAdapter) SendFile(ctx context.Context, to herald.Target, of adapters.OutgoingFile) (adapters.Sent, error) {
	b, err := os.ReadFile(of.Path)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files = append(f.files, of)
	f.data = append(f.data, b)
	return adapters.Sent{MessageID: "f1"}, err
}

func (f *fileAdapter) MaxFileSize() int64 { return f.max }

func TestUploadIsACopyOfTheCheckedFileUnderTheLimit(t *testing.T) {
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "chart.png"), pngBytes, 0o644)
	os.WriteFile(filepath.Join(work, "big.bin"), make([]byte, 2048), 0o644)
	fa := &fileAdapter{fakeAdapter: fakeAdapter{name: herald.PlatformLocal}, max: 1024}
	r := New(Config{Adapters: []adapters.Adapter{fa}, Hooks: hooks.NewRegistry(nil), Media: MediaConfig{SendPaths: &agent.Paths{Workdir: work}}})
	j := &job{msg: herald.Message{ID: "m1", Source: herald.Source{Platform: herald.PlatformLocal, ChatID: "c1", UserID: "u1"}}}
	r.sendFile(r.baseCtx, j, agent.OutFile{Path: "chart.png", Caption: "see"}, "")
	r.sendFile(r.baseCtx, j, agent.OutFile{Path: "big.bin"}, "")
	if len(fa.files) != 1 {
		t.Fatalf("uploads = %+v", fa.files)
	}
	up := fa.files[0]
	if up.Path == filepath.Join(work, "chart.png") || filepath.Base(up.Path) != "chart.png" || up.Name != "chart.png" || up.MIME != "image/png" ||
		up.Type != "image" || up.Size != int64(len(pngBytes)) || up.Caption != "see" || up.Cause != "m1" || !bytes.Equal(fa.data[0], pngBytes) {
		t.Fatalf("upload = %+v", up)
	}
	if _, err := os.Stat(filepath.Dir(up.Path)); !os.IsNotExist(err) {
		t.Fatalf("the staged copy was left behind: %v", err)
	}
	if got := fa.texts(); len(got) != 1 || got[0] != "⚠️ big.bin is 2 KB; local takes files up to 1 KB, so it was not sent." {
		t.Fatalf("over the limit: %q", got)
	}
}

func TestAnAttachmentCanBeSentBackToItsOwnChat(t *testing.T) {
	srv := agenttest.New(t, agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
		return agenttest.Reply{Content: "back to you\nMEDIA:" + savedAt.FindStringSubmatch(r.UserText())[1]}
	}})
	e := newMediaEnv(t, srv)
	out := e.send("", attachment{"photo.png", "image/png", pngBytes})
	if len(out.Replies) != 2 || out.Replies[1].File == nil || !bytes.Equal(e.get(out.Replies[1].File.URL), pngBytes) {
		t.Fatalf("replies = %+v", out.Replies)
	}
}
