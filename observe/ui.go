package observe

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// The status page: an HTML document, a script and a style sheet, embedded so
// that the page needs nothing but the handler (no network, no build step). The
// page reads the REST API with relative URLs, so it works under any prefix.
//
//go:embed ui
var uiFiles embed.FS

// pagePolicy lets the page load only its own script, style and data: error
// messages it shows carry data from the topology, and must not run.
const pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// page serves the status page at /.
func page() http.Handler {
	index, err := uiFiles.ReadFile("ui/index.html")
	if err != nil {
		panic("observe: the embedded page is missing: " + err.Error()) // a build without ui/
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", pagePolicy)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(index)
	})
}

// assets serves the page's script and style at /ui/.
func assets() http.Handler {
	files, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic("observe: the embedded page is missing: " + err.Error())
	}
	server := http.StripPrefix("/ui/", http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") { // no directory listings
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Security-Policy", pagePolicy)
		w.Header().Set("Cache-Control", "no-cache")
		server.ServeHTTP(w, r)
	})
}
