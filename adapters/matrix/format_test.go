package matrix

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/formattest"
)

// The renderer is fast enough on the inputs that made other converters
// quadratic (a model can write anything), at the largest input it gets
// (one message, MaxLength bytes), and what it renders is well-formed
// markup. It is not linear on all of them: goldmark takes ~45 ms on
// 16,000 bytes of "[a](", ~660 ms on 64,000; the message limit bounds it.
func TestToHTMLBoundedOnPathologicalInput(t *testing.T) {
	render := func(s string) string { h, _ := toHTML(s); return h }
	formattest.Linear(t, MaxLength, 2*time.Second, render, wellFormed)
}

// wellFormed parses html as XML fragments (the renderer's void tags are
// self-closed or <br>, which the decoder is told about).
func wellFormed(html string) error {
	d := xml.NewDecoder(strings.NewReader("<x>" + html + "</x>"))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func TestToHTML(t *testing.T) {
	for _, c := range []struct{ md, html string }{
		{"plain words", ""},
		{"**bold** `code` ~~gone~~", "<strong>bold</strong> <code>code</code> <del>gone</del>"},
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"line one\nline two", "line one<br>\nline two"},
	} {
		got, ok := toHTML(c.md)
		if got != c.html || ok != (c.html != "") {
			t.Errorf("toHTML(%q) = %q %v, want %q", c.md, got, ok, c.html)
		}
	}
}
