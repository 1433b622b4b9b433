// Package plugins holds herald's example Go plugins: each subdirectory is
// one plugin (a hooks.Plugin named Plugin) that shows one hook point, the
// Go form of an example from Hermes' plugin-hook guide. Compile them into
// a herald binary with cmd.WithPlugins; cmd/herald-examples does that for
// all of them, each switched on by name in HERALD_EXAMPLES.
package plugins
