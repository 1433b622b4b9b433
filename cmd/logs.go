package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

var levelRank = map[string]int{"DEBUG": 0, "INFO": 1, "WARN": 2, "WARNING": 2, "ERROR": 3}

func (e *env) logs(ctx context.Context, args []string) error {
	fs := e.flags("logs")
	follow := fs.Bool("follow", false, "keep printing new lines")
	fs.BoolVar(follow, "f", false, "short for --follow")
	level := fs.String("level", "", "only this level and above (DEBUG, INFO, WARN, ERROR)")
	since := fs.String("since", "", "only lines from this long ago (1h, 30m, 2d) or since this time (RFC3339)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	filter, err := newLogFilter(pos, *level, *since, time.Now())
	if err != nil {
		return err
	}
	cfg, err := e.loadConfigWarned()
	if err != nil {
		return err
	}
	p := filepath.Join(cfg.Home, "logs", "gateway.log")
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		if !*follow {
			fmt.Fprintf(e.stderr, "herald: no log yet (%s); start the gateway first\n", p)
			return nil
		}
		for errors.Is(err, os.ErrNotExist) {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(500 * time.Millisecond):
			}
			f, err = os.Open(p)
		}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	rd := bufio.NewReader(f)
	var partial string
	for {
		line, err := rd.ReadString('\n')
		if err == nil {
			line = partial + line
			partial = ""
			if filter.keep(line) {
				io.WriteString(e.stdout, line)
			}
			continue
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		partial += line
		if !*follow {
			if partial != "" && filter.keep(partial) {
				fmt.Fprintln(e.stdout, partial)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func lineLevel(line string) int {
	i := strings.Index(line, "level=")
	if i < 0 {
		return 1
	}
	lv := line[i+6:]
	if j := strings.IndexByte(lv, ' '); j >= 0 {
		lv = lv[:j]
	}
	if r, ok := levelRank[strings.ToUpper(strings.TrimSpace(lv))]; ok {
		return r
	}
	return 1
}
