//go:build !race

package formattest

const raceEnabled = false
