package train

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"

	"github.com/simdcrf/simdcrf/kernels"
)

// onlineCase is a small training run of sgd or ap.
type onlineCase struct {
	alg, trans string
	m          int
	weights    bool
}

var onlineCases = []onlineCase{
	{"sgd", "dense", 5, false},
	{"sgd", "dense", 18, true}, // M ≥ 16: NewTransitions considers Tied
	{"sgd", "tied", 7, true},
	{"ap", "dense", 5, true},
	{"ap", "dense", 18, false},
	{"ap", "tied", 7, false},
}

func (c onlineCase) name() string {
	return fmt.Sprintf("%s-%s-m%d-w%v", c.alg, c.trans, c.m, c.weights)
}

// train runs c for a few epochs and returns the result's parameters, loss
// and iterations hashed (SHA-256 of the float64 bits, first 8 bytes hex).
func (c onlineCase) train(t testing.TB) string {
	d := randomData(t, 31, 120, 40, c.m, c.weights, false)
	cfg, _ := Defaults(c.alg)
	cfg.Transitions = c.trans
	cfg.MaxIterations = 4
	if c.alg == "sgd" {
		cfg.C2 = 0.1
		cfg.CalibrationSamples = 50
	}
	res, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	var b [8]byte
	for _, v := range append(res.Params, res.Loss, float64(res.Iterations)) {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:8])
}

// onlineGolden holds the hashes of onlineCases per kernel tier, recorded on
// amd64 (GOAMD64=v1: the compiler fuses no multiply-adds) with the code
// that built a new engine.Transitions per sequence (sgd) and per mistake
// (ap): updating one Transitions in place must not change a bit. The
// sgd-tied entries were re-recorded after the tied counts and forward and
// backward passes were regrouped (engine commit "tied counts sum per
// exception in column order"): with that arithmetic restored, the hashes
// recorded before matched again. They were re-recorded once more when the
// tied passes moved to kernels.SpMV (eight FMA lanes per column) and
// kernels.GatherMulAdd (one FMA per exception) and its sums over labels to
// kernels.Dot; with the engine's previous tied.go the previous hashes
// match. The sgd-tied entries changed again when the trainer's tied
// default was held at 0 (CRFsuite's unseen bigrams) instead of trained;
// that change was made on a machine without AVX-512; the avx512 entry was
// recorded later, on an Intel Xeon, with the arithmetic of that change.
// The sgd-dense entries of avx2 and avx512 changed when Forward took its
// division off the chain of dependent steps (kernels.lagChecked), Backward
// kept Ψ∘β in registers and both ran four chains for rows of up to three
// vectors; with the previous fb_amd64.s the previous hashes match. The
// generic sgd-dense entries, and avx2's sgd-dense-m18 and sgd-tied, changed
// again when log Z summed one logarithm of the scales' product a sequence
// (engine.sumLogs) instead of one a position; with the sum of logarithms
// restored they match. The sgd-dense entries of avx2 and avx512 changed
// once more when the transition counts came from the backward pass
// (kernels.BackwardTransitions: summed over t downwards, four positions a
// time); with Backward then Transitions (btMax = btMaxAVX2 = 0) the
// previous hashes match.
var onlineGolden = map[string]map[string]string{
	"generic": {
		"sgd-dense-m5-wfalse": "a5e87039eb78d64c",
		"sgd-dense-m18-wtrue": "0a21510bcbffa92b",
		"sgd-tied-m7-wtrue":   "939a7a57bd6e6a89",
		"ap-dense-m5-wtrue":   "6d29d97671106371",
		"ap-dense-m18-wfalse": "d3d1c47226feacbc",
		"ap-tied-m7-wfalse":   "3220a04514dd2223",
	},
	"avx2": {
		"sgd-dense-m5-wfalse": "d272d2d6e2354e56",
		"sgd-dense-m18-wtrue": "1ea3f4b26ea24276",
		"sgd-tied-m7-wtrue":   "9e40d638511d38ab",
		"ap-dense-m5-wtrue":   "6d29d97671106371",
		"ap-dense-m18-wfalse": "d3d1c47226feacbc",
		"ap-tied-m7-wfalse":   "3220a04514dd2223",
	},
	"avx512": {
		"sgd-dense-m5-wfalse": "d272d2d6e2354e56",
		"sgd-dense-m18-wtrue": "780ab4ff67db5022",
		"sgd-tied-m7-wtrue":   "e8f7733ffa6948a3",
		"ap-dense-m5-wtrue":   "6d29d97671106371",
		"ap-dense-m18-wfalse": "d3d1c47226feacbc",
		"ap-tied-m7-wfalse":   "3220a04514dd2223",
	},
}

// TestOnlineBitIdentical checks that sgd and ap give exactly the recorded
// parameters under every kernel tier this CPU runs.
func TestOnlineBitIdentical(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the hashes are of amd64 arithmetic")
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOAMD64" && s.Value != "v1" {
				t.Skipf("GOAMD64=%s may fuse multiply-adds", s.Value)
			}
		}
	}
	for _, tier := range kernels.Impls() {
		restore, err := kernels.Use(tier)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range onlineCases {
			got := c.train(t)
			want, ok := onlineGolden[tier][c.name()]
			if !ok {
				t.Logf("%s %s: %s (no recorded hash)", tier, c.name(), got)
				continue
			}
			if got != want {
				t.Errorf("%s %s: parameters hash %s, recorded %s", tier, c.name(), got, want)
			}
		}
		restore()
	}
}

// onlineEpoch returns a function that runs one epoch of c's algorithm on
// d (sgdEpoch, or apEpoch) over a trainer made as Train makes it, after
// one epoch of warm-up; it returns the epoch's loss (sgd) or mistakes (ap).
func onlineEpoch(tb testing.TB, c onlineCase, d *Data) func() float64 {
	cfg, _ := Defaults(c.alg)
	cfg.Transitions = c.trans
	md, err := newParamSpace(d, &cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tr := &trainer{ctx: context.Background(), d: d, cfg: &cfg, md: md, stop: new(atomic.Bool)}
	st, err := tr.newOnline()
	if err != nil {
		tb.Fatal(err)
	}
	theta := make([]float64, md.nParams)
	var f func() float64
	if c.alg == "sgd" {
		lambda := 2 * cfg.C2 / float64(d.Corpus.Len())
		t0 := 1 / (lambda * cfg.CalibrationEta)
		f = func() float64 {
			loss, err := tr.sgdEpoch(theta, st.order, st, lambda, t0, 0, false)
			if err != nil {
				tb.Fatal(err)
			}
			return loss
		}
	} else {
		ws, u := make([]float64, md.nParams), 1.0
		f = func() float64 {
			var mistakes float64
			if mistakes, u, err = tr.apEpoch(theta, ws, u, st); err != nil {
				tb.Fatal(err)
			}
			return mistakes
		}
	}
	f()
	return f
}

var allocCases = []onlineCase{
	{"sgd", "dense", 5, true},
	{"sgd", "dense", 20, false},
	{"sgd", "tied", 30, true},
	{"ap", "dense", 5, true},
	{"ap", "dense", 20, false},
	{"ap", "tied", 30, true},
}

// TestOnlineNoAllocs checks that an epoch of sgd or ap, past the first,
// allocates nothing: no sequence does (each refreshes one Transitions in
// place, and ap updates it after every mistake).
func TestOnlineNoAllocs(t *testing.T) {
	for _, c := range allocCases {
		d := randomData(t, 33, 100, 40, c.m, c.weights, false)
		epoch := onlineEpoch(t, c, d)
		if c.alg == "ap" && epoch() == 0 {
			t.Fatalf("%s: no mistakes, so no updates to measure", c.name())
		}
		if a := testing.AllocsPerRun(3, func() { epoch() }); a != 0 {
			t.Errorf("%s: an epoch of %d sequences allocates %v times", c.name(), d.Corpus.Len(), a)
		}
	}
}

// BenchmarkOnlineEpoch times an epoch of sgd and ap (allocations reported:
// 0 in steady state).
func BenchmarkOnlineEpoch(b *testing.B) {
	for _, c := range allocCases {
		b.Run(c.name(), func(b *testing.B) {
			d := randomData(b, 33, 500, 60, c.m, c.weights, false)
			epoch := onlineEpoch(b, c, d)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				epoch()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*d.Corpus.Len()), "ns/seq")
		})
	}
}
