//go:build amd64 && !purego

package kernels

import (
	"slices"
	"testing"
)

func TestAmd64Tiers(t *testing.T) {
	if got := Compiled(); !slices.Equal(got, []string{"generic", "avx2", "avx512"}) {
		t.Fatalf("amd64 build has implementations %v", got)
	}
}
