package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald/adapters/discord/discordtest"
	"github.com/heraldgw/herald/adapters/matrix/matrixtest"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
	"github.com/heraldgw/herald/adapters/teams/teamstest"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/adapters/whatsapp/whatsapptest"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// A photo with no caption, sent on Telegram, Discord and Slack to one
// gateway, reaches the model as an image part; the model answers with
// send_file, and each platform's fake records the upload in the chat the
// photo came from.
func TestMediaOnEveryPlatform(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "chart.png"), tinyPNG, 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	images := 0
	model := agenttest.New(t)
	model.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		if req.LastMessage().Role == "tool" {
			return agenttest.Reply{Content: "Here is the chart."}
		}
		if len(req.Images()) > 0 {
			mu.Lock()
			images++
			mu.Unlock()
			return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call_f", Name: "send_file", Args: `{"path":"chart.png","caption":"the chart"}`}}}
		}
		return agenttest.Reply{Content: "no image seen"}
	}}
	p := startPlatforms(t, home, "agent:\n  workdir: "+work+"\nmodel:\n  vision: true\n", modelEnv(model))
	tg, dc, sl, g := p.tg, p.dc, p.sl, p.g
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	photo := tg.AddFile("photos/file_1.png", tinyPNG)
	tg.DMMedia(telegramtest.User{ID: 555, UserName: "ann", First: "Ann"}, telegramtest.Media{Kind: "photo", File: photo})
	m := dc.DM(&discordgo.User{ID: "42", Username: "bob"}, "")
	m.Attachments = []*discordgo.MessageAttachment{dc.AddAttachment(m.ChannelID, "photo.png", "image/png", tinyPNG)}
	dc.Inject(m)
	sl.ShareFiles("DU123", "im", "U123", "", sl.AddFile("photo.png", "image/png", tinyPNG))

	up, err := tg.WaitCalls(ctx, "sendPhoto", 1)
	if err != nil || up[0].ChatID != "555" || string(up[0].File) != string(tinyPNG) || !strings.Contains(up[0].Caption, "the chart") {
		t.Fatalf("telegram upload: %+v %v\n%s", up, err, g.Log())
	}
	// the answer, then the file
	sent, err := dc.WaitSent(ctx, 2)
	if err != nil {
		t.Fatalf("discord: %v\n%s", err, g.Log())
	}
	var dcUp *discordtest.Message
	for i := range sent {
		if len(sent[i].Files) > 0 {
			dcUp = &sent[i]
		}
	}
	if dcUp == nil || dcUp.ChannelID != "dm-42" || string(dcUp.Files[0].Data) != string(tinyPNG) {
		t.Fatalf("discord upload: %+v", dcUp)
	}
	slUp, err := sl.WaitUploads(ctx, 1)
	if err != nil || slUp[0].Channel != "DU123" || string(slUp[0].Data) != string(tinyPNG) || !strings.Contains(slUp[0].InitialComment, "the chart") {
		t.Fatalf("slack upload: %+v %v", slUp, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if images != 3 {
		t.Fatalf("the model saw %d image parts, want 3", images)
	}
}

// An upload limit beyond anything Discord takes is refused at start,
// naming the setting.
func TestDiscordUploadLimitIsChecked(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("platforms:\n  discord:\n    token: discord-test-token-0123456789\n    max_upload_mb: 4096\n"), 0o600)
	code, _, errOut := run(t, home, "", "gateway")
	if code == 0 || !strings.Contains(errOut, "platforms.discord.max_upload_mb: 4096 is not between 1 and 500") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// Through the platforms as well: a Telegram voice note is transcribed and
// the model sees the transcript; a Slack document lands in the media
// cache under a sanitised name and read_file opens it; a Discord
// attachment over media.max_bytes gets the limit note and the next
// message is answered.
func TestVoiceDocumentAndOversizeOnPlatforms(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	model := agenttest.New(t)
	model.Transcript = "please book the meeting room"
	// what the model saw, signalled as it sees it (replies may be
	// streamed, so the chat's first message can be a partial preview)
	heard, docRead, stillThere := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)
	signal := func(c chan struct{}) {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	model.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		if strings.Contains(req.UserText(), "still there?") {
			signal(stillThere)
		}
		if strings.Contains(req.UserText(), "[voice note transcript] please book the meeting room") {
			signal(heard)
		}
		last := req.LastMessage()
		if last.Role == "tool" && strings.Contains(last.Content, "room 4B at noon") {
			signal(docRead)
		}
		if last.Role == "tool" {
			return agenttest.Reply{Content: "read: " + last.Content}
		}
		text := req.UserText()
		if i := strings.Index(text, "saved at "); i >= 0 && strings.Contains(text, "notes") {
			path := strings.TrimSpace(text[i+len("saved at "):])
			if j := strings.IndexAny(path, "];\n"); j >= 0 {
				path = path[:j]
			}
			return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call_r", Name: "read_file", Args: `{"path":"` + path + `"}`}}}
		}
		return agenttest.Reply{Content: "model saw: " + text}
	}}
	p := startPlatforms(t, home, "agent:\n  workdir: "+work+"\nstt:\n  enabled: true\nmedia:\n  max_bytes: 2048\n", modelEnv(model))
	tg, dc, sl, g := p.tg, p.dc, p.sl, p.g
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	voice := tg.AddFile("voice/file_2.oga", []byte("OggS\x00\x02fake opus"))
	tg.DMMedia(telegramtest.User{ID: 555, UserName: "ann", First: "Ann"}, telegramtest.Media{Kind: "voice", File: voice, MIME: "audio/ogg"})
	wait := func(c chan struct{}, what string) {
		t.Helper()
		select {
		case <-c:
		case <-ctx.Done():
			t.Fatalf("%s: never seen by the model\n%s", what, g.Log())
		}
	}
	wait(heard, "telegram voice transcript")
	if n := len(model.Transcriptions()); n != 1 {
		t.Fatalf("%d transcription requests, want 1", n)
	}

	sl.ShareFiles("DU123", "im", "U123", "", sl.AddFile("../../.env notes.txt", "text/plain", []byte("room 4B at noon")))
	wait(docRead, "slack document read with read_file")
	matches, _ := filepath.Glob(filepath.Join(home, "media", "*", "*"))
	for _, m := range matches {
		if rel, _ := filepath.Rel(filepath.Join(home, "media"), m); strings.Contains(rel, "..") || strings.HasPrefix(filepath.Base(m), ".") {
			t.Fatalf("a crafted name escaped or hid in the cache: %s", m)
		}
	}
	if len(matches) < 2 {
		t.Fatalf("media cache holds %v", matches)
	}

	m := dc.DM(&discordgo.User{ID: "42", Username: "bob"}, "what is this?")
	m.Attachments = []*discordgo.MessageAttachment{dc.AddAttachment(m.ChannelID, "big.bin", "application/octet-stream", make([]byte, 4096))}
	dc.Inject(m)
	dc.Inject(dc.DM(&discordgo.User{ID: "42", Username: "bob"}, "still there?"))
	// the limit note reaches the chat, and the next message reaches the model
	sent, err := dc.WaitSent(ctx, 1)
	if err != nil || !strings.Contains(sent[0].Content, "over the 2 KB limit") {
		t.Fatalf("discord oversize: %+v %v\n%s", sent, err, g.Log())
	}
	wait(stillThere, "the message after the oversize one")
}

// platforms are the platform fakes and a gateway connected to all of
// them: Telegram, Discord and Slack always; WhatsApp and Teams (on the
// inbound listener) when started with startAllPlatforms.
type platforms struct {
	tg *telegramtest.Server
	dc *discordtest.Server
	sl *slacktest.Server
	wa *whatsapptest.Server
	tm *teamstest.Server
	mx *matrixtest.Server
	g  *cmdtest.Gateway
	// inbound is the address of the inbound listener ("" without it)
	inbound string
}

// startPlatforms starts the Telegram, Discord and Slack fakes and a
// gateway on home with extra config.yaml text before the platforms block
// and extra environment, and waits until every platform is connected.
func startPlatforms(t *testing.T, home, extra string, env map[string]string) *platforms {
	return startPlatformsOf(t, home, extra, env, false)
}

// startAllPlatforms is startPlatforms with WhatsApp, Teams and Matrix
// too; Matrix has a DM room !alldm:localhost with @cy:localhost.
func startAllPlatforms(t *testing.T, home, extra string, env map[string]string) *platforms {
	return startPlatformsOf(t, home, extra, env, true)
}

func startPlatformsOf(t *testing.T, home, extra string, env map[string]string, all bool) *platforms {
	t.Helper()
	p := &platforms{
		tg: telegramtest.New(telegramtest.Options{MaxPoll: time.Second}),
		dc: discordtest.New(),
		sl: slacktest.New(slacktest.Options{BotToken: "xoxb-test-bot-token-0123456789", AppToken: "xapp-test-app-token-0123456789"}),
	}
	t.Cleanup(p.tg.Close)
	t.Cleanup(p.dc.Close)
	t.Cleanup(p.sl.Close)
	cfg := extra + "platforms:\n" +
		"  telegram:\n    api_endpoint: " + p.tg.Endpoint() + "\n    poll_timeout: 1\n    allowed_users: [\"*\"]\n" +
		"  discord:\n    api_base: " + p.dc.APIBase() + "\n    allowed_users: [\"*\"]\n" +
		"  slack:\n    api_url: " + p.sl.APIURL() + "\n    allowed_users: [\"*\"]\n"
	envs := map[string]string{
		"TELEGRAM_BOT_TOKEN": p.tg.Token(),
		"DISCORD_BOT_TOKEN":  "discord-test-token-0123456789",
		"SLACK_BOT_TOKEN":    "xoxb-test-bot-token-0123456789",
		"SLACK_APP_TOKEN":    "xapp-test-app-token-0123456789",
	}
	connected := []string{"telegram", "discord", "slack", "local"}
	if all {
		p.wa = whatsapptest.New(whatsapptest.Options{})
		p.tm = teamstest.New(teamstest.Options{})
		p.mx = matrixtest.New(matrixtest.Options{})
		t.Cleanup(p.wa.Close)
		t.Cleanup(p.tm.Close)
		t.Cleanup(p.mx.Close)
		p.mx.Room("!alldm:localhost", map[string]string{"@cy:localhost": "Cy"})
		cfg = "inbound:\n  listen: 127.0.0.1:0\n" + cfg +
			"  whatsapp:\n    api_base: " + p.wa.APIBase() + "\n    allowed_users: [\"*\"]\n" +
			"  teams:\n    openid_metadata_url: " + p.tm.OpenIDMetadataURL() + "\n    token_url: " + p.tm.TokenURL() + "\n    allowed_users: [\"*\"]\n" +
			"  matrix:\n    homeserver: " + p.mx.URL() + "\n    allowed_users: [\"*\"]\n"
		envs["WHATSAPP_ACCESS_TOKEN"] = p.wa.Token()
		envs["WHATSAPP_PHONE_NUMBER_ID"] = p.wa.PhoneNumberID()
		envs["WHATSAPP_VERIFY_TOKEN"] = "wa-verify-token-0123456789"
		envs["WHATSAPP_APP_SECRET"] = p.wa.AppSecret()
		envs["MICROSOFT_APP_ID"] = p.tm.AppID()
		envs["MICROSOFT_APP_PASSWORD"] = p.tm.AppPassword()
		envs["MATRIX_ACCESS_TOKEN"] = p.mx.Token()
		connected = append(connected, "whatsapp", "teams", "matrix")
	}
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range env {
		envs[k] = v
	}
	p.g = cmdtest.Start(t, cmdtest.Options{Home: home, Env: envs})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitHealth(t, p.g, ctx, connected...)
	if all {
		b, err := os.ReadFile(filepath.Join(home, "inbound.addr"))
		if err != nil {
			t.Fatalf("no inbound listener: %v\n%s", err, p.g.Log())
		}
		p.inbound = "http://" + strings.TrimSpace(string(b))
	}
	return p
}

// modelEnv points a gateway at a fake OpenAI server.
func modelEnv(m *agenttest.Server) map[string]string {
	return map[string]string{"OPENAI_BASE_URL": m.BaseURL(), "OPENAI_API_KEY": "sk-test-key-0123456789abcdef", "HERALD_MODEL": "fake-model"}
}
