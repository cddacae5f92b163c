//go:build race

package simdcrf

// The race detector's instrumentation allocates.
func init() { raceEnabled = true }
