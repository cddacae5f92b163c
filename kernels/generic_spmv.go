package kernels

import "math"

// spmvGeneric is the reference of SpMV: each row in eight lanes (entry
// k−ptr[r] goes to lane (k−ptr[r]) mod 8, one FMA chain per lane), the lanes
// added as ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)). The vector tiers compute
// exactly this, so they agree with it bit for bit (NaN payloads aside).
func spmvGeneric(y, x []float64, ptr, idx []int32, v []float64) {
	for r := range y {
		lo, hi := int(ptr[r]), int(ptr[r+1])
		var s [8]float64
		k := lo
		for ; k+8 <= hi; k += 8 {
			idx, v := idx[k:k+8], v[k:k+8]
			s[0] = math.FMA(x[idx[0]], v[0], s[0])
			s[1] = math.FMA(x[idx[1]], v[1], s[1])
			s[2] = math.FMA(x[idx[2]], v[2], s[2])
			s[3] = math.FMA(x[idx[3]], v[3], s[3])
			s[4] = math.FMA(x[idx[4]], v[4], s[4])
			s[5] = math.FMA(x[idx[5]], v[5], s[5])
			s[6] = math.FMA(x[idx[6]], v[6], s[6])
			s[7] = math.FMA(x[idx[7]], v[7], s[7])
		}
		for l := 0; k < hi; k, l = k+1, l+1 {
			s[l] = math.FMA(x[idx[k]], v[k], s[l])
		}
		y[r] = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
	}
}

// gatherMulAddGeneric is the reference of GatherMulAdd: one FMA per entry.
func gatherMulAddGeneric(q, x []float64, xi []int32, y []float64, yi []int32) {
	xi, yi = xi[:len(q)], yi[:len(q)]
	for k := range q {
		q[k] = math.FMA(x[xi[k]], y[yi[k]], q[k])
	}
}
