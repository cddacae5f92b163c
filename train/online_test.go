package train

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
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
// (ap): updating one Transitions in place must not change a bit.
var onlineGolden = map[string]map[string]string{
	"generic": {
		"sgd-dense-m5-wfalse": "0d79fdf7640523fa",
		"sgd-dense-m18-wtrue": "5d5bfd9de4a73537",
		"sgd-tied-m7-wtrue":   "d88d378f9f82b1d9",
		"ap-dense-m5-wtrue":   "6d29d97671106371",
		"ap-dense-m18-wfalse": "d3d1c47226feacbc",
		"ap-tied-m7-wfalse":   "3220a04514dd2223",
	},
	"avx2": {
		"sgd-dense-m5-wfalse": "424f35741eac2a00",
		"sgd-dense-m18-wtrue": "6ce03aa2019fa721",
		"sgd-tied-m7-wtrue":   "5a4e49e86fe9b8dd",
		"ap-dense-m5-wtrue":   "6d29d97671106371",
		"ap-dense-m18-wfalse": "d3d1c47226feacbc",
		"ap-tied-m7-wfalse":   "3220a04514dd2223",
	},
	"avx512": {
		"sgd-dense-m5-wfalse": "424f35741eac2a00",
		"sgd-dense-m18-wtrue": "75c3a1b85ded41fd",
		"sgd-tied-m7-wtrue":   "5a4e49e86fe9b8dd",
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
