// Package term tells the samples whether a person is watching their output.
// Progress lines help a person and clutter a log or a pipe, so the samples
// print them by default only to a terminal.
package term

import "os"

// IsTerminal reports whether f is a character device: a terminal, or /dev/null,
// where the extra lines cost nothing either.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
