package local

// console.go serves the web console: static files embedded from
// console/ (index.html at "/", the rest under "/console/"), with no
// build step. Every page request passes the Host check like the API
// (Handler wraps the whole mux). The page's script talks to the API with
// the bearer token the user enters; the Content-Security-Policy allows
// only the page's own files, so neither model nor hook output can run
// script even if it reached the DOM as markup.

import (
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
)

//go:embed console
var consoleFS embed.FS

// consoleCSP allows the console's own scripts, styles, images and API
// calls, and nothing inline.
const consoleCSP = "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// page is GET /: the console's index.html.
func (a *Adapter) page(w http.ResponseWriter, r *http.Request) {
	a.serveConsole(w, "index.html")
}

// consoleFile is GET /console/{file}: one of the console's files.
func (a *Adapter) consoleFile(w http.ResponseWriter, r *http.Request) {
	a.serveConsole(w, r.PathValue("file"))
}

func (a *Adapter) serveConsole(w http.ResponseWriter, name string) {
	if !fs.ValidPath(name) || path.Base(name) != name {
		writeErr(w, http.StatusNotFound, "no such console file")
		return
	}
	b, err := consoleFS.ReadFile("console/" + name)
	if err != nil {
		writeErr(w, http.StatusNotFound, "no such console file: "+name)
		return
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	w.Write(b)
}
