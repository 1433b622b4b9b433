// Package config finds $HERALD_HOME, reads config.yaml and .env, applies
// environment overrides and validates the result.
//
// Every default lives in defaults.go. Loading never fails for keys herald
// does not know (a Hermes config.yaml loads with warnings, each naming the
// key and, where one is close, a did-you-mean); it fails only for malformed
// YAML or a wrong type in herald's own settings, with an *Error whose text
// starts with "config.yaml:LINE:". The hooks: block is kept as a raw YAML
// node for the hooks package, which owns its format.
package config
