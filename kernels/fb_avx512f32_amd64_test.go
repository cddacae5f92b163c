//go:build !purego

package kernels

import (
	"math"
	"testing"
)

// avx512F32 is the avx512 tier with every AVX-512 float32 kernel (and the
// float64 BackwardBatch) called directly: generated on a machine without
// AVX-512, they are checked here exactly as the float32 tests check every
// tier. The tier runs each of them since this test passed on an AVX-512
// machine (Forward32 above fbNarrow32 labels and ForwardBatch32 above
// fbNarrow only: here at every M).
func avx512F32() *impl {
	p := *avx512Impl
	p.name = "avx512-f32"
	p.forward32, p.backward32, p.transitions32 = lagChecked(forward32AVX512), backward32AVX512, transitions32AVX512
	p.backwardTransitions32 = fused(btMax, backwardTransitions32AVX512, backwardTransitionsOf(backward32AVX512, transitions32AVX512))
	p.shiftRows32 = shiftRows32AVX512
	p.forwardBatch32 = fbBatch(forwardBatch32AVX512)
	p.backwardBatch32 = bbBatch(backwardBatch32AVX512)
	p.backwardBatch = bbBatch(backwardBatchAVX512)
	p.viterbi32, p.viterbiMax32 = viterbi32AVX512, viterbiMax32AVX512
	p.exp32 = exp32AVX512
	p.dot32, p.axpy32, p.scale32 = dot32AVX512, axpy32AVX512, scale32AVX512
	p.gather32, p.scatter32 = gather32AVX512, scatter32AVX512
	return &p
}

func TestAVX512F32Direct(t *testing.T) {
	p := avx512F32()
	if !p.available {
		t.Skip("no AVX-512 on this CPU: the AVX-512 float32 kernels are not wired in and not tested here")
	}
	r := newRand(512)
	for _, kind := range fb32Kinds {
		for _, T := range []int{1, 2, 3, 7, 50} {
			for _, M := range labelCounts() {
				c := makeFB32(r, kind, T, M)
				ref := runFB32(t, generic, c)
				got := runFB32(t, p, c)
				var rg []float64
				if T >= 2 {
					rg = to64(ref.g)
				}
				checkFB32Against(t, p.name+" vs generic32 "+c.name, got, to64(ref.alpha), to64(ref.scale), to64(ref.beta), rg, T, M)
			}
		}
	}
	for _, M := range labelCounts() {
		for _, T := range []int{1, 2, 9} {
			s, tr := to32(randSlice(r, T*M, -50, 50)), to32(randSlice(r, M*M, -10, 10))
			gd, gb := runViterbi32(t, generic, s, tr, T, M)
			d, b := runViterbi32(t, p, s, tr, T, M)
			for k := range d {
				if d[k] != gd[k] || b[k] != gb[k] {
					t.Fatalf("%s viterbi32 T=%d M=%d [%d] = %v/%d, generic %v/%d", p.name, T, M, k, d[k], b[k], gd[k], gb[k])
				}
			}
		}
	}
	for _, M := range []int{1, 5, 9, 16, 17, 33, 45, 100} {
		T, K := 4, 7
		psi, e := to32(randSlice(r, T*K*M, 0, 1)), to32(randSlice(r, M*M, 0, 1))
		wa, ws := make([]float32, T*K*M), make([]float32, T*K)
		generic.forwardBatch32(wa, ws, psi, e, nil, T, K, M)
		a, s := make([]float32, T*K*M), make([]float32, T*K)
		p.forwardBatch32(a, s, psi, e, nil, T, K, M)
		checkClose32(t, p.name+" forwardBatch32 alpha", a, to64(wa), fb32Tol, fb32Atol)
		checkClose32(t, p.name+" forwardBatch32 scale", s, to64(ws), fb32Tol, 0)
	}
	for _, M := range []int{1, 5, 9, 16, 17, 33, 45, 100} {
		checkBackwardBatch(t, p, 5, 7, M)
	}
	for _, n := range lengths() {
		x, y := to32(randSlice(r, n, -1, 1)), to32(randSlice(r, n, -1, 1))
		if got, want := p.dot32(x, y), generic.dot32(x, y); !close(got, want, 1e-12, 1e-13) {
			t.Fatalf("%s dot32 n=%d: %v, want %v", p.name, n, got, want)
		}
		ya, yb := append([]float32(nil), y...), append([]float32(nil), y...)
		p.axpy32(0.5, x, ya)
		generic.axpy32(0.5, x, yb)
		checkClose32(t, p.name+" axpy32", ya, to64(yb), 1e-6, 1e-7)
		p.scale32(0.5, ya)
		generic.scale32(0.5, yb)
		checkClose32(t, p.name+" scale32", ya, to64(yb), 1e-6, 1e-7)
	}
	for _, M := range []int{1, 5, 9, 16, 17, 33, 45, 100, 130} {
		T, rows := 6, 40
		ptr := []int32{0, 3, 3, 7, 8, 12, 15}
		ids := make([]int32, 15)
		vals := to32(randSlice(r, 15, -1, 1))
		for k := range ids {
			ids[k] = int32(r.IntN(rows))
		}
		w := to32(randSlice(r, rows*M, -1, 1))
		s0 := to32(randSlice(r, T*M, -1, 1))
		sa, sb := append([]float32(nil), s0...), append([]float32(nil), s0...)
		p.gather32(sa, w, M, ptr, ids, vals, T, M)
		generic.gather32(sb, w, M, ptr, ids, vals, T, M)
		checkClose32(t, p.name+" gather32", sa, to64(sb), 1e-6, 1e-6)
		ga, gb := append([]float32(nil), w...), append([]float32(nil), w...)
		p.scatter32(ga, M, s0, ptr, ids, vals, -0.5, T, M)
		generic.scatter32(gb, M, s0, ptr, ids, vals, -0.5, T, M)
		checkClose32(t, p.name+" scatter32", ga, to64(gb), 1e-6, 1e-6)
	}
	for _, M := range labelCounts() {
		for _, T := range []int{1, 2, 9} {
			s, tr := to32(randSlice(r, T*M, -50, 50)), to32(randSlice(r, M*M, -10, 10))
			if M > 2 {
				s[r.IntN(T*M)] = inf32(-1)
				tr[r.IntN(M*M)] = inf32(-1)
			}
			gd, _ := runViterbi32(t, generic, s, tr, T, M)
			dbuf, d := guarded32(T*M, nil)
			p.viterbiMax32(d, s, tr, T, M)
			checkGuards32(t, p.name+" viterbiMax32", dbuf)
			for k := range d {
				if math.Float32bits(d[k]) != math.Float32bits(gd[k]) && !(d[k] != d[k] && gd[k] != gd[k]) {
					t.Fatalf("%s viterbiMax32 T=%d M=%d δ[%d] = %v, generic viterbi32 %v", p.name, T, M, k, d[k], gd[k])
				}
			}
			// ShiftRows32 (its inputs hold no NaN or +Inf).
			a := to32(randSlice(r, M, -20, 20))
			want := [3][]float32{make([]float32, T*M), make([]float32, T), make([]float32, T)}
			generic.shiftRows32(want[0], want[1], want[2], s, a, T, M)
			obuf, o := guarded32(T*M, nil)
			xbuf, x := guarded32(T, nil)
			lbuf, l := guarded32(T, nil)
			p.shiftRows32(o, x, l, s, a, T, M)
			checkGuards32(t, p.name+" shiftRows32 out", obuf)
			checkGuards32(t, p.name+" shiftRows32 mx", xbuf)
			checkGuards32(t, p.name+" shiftRows32 lo", lbuf)
			for q, got := range [3][]float32{o, x, l} {
				for k := range got {
					if got[k] != want[q][k] && !(got[k] != got[k] && want[q][k] != want[q][k]) {
						t.Fatalf("%s shiftRows32 T=%d M=%d: output %d [%d] = %v, generic %v", p.name, T, M, q, k, got[k], want[q][k])
					}
				}
			}
		}
	}
	for _, n := range lengths() {
		in := to32(randSlice(r, n, -100, 100))
		got, want := make([]float32, n), make([]float32, n)
		p.exp32(got, in)
		generic.exp32(want, in)
		for k := range got {
			if ulps32(got[k], want[k]) > 2 {
				t.Fatalf("%s exp32(%v) = %v, want %v", p.name, in[k], got[k], want[k])
			}
		}
	}
}
