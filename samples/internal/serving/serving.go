// Package serving gives the samples that run on Apache Storm their "serve"
// mode and a usage text that mentions it, so that "-h" and "serve -h" tell a
// person how the binary is meant to be started instead of a handshake error.
package serving

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goshelter/goshelter/dsl"
	"github.com/goshelter/goshelter/multilang"
)

// Usage returns a flag.Usage for the sample name: its two modes, then its
// flags. about is the sample's one-line description. It starts as flag's own
// does ("Usage of wordcount:"), with the sample's name where flag would print
// os.Args[0], a path in the build cache under go run.
func Usage(name, about string) func() {
	return func() {
		fmt.Fprintf(flag.CommandLine.Output(), `Usage of %s: %s

usage:
  %[1]s [flags]
    	run the topology locally
  %[1]s [flags] serve
    	serve one of its Go components to Apache Storm over stdin and stdout: the
    	command of a shell component in the Flux definition -flux prints (see
    	docs/STORM.md)

flags:
`, name, about)
		flag.PrintDefaults()
	}
}

// IsServe reports whether args (the command line after the flags) ask for the
// serve mode.
func IsServe(args []string) bool { return len(args) > 0 && args[0] == "serve" }

// Serve runs the serve mode: args[0] is "serve". Storm starts it with no
// further arguments and speaks the multilang protocol on stdin and stdout; a
// person asking for help ("serve -h") gets the usage on stderr and a nil error,
// and anything else after "serve" is an error naming it, before any protocol
// is read.
func Serve(ctx context.Context, name string, topo *dsl.Topology, args []string) error {
	fs := flag.NewFlagSet(name+" serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the usage below says it all
	err := fs.Parse(args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		flag.CommandLine.SetOutput(os.Stderr)
		flag.Usage()
		return nil
	case err != nil:
		return fmt.Errorf("%s serve: %w (it takes no flags; put the sample's flags before \"serve\")", name, err)
	case fs.NArg() > 0:
		return fmt.Errorf("%s serve: unexpected argument %q (serve takes none; Storm starts it as %q)", name, fs.Arg(0), name+" serve")
	}
	return multilang.Serve(ctx, topo, os.Stdin, os.Stdout)
}
