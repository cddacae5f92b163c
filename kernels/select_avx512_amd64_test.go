//go:build !purego

package kernels

import "testing"

// avx512Select is the avx512 tier with its own selection kernels set by
// name. Written on a machine without AVX-512, they were wired into the
// tier's table once TestAVX512SelectDirect had passed on one; the test
// keeps checking them by name, whatever the table holds.
func avx512Select() *impl {
	p := *avx512Impl
	p.name = "avx512-select"
	p.selectGE, p.selectSumGE, p.max = selectGEAVX512, selectSumGEAVX512, maxAVX512
	p.selectGE32, p.selectSumGE32, p.max32 = selectGE32AVX512, selectSumGE32AVX512, max32AVX512
	return &p
}

func init() {
	if p := avx512Select(); p.available {
		selectDirect = append(selectDirect, p)
	}
}

// TestAVX512SelectDirect runs TestSelect's checks on the AVX-512 selection
// kernels (FuzzSelect and TestSelectPageEnd take them too).
func TestAVX512SelectDirect(t *testing.T) {
	p := avx512Select()
	if !p.available {
		t.Skip("no AVX-512 on this CPU: the AVX-512 selection kernels are not wired in and not tested here")
	}
	testSelectImpl(t, p)
}
