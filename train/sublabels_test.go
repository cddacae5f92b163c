package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/sparse"
)

// TestSubLabelsObjective: with sub-label weights the objective is Σ NLL of
// the chain whose emissions add, for each label part, the weights of the
// position's attributes on that part (computed here from the definition),
// plus C2·‖θ‖²; its gradient matches finite differences.
func TestSubLabelsObjective(t *testing.T) {
	for _, trans := range []string{"dense", "tied"} {
		t.Run(trans, func(t *testing.T) {
			d := wordData(t, 11, 30, 5, 8)
			d.LabelNames = []string{"NA1", "NB2", "VA", "NA2", "VB1"} // parts: N/V; A/B; 1/2/none
			cfg, _ := Defaults("lbfgs")
			cfg.Transitions, cfg.C2, cfg.SubLabels = trans, 0.2, 3
			md, err := newModel(d, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if md.sub, err = sparse.NewSubLabels(d.LabelNames, cfg.SubLabels, d.Corpus, d.NumAttrs); err != nil {
				t.Fatal(err)
			}
			if md.sub.NSub != 6 || len(md.sub.IDs) == 0 {
				t.Fatalf("%d sub-labels, %d weights", md.sub.NSub, len(md.sub.IDs))
			}
			pool := engine.NewPool(2)
			defer pool.Close()
			o := newObjective(md, d, cfg.C2, pool)
			r := rand.New(rand.NewPCG(5, 6))
			theta := make([]float64, md.nTotal())
			for k := range theta {
				if k >= md.nParams || md.trainable(k) {
					theta[k] = r.NormFloat64() * 0.5
				}
			}
			g := make([]float64, len(theta))
			f, err := o.eval(theta, g, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The definition: weight k of attribute a is for sub-label
			// IDs[k]; label y has the sub-labels Of[y·N:].
			want := 0.0
			tr, _ := md.transitions(theta, make([]engine.Exception, len(md.excs)))
			sc := md.hy.split(d.Corpus)
			ws := engine.NewWorkspace()
			subW := theta[md.nParams:]
			for i := range d.Corpus.Len() {
				s := d.Corpus.Seq(i)
				y := sc.labels[i]
				emit := make([]float64, len(y)*md.m)
				md.hy.score(theta, emit, sc, i)
				for pos := range s.Len() {
					for f := s.Ptr[pos]; f < s.Ptr[pos+1]; f++ {
						a := s.IDs[f]
						for k := md.sub.Ptr[a]; k < md.sub.Ptr[a+1]; k++ {
							for lab := range md.m {
								for _, id := range md.sub.Of[lab*md.sub.N : (lab+1)*md.sub.N] {
									if id == md.sub.IDs[k] {
										emit[pos*md.m+lab] += s.Value(int(f)) * subW[k]
									}
								}
							}
						}
					}
				}
				nll, err := tr.NLL(ws, emit, y, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				want += nll
			}
			for _, v := range theta {
				want += cfg.C2 * v * v
			}
			if math.Abs(f-want) > 1e-9*math.Abs(want) {
				t.Errorf("objective %v, want %v", f, want)
			}
			gtmp := make([]float64, len(theta))
			for k := md.nParams; k < len(theta); k++ {
				const h = 1e-5
				x := theta[k]
				theta[k] = x + h
				fp, _ := o.eval(theta, gtmp, nil)
				theta[k] = x - h
				fm, _ := o.eval(theta, gtmp, nil)
				theta[k] = x
				if fd := (fp - fm) / (2 * h); math.Abs(fd-g[k]) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("sub-label weight %d: gradient %.8g, finite difference %.8g", k-md.nParams, g[k], fd)
				}
			}
		})
	}
}

// TestSubLabelsTrain: training returns the sub-label weights, not all
// zero, and refuses sgd and data without label names.
func TestSubLabelsTrain(t *testing.T) {
	d := wordData(t, 12, 40, 4, 6)
	cfg, _ := Defaults("lbfgs")
	cfg.SubLabels, cfg.MaxIterations, cfg.Threads = 2, 20, 2
	if _, err := Train(context.Background(), d, cfg); err == nil {
		t.Error("no label names: no error")
	}
	d.LabelNames = []string{"AX", "AY", "BX", "BY"}
	res, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sub == nil || res.Sub.Check(4, d.NumAttrs) != nil {
		t.Fatalf("result sub-labels %+v", res.Sub)
	}
	nz := 0
	for _, w := range res.Sub.W {
		if w != 0 {
			nz++
		}
	}
	if nz == 0 {
		t.Error("all sub-label weights 0")
	}
	cfg.Algorithm = "sgd"
	if _, err := Train(context.Background(), d, cfg); err == nil {
		t.Error("sgd with sub-labels: no error")
	}
}
