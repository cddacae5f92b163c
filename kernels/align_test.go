package kernels

import "testing"

// TestAlignBatchEnd: each chain's rows end at row T−1 in order, its first
// pad rows Ψ = 0, α = 0, scale 1; a chain of pad T is all cleared; other
// chains' rows are untouched.
func TestAlignBatchEnd(t *testing.T) {
	const T, K, M = 5, 4, 3
	pad := []int32{0, 2, 5, 4}
	val := func(t, k, j int) float32 { return float32(1 + t*100 + k*10 + j) }
	psi, alpha, scale := make([]float32, T*K*M), make([]float32, T*K*M), make([]float32, T*K)
	for tt := range T {
		for k := range K {
			scale[tt*K+k] = val(tt, k, 9)
			for j := range M {
				psi[(tt*K+k)*M+j], alpha[(tt*K+k)*M+j] = val(tt, k, j), -val(tt, k, j)
			}
		}
	}
	AlignBatchEnd(psi, alpha, scale, pad, T, K, M)
	for k := range K {
		P := int(pad[k])
		for tt := range T {
			for j := range M {
				wantP, wantS := float32(0), float32(1)
				if tt >= P {
					wantP, wantS = val(tt-P, k, j), val(tt-P, k, 9)
				}
				i := (tt*K+k)*M + j
				if psi[i] != wantP || alpha[i] != -wantP || scale[tt*K+k] != wantS {
					t.Fatalf("chain %d (pad %d) row %d label %d: ψ %v α %v scale %v, want %v, %v, %v", k, P, tt, j, psi[i], alpha[i], scale[tt*K+k], wantP, -wantP, wantS)
				}
			}
		}
	}
}
