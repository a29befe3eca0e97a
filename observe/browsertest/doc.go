// Package browsertest holds the status page's browser tests: headless
// Chromium, driven through the DevTools protocol by github.com/chromedp/chromedp,
// loads the page of a running topology and reads what a person would see.
// It is a module of its own so that chromedp stays out of the core's go.mod;
// go.work lists it, so the README's `go test -race work` runs it. The tests
// skip, saying so, when no Chromium is on PATH (apt-get install chromium).
// The package has no code of its own.
package browsertest
