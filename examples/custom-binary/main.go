// Command custom-binary is a herald of your own: the stock CLI, with your
// Go plugins compiled in. Copy this directory, rename the plugin package,
// and build it:
//
//	go build -o herald ./examples/custom-binary
//	./herald hooks list      # shows "myplugin" under Go plugins
//	./herald gateway
package main

import (
	"context"
	"os"

	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/examples/custom-binary/myplugin"
)

func main() {
	os.Exit(cmd.Main(context.Background(), os.Args[1:], cmd.WithPlugins(myplugin.Plugin), cmd.WithSignals()))
}
