package cron

import "time"

// ParseDuration reads a duration as schedules write it: "30m", "2h",
// "1d", "2w", "1h30m", words ("3 days") and plain minutes ("45"). Other
// commands that take an age (herald sessions prune, herald logs --since)
// read it the same way.
func ParseDuration(s string) (time.Duration, error) { return parseDuration(s) }
