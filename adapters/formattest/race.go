//go:build race

package formattest

// raceEnabled: the race detector slows converters 5-20 times.
const raceEnabled = true
