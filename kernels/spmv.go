package kernels

import "fmt"

// SpMV is a sparse matrix–vector product in CSR form: for every row
// r < len(y),
//
//	y[r] = Σ_{k=ptr[r]}^{ptr[r+1]−1} x[idx[k]]·v[k]
//
// (y is overwritten; an empty row gives +0). ptr has at least len(y)+1
// entries, ascending; its entries are offsets into idx and v, and ptr[0]
// need not be 0 (a window of a larger CSR matrix works). The indices must
// be in [0, len(x)); SpMV checks them and ptr (an O(entries) scan: Rows
// checks a structure once).
//
// Summation order: each row is summed in eight lanes, entry ptr[r]+k going
// to lane k mod 8 (one fused multiply-add chain per lane), and the lanes are
// added as ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)). Every tier computes exactly
// this, so results are deterministic and the same on every tier (NaN
// payloads aside). Against a plain left-to-right sum the difference is
// within the usual bound n·ε·Σ|x[idx[k]]·v[k]| for a row of n entries.
// A NaN term (a NaN, or 0·Inf) makes the row NaN and infinite terms of
// both signs give NaN, as in that sum; but where finite terms overflow the
// regrouping may give ±Inf or NaN (Inf−Inf) where a plain sum does not.
//
// The amd64 tiers use VGATHERDPD (AVX2 and AVX-512; the last step of a row
// masked to its remaining entries). arm64 has no gather instruction: NEON
// leaves SpMV to the generic code.
func SpMV(y, x []float64, ptr, idx []int32, v []float64) {
	checkRows("SpMV", len(y), ptr, idx, v)
	if len(y) == 0 {
		return
	}
	checkRowIndices("SpMV", len(y), ptr, idx, len(x))
	cur().spmv(y, x, ptr, idx, v)
}

// checkRows checks the sizes of the CSR arguments of the row kernels
// (SpMV, MaxPlusCSR) in O(1): rows+1 entries of ptr from a non-negative
// ptr[0] to a ptr[rows] no smaller, and idx and v that long.
func checkRows(kernel string, rows int, ptr, idx []int32, v []float64) {
	if rows == 0 {
		return
	}
	need(kernel, "ptr", len(ptr), rows+1)
	if ptr[0] < 0 || ptr[rows] < ptr[0] {
		panic(fmt.Sprintf("kernels: %s: ptr[0] = %d, ptr[%d] = %d", kernel, ptr[0], rows, ptr[rows]))
	}
	need(kernel, "idx", len(idx), int(ptr[rows]))
	need(kernel, "v", len(v), int(ptr[rows]))
}

// checkRowIndices is the O(entries) rest of the checked forms (rows > 0,
// sizes checked): ptr ascends, and every entry of idx indexes an x of n
// entries.
func checkRowIndices(kernel string, rows int, ptr, idx []int32, n int) {
	for r := range rows {
		if ptr[r+1] < ptr[r] {
			panic(fmt.Sprintf("kernels: %s: ptr not ascending at %d", kernel, r))
		}
	}
	checkIdx(kernel, "idx", idx[ptr[0]:ptr[rows]], n)
}

// GatherMulAdd sets q[k] += x[xi[k]]·y[yi[k]] for k < len(q), with one
// fused multiply-add per entry on every tier (so the tiers agree bit for
// bit; special values propagate as in that FMA). len(xi) and len(yi) are at
// least len(q); the indices must be in [0, len(x)) and [0, len(y)), and
// GatherMulAdd checks them (O(len(q)): Pairs checks a list once). The amd64
// tiers use VGATHERDPD; on arm64 (no gather instruction) it is the generic
// code.
func GatherMulAdd(q, x []float64, xi []int32, y []float64, yi []int32) {
	need("GatherMulAdd", "xi", len(xi), len(q))
	need("GatherMulAdd", "yi", len(yi), len(q))
	checkIdx("GatherMulAdd", "xi", xi[:len(q)], len(x))
	checkIdx("GatherMulAdd", "yi", yi[:len(q)], len(y))
	if len(q) == 0 {
		return
	}
	cur().gatherMulAdd(q, x, xi[:len(q)], y, yi[:len(q)])
}

// checkIdx panics unless every index is in [0, n).
func checkIdx(kernel, arg string, idx []int32, n int) {
	lo, hi := int32(0), int32(-1)
	for _, i := range idx {
		lo, hi = min(lo, i), max(hi, i)
	}
	if lo < 0 || int(hi) >= n {
		for k, i := range idx {
			if i < 0 || int(i) >= n {
				panic(fmt.Sprintf("kernels: %s: %s[%d] = %d out of range [0, %d)", kernel, arg, k, i, n))
			}
		}
	}
}
