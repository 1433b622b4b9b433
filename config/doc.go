// Package config finds $HERALD_HOME, reads config.yaml and .env, applies
// environment overrides and validates the result.
//
// Every default lives in defaults.go. Loading never fails for keys herald
// does not know (a Hermes config.yaml loads with warnings, each naming the
// key and, where one is close, a did-you-mean); it fails only for malformed
// YAML, a wrong type in herald's own settings or a negative or out-of-range
// duration, with an *Error whose text starts with "config.yaml:LINE:", and
// for a config.yaml or .env that is not a regular file (a named pipe, a
// directory, a device), with an *Error naming the path. Such a file is
// never opened for a blocking read, so it cannot hold start-up. The hooks:
// block is kept as a raw YAML node for the hooks package, which owns its
// format.
//
// The loader records where each setting came from (Source: a default, a
// line of config.yaml or .env, an environment variable) while it walks the
// node tree and applies the environment. A value out of its set or range
// is a warning naming that source, line and column ("config.yaml:5:9: …"),
// and the default replaces it. A tab in the indentation is an error naming
// the tab's line and column, wherever go-yaml placed it. Settings lists
// every effective value with its source, secrets masked: a field tagged
// `secret:"true"` is never in its result, and the same tag decides what
// Secrets holds for redaction.
package config
