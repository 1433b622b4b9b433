//go:build !linux

package sandbox

func landlockABI() int { return 0 }

const launcherSupported = false

// ProtectSelf does nothing here: there is no prctl.
func ProtectSelf() error { return nil }
