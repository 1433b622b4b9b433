package cmd

// WithGOOS makes herald gateway install manage the service of another
// system (darwin: launchd) for the tests in cmd_test.
func WithGOOS(goos string) Option { return func(e *env) { e.goos = goos } }

// ServiceSuffix and SystemdQuote are serviceSuffix and systemdQuote.
var (
	ServiceSuffix = serviceSuffix
	SystemdQuote  = systemdQuote
)
