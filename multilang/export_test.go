package multilang

// Internals the external tests (package multilang_test) drive: they play the
// host with real handshakes and check errors the API only describes.
var (
	NewContext       = newContext
	StormConf        = stormConf
	ErrNoComponent   = errNoComponent
	ErrNotExportable = errNotExportable
	ServeWith        = serveWith
	IdleSpoutPause   = idleSpoutPause
)
