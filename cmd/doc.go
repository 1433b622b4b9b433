// Package cmd is herald's command line and composition root. Main parses
// the arguments, loads the configuration, wires the store, the hook
// registry, the agent, the adapters and the gateway together, and returns
// an exit status. It is importable so that a user's own main can add Go
// plugins:
//
//	func main() {
//		os.Exit(cmd.Main(context.Background(), os.Args[1:], cmd.WithPlugins(myplugin.Plugin)))
//	}
//
// Exit statuses: 0 success, 1 failure, 2 bad configuration or usage; 3
// from herald gateway status when no gateway runs (as systemctl status).
// Only this package (and cmd/herald) reads flags, prints usage or exits.
package cmd
