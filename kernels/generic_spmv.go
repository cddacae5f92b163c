package kernels

import "math"

// spmvGeneric is the reference of SpMV: each row in eight lanes (entry
// k−ptr[r] goes to lane (k−ptr[r]) mod 8, one FMA chain per lane), the lanes
// added as ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)). The vector tiers compute
// exactly this, so they agree with it bit for bit (NaN payloads aside).
func spmvGeneric(y, x []float64, ptr, idx []int32, v []float64) {
	for r := range y {
		lo, hi := int(ptr[r]), int(ptr[r+1])
		// Eight scalars, not an array, so that they stay in registers.
		var s0, s1, s2, s3, s4, s5, s6, s7 float64
		// lanes adds the n ≤ 8 entries from k, entry k+l into lane l.
		lanes := func(k, n int) {
			idx, v := idx[k:k+n], v[k:k+n]
			switch n {
			case 8:
				s7 = math.FMA(x[idx[7]], v[7], s7)
				fallthrough
			case 7:
				s6 = math.FMA(x[idx[6]], v[6], s6)
				fallthrough
			case 6:
				s5 = math.FMA(x[idx[5]], v[5], s5)
				fallthrough
			case 5:
				s4 = math.FMA(x[idx[4]], v[4], s4)
				fallthrough
			case 4:
				s3 = math.FMA(x[idx[3]], v[3], s3)
				fallthrough
			case 3:
				s2 = math.FMA(x[idx[2]], v[2], s2)
				fallthrough
			case 2:
				s1 = math.FMA(x[idx[1]], v[1], s1)
				fallthrough
			case 1:
				s0 = math.FMA(x[idx[0]], v[0], s0)
			}
		}
		k := lo
		for ; k+8 <= hi; k += 8 {
			lanes(k, 8)
		}
		lanes(k, hi-k)
		y[r] = ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7))
	}
}

// gatherMulAddGeneric is the reference of GatherMulAdd: one FMA per entry.
func gatherMulAddGeneric(q, x []float64, xi []int32, y []float64, yi []int32) {
	xi, yi = xi[:len(q)], yi[:len(q)]
	for k := range q {
		q[k] = math.FMA(x[xi[k]], y[yi[k]], q[k])
	}
}
