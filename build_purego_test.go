//go:build purego

package simdcrf

// buildTags are this test binary's build tags that change arithmetic: the
// command it compares with is built with them too.
var buildTags = []string{"-tags", "purego"}
