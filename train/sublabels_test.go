package train

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
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
			if err := cfg.Set("feature.sublabel_spans", "0:2"); err != nil { // NA, NB, VA, VB
				t.Fatal(err)
			}
			md, err := newParamSpace(d, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if md.sub, err = sparse.NewSubLabels(d.LabelNames, cfg.subParts(), d.Corpus, d.NumAttrs); err != nil {
				t.Fatal(err)
			}
			if md.sub.NSub != 10 || md.sub.N != 4 || len(md.sub.IDs) == 0 {
				t.Fatalf("%d sub-labels, %d weights", md.sub.NSub, len(md.sub.IDs))
			}
			md.subTrans = !md.tied // as Train sets it
			if md.subTrans != (trans == "dense") || (md.subTrans && md.nTotal() != md.nParams+len(md.sub.IDs)+100) {
				t.Fatalf("sub-label transitions %v, %d parameters", md.subTrans, md.nTotal())
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
			// The transitions: their own weights, plus (dense) Σ over
			// the parts of U[part of i][part of j].
			tr, _ := md.transitionsFrom(slices.Clone(theta[md.nState:md.nParams]), make([]engine.Exception, len(md.excs)))
			if md.subTrans {
				md.transD = nil // (transitionsFrom adds nothing)
				tr, _ = md.transitionsFrom(slices.Clone(theta[md.nState:md.nParams]), nil)
				m, s := md.m, md.sub
				u := theta[md.nParams+len(s.IDs):]
				score := make([]float64, m*m)
				start, end := make([]float64, m), make([]float64, m)
				for i := range m {
					start[i], end[i] = tr.Start(i), tr.End(i)
					for j := range m {
						score[i*m+j] = tr.Score(i, j)
						for k := range s.N {
							if a, b := s.Of[i*s.N+k], s.Of[j*s.N+k]; a >= 0 && b >= 0 {
								score[i*m+j] += u[int(a)*s.NSub+int(b)]
							}
						}
					}
				}
				tr, _ = engine.NewTransitions(m, score, start, end)
			}
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
