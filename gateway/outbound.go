package gateway

// outbound.go: files the agent sends (send_file, and MEDIA:<path> lines
// of its answer, Hermes' convention). Each is checked again when it is
// sent (agent.Paths.OpenForSend: the working directory, the media cache,
// tools.send_file.allowed_dirs; never a secret), then uploaded through the
// adapter's FileSender with the same retries as text, under the
// platform's size limit; a platform without one gets a line naming the
// file instead.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
)

// MediaLinePrefix starts a line of an answer that names a file to send.
const MediaLinePrefix = "MEDIA:"

// splitMediaLines takes the MEDIA:<path> lines out of an answer (outside
// code fences) and returns the rest of the text and the paths in order.
func splitMediaLines(text string) (rest string, paths []string) {
	if !strings.Contains(text, MediaLinePrefix) {
		return text, nil
	}
	lines := strings.Split(text, "\n")
	kept := lines[:0]
	fenced := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(t, MediaLinePrefix) {
			p := strings.TrimSpace(strings.Trim(strings.TrimSpace(t[len(MediaLinePrefix):]), "`\"'"))
			if p != "" {
				paths = append(paths, p)
				continue
			}
		}
		kept = append(kept, l)
	}
	if len(paths) == 0 {
		return text, nil
	}
	return strings.TrimSpace(strings.Join(kept, "\n")), paths
}

// outgoing is a turn's answer text without its MEDIA: lines, and the
// files to send after it: send_file's first, then the lines'.
func outgoing(res *agent.Result) (string, []agent.OutFile) {
	text, paths := splitMediaLines(res.FinalResponse)
	files := append([]agent.OutFile(nil), res.Files...)
	for _, p := range paths {
		files = append(files, agent.OutFile{Path: p})
	}
	return text, files
}

// sendFiles sends each file to the chat j came from, as caused by j;
// mediaDir is the media cache of the conversation's session (the only part
// of the cache its files may come from).
func (r *Runner) sendFiles(j *job, files []agent.OutFile, mediaDir string) {
	for _, f := range files {
		r.sendFile(r.baseCtx, j, f, mediaDir)
	}
}

// sendFile sends one file, or tells the chat why it could not.
func (r *Runner) sendFile(ctx context.Context, j *job, f agent.OutFile, mediaDir string) {
	src := j.msg.Source
	a, ok := r.adapters[src.Platform]
	if !ok {
		return
	}
	name := filepath.Base(f.Path)
	file, real, err := r.cfg.Media.SendPaths.OpenForSend(f.Path, mediaDir)
	if err != nil {
		r.log.Warn("file not sent", "platform", src.Platform, "chat", src.ChatID, "path", f.Path, "err", r.cfg.Redactor.Redact(err.Error()))
		r.reply(j, fmt.Sprintf("⚠️ Could not send %s: %s", name, r.cfg.Redactor.Redact(err.Error())))
		return
	}
	defer file.Close()
	name = SafeName(filepath.Base(real))
	fi, err := file.Stat()
	if err != nil {
		r.reply(j, fmt.Sprintf("⚠️ Could not send %s: %v", name, err))
		return
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(io.NewSectionReader(file, 0, 512), head)
	mimeType := sniffMIME(head[:n], name, "")
	fs, ok := a.(adapters.FileSender)
	if !ok {
		r.reply(j, fmt.Sprintf("📎 %s (%s) — %s cannot receive files from herald, so it was not sent.", name, agent.HumanSize(fi.Size()), src.Platform))
		return
	}
	if max := fs.MaxFileSize(); max > 0 && fi.Size() > max {
		r.reply(j, fmt.Sprintf("⚠️ %s is %s; %s takes files up to %s, so it was not sent.", name, agent.HumanSize(fi.Size()), src.Platform, agent.HumanSize(max)))
		return
	}
	staged, cleanup, err := stage(file, name, fi.Size())
	if err != nil {
		r.log.Error("file not staged for upload", "name", name, "err", err)
		r.reply(j, fmt.Sprintf("⚠️ Could not send %s: %v", name, err))
		return
	}
	defer cleanup()
	out := adapters.OutgoingFile{
		Path: staged, Name: name, MIME: mimeType, Type: herald.MediaType(mimeType), Size: fi.Size(),
		Caption: r.cfg.Redactor.Redact(f.Caption), Cause: j.msg.ID,
	}
	to := src.Target()
	err = r.retry(ctx, a, to, func(ctx context.Context) error {
		_, err := safeSendFile(ctx, fs, a, to, out)
		return err
	}, nil)
	if err != nil {
		r.log.Error("file upload failed", "platform", src.Platform, "chat", src.ChatID, "name", name, "err", r.cfg.Redactor.Redact(err.Error()))
		r.reply(j, fmt.Sprintf("⚠️ Could not send %s: the upload to %s failed.", name, src.Platform))
	}
}

// stage copies the file the gateway checked and holds open into a
// private directory (0700, the file 0600) under its own name, and returns
// that copy for the adapter to read: a name swapped for a link after the
// check changes nothing, and an adapter that names the upload after its
// path gets the right name. cleanup removes the copy.
func stage(f *os.File, name string, size int64) (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "herald-send-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, name)
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = io.Copy(out, io.NewSectionReader(f, 0, size))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return path, cleanup, nil
}

func safeSendFile(ctx context.Context, fs adapters.FileSender, a adapters.Adapter, to herald.Target, f adapters.OutgoingFile) (s adapters.Sent, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("adapter %s panicked in SendFile: %v", a.Platform(), x)
		}
	}()
	return fs.SendFile(ctx, to, f)
}
