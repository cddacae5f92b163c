//go:build purego

package kernels

import (
	"slices"
	"testing"
)

// With -tags purego no assembly is built: generic is the only tier.
func TestPuregoHasOnlyGeneric(t *testing.T) {
	if got := Compiled(); !slices.Equal(got, []string{"generic"}) {
		t.Fatalf("purego build has implementations %v, want only generic", got)
	}
	if Impl() != "generic" {
		t.Fatalf("purego build uses %q", Impl())
	}
}
