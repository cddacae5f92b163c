//go:build race

package model

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// the tagger's workspaces are made anew and allocation counts mean nothing.
const raceEnabled = true
