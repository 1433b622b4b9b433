// Command herald is the herald chat gateway. Build your own herald with
// your own Go plugins by copying this file and passing them to cmd.Main
// (see examples/custom-binary).
package main

import (
	"context"
	"os"

	"github.com/heraldgw/herald/cmd"
)

func main() {
	os.Exit(cmd.Main(context.Background(), os.Args[1:], cmd.WithSignals()))
}
