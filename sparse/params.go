package sparse

// MakeParams returns a zeroed []float64 of length n for a parameter or
// gradient vector. Large vectors are backed by transparent huge pages where
// the system allows it (Linux with transparent_hugepage in "madvise" mode):
// scoring fetches weight rows at random, and with 4 KiB pages nearly every
// row fetch also misses the TLB.
func MakeParams(n int) []float64 {
	x := MakeBuffer(n)
	clear(x) // touch the pages now, after the advice
	return x
}

// MakeBuffer is MakeParams for a buffer about to be filled (a model file
// read into memory): the same huge-page advice, without touching the pages
// first, so that the filling faults them in.
func MakeBuffer(n int) []float64 {
	x := make([]float64, n)
	adviseHuge(x)
	return x
}
