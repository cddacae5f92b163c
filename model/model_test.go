package model

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/simdcrf/simdcrf/engine"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/sparse"
)

type spec struct {
	m, attrs int
	layout   sparse.Layout
	tied     bool
	stride   int     // dense only; 0 for M
	zeros    float64 // fraction of weights set to exactly 0
	forbid   bool    // some -Inf transitions (dense)
	labels   int     // sparse rows: most labels a row draws (0: 3)
}

func (s spec) String() string {
	tr := "dense"
	if s.tied {
		tr = "tied"
	}
	return fmt.Sprintf("M%d_A%d_%v_%s_ld%d", s.m, s.attrs, s.layout, tr, s.stride)
}

// randomModel builds a model with random weights of the given shape.
func randomModel(t testing.TB, r *rand.Rand, s spec) *Model {
	t.Helper()
	labels, attrs := sparse.NewDict(s.m), sparse.NewDict(s.attrs)
	for j := range s.m {
		labels.Add(fmt.Sprintf("L%d-%c", j, 'A'+j%26))
	}
	for a := range s.attrs {
		attrs.Add(fmt.Sprintf("w[%d]=a%d", a%3-1, a))
	}
	weight := func() float64 {
		if r.Float64() < s.zeros {
			return 0
		}
		return r.NormFloat64()
	}
	var state sparse.Weights
	var err error
	switch s.layout {
	case sparse.DenseRows:
		ld := s.stride
		if ld == 0 {
			ld = s.m
		}
		p := sparse.MakeParams(s.attrs * ld)
		for a := range s.attrs {
			for j := range s.m {
				p[a*ld+j] = weight()
			}
		}
		state, err = sparse.NewDenseStride(s.attrs, s.m, ld, p)
	case sparse.SparseRows:
		b, err := sparse.NewPatternBuilder(s.attrs, s.m)
		if err != nil {
			t.Fatal(err)
		}
		most := s.labels
		if most == 0 {
			most = 3
		}
		for a := range s.attrs {
			for range 1 + r.IntN(most) {
				if err := b.Add(int32(a), int32(r.IntN(s.m))); err != nil {
					t.Fatal(err)
				}
			}
		}
		pat, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		p := sparse.MakeParams(pat.NumPairs())
		for k := range p {
			p[k] = weight()
		}
		state, err = sparse.NewSparse(pat, p)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	start, end := make([]float64, s.m), make([]float64, s.m)
	for j := range s.m {
		start[j], end[j] = r.NormFloat64(), r.NormFloat64()
	}
	var tr *engine.Transitions
	if s.tied {
		seen := map[[2]int32]bool{}
		var exc []engine.Exception
		for range s.m * 2 {
			e := engine.Exception{From: int32(r.IntN(s.m)), To: int32(r.IntN(s.m)), Score: r.NormFloat64()}
			if !seen[[2]int32{e.From, e.To}] {
				seen[[2]int32{e.From, e.To}] = true
				exc = append(exc, e)
			}
		}
		tr, err = engine.NewTied(s.m, -0.5, exc, start, end)
	} else {
		score := make([]float64, s.m*s.m)
		for k := range score {
			score[k] = r.NormFloat64()
			if s.forbid && k%7 == 3 {
				score[k] = math.Inf(-1)
			}
		}
		tr, err = engine.NewTransitionsWith(s.m, score, start, end, engine.Options{Structure: engine.Dense})
	}
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(labels, attrs, state, tr, Meta{
		Spec:    format.Spec{Format: "conll", Template: "U00:%x[0,0]\nB\n", Columns: 2},
		Trainer: "lbfgs", Params: map[string]string{"c2": "1", "max_iterations": "100"},
		Stats: TrainStats{Iterations: 42, Loss: 1234.5, Seconds: 1.5, Sequences: 10, Tokens: 100, Reason: "converged"},
		Extra: map[string]string{"program": "simdcrf test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// randomSeq returns a sequence of random attribute ids, some with values.
func randomSeq(r *rand.Rand, numAttrs, T int, values bool) sparse.Seq {
	var b sparse.Builder
	for range T {
		for range r.IntN(6) {
			v := 1.0
			if values && r.IntN(3) == 0 {
				v = r.Float64() * 2
			}
			b.Add(int32(r.IntN(numAttrs)), v)
		}
		b.End(sparse.NoLabel)
	}
	s := b.Seq()
	// Copy out of the builder.
	return sparse.Seq{Ptr: slices.Clone(s.Ptr), IDs: slices.Clone(s.IDs), Vals: slices.Clone(s.Vals)}
}

var specs = []spec{
	{m: 5, attrs: 50, layout: sparse.DenseRows},
	{m: 5, attrs: 50, layout: sparse.DenseRows, stride: 8, forbid: true},
	{m: 22, attrs: 300, layout: sparse.DenseRows, tied: true},
	{m: 7, attrs: 80, layout: sparse.SparseRows},
	{m: 40, attrs: 200, layout: sparse.SparseRows, tied: true},
	{m: 1, attrs: 3, layout: sparse.DenseRows},
	{m: 3, attrs: 0, layout: sparse.SparseRows},
}

func dictStrings(d *sparse.Dict) []string {
	s := make([]string, d.Len())
	for i := range s {
		s[i] = d.String(int32(i))
	}
	return s
}

// sameModel compares two models field by field, weights bit for bit.
func sameModel(t *testing.T, a, b *Model) {
	t.Helper()
	if !slices.Equal(dictStrings(a.Labels), dictStrings(b.Labels)) || !slices.Equal(dictStrings(a.Attrs), dictStrings(b.Attrs)) {
		t.Fatal("dictionaries differ")
	}
	if a.State.Layout() != b.State.Layout() || a.State.NumParams() != b.State.NumParams() {
		t.Fatalf("state %v/%d vs %v/%d", a.State.Layout(), a.State.NumParams(), b.State.Layout(), b.State.NumParams())
	}
	pa, pb := params(a.State), params(b.State)
	for k := range pa {
		if math.Float64bits(pa[k]) != math.Float64bits(pb[k]) {
			t.Fatalf("weight %d: %v vs %v", k, pa[k], pb[k])
		}
	}
	M := a.Labels.Len()
	for at := range int32(a.State.NumAttrs()) {
		for j := range int32(M) {
			if a.State.Index(at, j) != b.State.Index(at, j) {
				t.Fatalf("index of (%d,%d) differs", at, j)
			}
		}
	}
	if a.Trans.Structure() != b.Trans.Structure() {
		t.Fatalf("structure %v vs %v", a.Trans.Structure(), b.Trans.Structure())
	}
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	for i := range M {
		if !same(a.Trans.Start(i), b.Trans.Start(i)) || !same(a.Trans.End(i), b.Trans.End(i)) {
			t.Fatalf("start/end %d differ", i)
		}
		for j := range M {
			if !same(a.Trans.Score(i, j), b.Trans.Score(i, j)) {
				t.Fatalf("transition %d→%d differs", i, j)
			}
		}
	}
	da, ea := a.Trans.Exceptions()
	db, eb := b.Trans.Exceptions()
	if !same(da, db) || !slices.Equal(ea, eb) {
		t.Fatal("exceptions differ")
	}
	if !reflect.DeepEqual(a.Meta, b.Meta) {
		t.Fatalf("meta %+v vs %+v", a.Meta, b.Meta)
	}
}

func TestRoundTrip(t *testing.T) {
	for i, s := range specs {
		t.Run(s.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 7))
			m := randomModel(t, r, s)
			path := t.TempDir() + "/m.crf"
			if err := m.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			l, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			sameModel(t, m, l)
			mp, unmap, err := Map(path)
			if err != nil {
				t.Fatal(err)
			}
			defer unmap()
			sameModel(t, m, mp)
			if s.attrs > 0 {
				ta, tb, tc := m.NewTagger(), l.NewTagger(), mp.NewTagger()
				o := Options{Prob: true, Marginals: true, NBest: 3}
				var oa, ob, oc Output
				for range 50 {
					seq := randomSeq(r, s.attrs, r.IntN(15), true)
					if err := ta.Tag(seq, o, &oa); err != nil {
						t.Fatal(err)
					}
					if err := tb.Tag(seq, o, &ob); err != nil {
						t.Fatal(err)
					}
					if err := tc.Tag(seq, o, &oc); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(oa, ob) || !reflect.DeepEqual(oa, oc) {
						t.Fatalf("outputs differ:\n%+v\n%+v\n%+v", oa, ob, oc)
					}
				}
			}
			// A mapped model is copy-on-write: changing its weights and
			// adding attributes works and leaves the file as it was.
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if w := mp.State.Params(); len(w) > 0 {
				w[0]++
			}
			mp.Attrs.Add("an attribute the file does not have")
			if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
				t.Fatalf("writing to the mapped model changed the file (%v)", err)
			}
			if err := unmap(); err != nil {
				t.Fatal(err)
			}
			if err := unmap(); err != nil {
				t.Fatalf("second unmap: %v", err)
			}
		})
	}
}

// TestDecodePath writes and loads with the big-endian code path (encoded
// copies instead of views) and checks that file and model are the same.
func TestDecodePath(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, s := range specs[:5] {
		m := randomModel(t, r, s)
		var native bytes.Buffer
		if _, err := m.WriteTo(&native); err != nil {
			t.Fatal(err)
		}
		littleEndian = false
		var decoded bytes.Buffer
		_, err := m.WriteTo(&decoded)
		var l *Model
		if err == nil {
			buf := alignedBuf(native.Len())
			copy(buf, native.Bytes())
			l, err = decode("native", buf)
		}
		littleEndian = true
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(native.Bytes(), decoded.Bytes()) {
			t.Fatalf("%v: encoded file differs from the native one", s)
		}
		sameModel(t, m, l)
	}
}

func TestFileIsDeterministicAndAligned(t *testing.T) {
	m := randomModel(t, rand.New(rand.NewPCG(4, 4)), specs[3])
	var a, b bytes.Buffer
	if _, err := m.WriteTo(&a); err != nil {
		t.Fatal(err)
	}
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two writes differ")
	}
	if a.Len()%align != 0 {
		t.Errorf("file size %d not a multiple of %d", a.Len(), align)
	}
	// The loaded state weights lie in the file buffer, 64-byte aligned.
	buf := alignedBuf(a.Len())
	copy(buf, a.Bytes())
	l, err := decode("x", buf)
	if err != nil {
		t.Fatal(err)
	}
	p := params(l.State)
	base := uintptr(unsafeAddr(buf))
	addr := uintptr(unsafeAddr(p))
	if addr < base || addr >= base+uintptr(len(buf)) || addr%align != 0 {
		t.Errorf("state weights at %#x, not a 64-byte aligned view into the buffer at %#x", addr, base)
	}
}

// TestTaggerBruteForce checks Viterbi, the probability, the marginals and
// the n-best list against enumeration of every labelling.
func TestTaggerBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, s := range []spec{
		{m: 3, attrs: 20, layout: sparse.DenseRows, forbid: true},
		{m: 4, attrs: 20, layout: sparse.SparseRows, tied: true},
	} {
		m := randomModel(t, r, s)
		tg := m.NewTagger()
		var out Output
		for range 30 {
			T := r.IntN(5)
			seq := randomSeq(r, s.attrs, T, true)
			if err := tg.Tag(seq, Options{Prob: true, Marginals: true, AllMarginals: true, NBest: 5}, &out); err != nil {
				t.Fatal(err)
			}
			emit := make([]float64, T*s.m)
			m.State.Score(emit, seq)
			type lab struct {
				y     []int32
				score float64
			}
			var all []lab
			y := make([]int32, T)
			for {
				sc, err := m.Trans.PathScore(emit, y, nil)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, lab{slices.Clone(y), sc})
				k := 0
				for k < T && y[k] == int32(s.m-1) {
					y[k] = 0
					k++
				}
				if k == T {
					break
				}
				y[k]++
			}
			z := math.Inf(-1)
			for _, l := range all {
				z = logAdd(z, l.score)
			}
			slices.SortStableFunc(all, func(a, b lab) int {
				if a.score > b.score {
					return -1
				}
				if a.score < b.score {
					return 1
				}
				return 0
			})
			if !near(out.Score, all[0].score) || !near(out.LogZ, z) || !near(out.Prob, math.Exp(all[0].score-z)) {
				t.Fatalf("score %v logZ %v prob %v; want %v %v %v", out.Score, out.LogZ, out.Prob, all[0].score, z, math.Exp(all[0].score-z))
			}
			if sc, _ := m.Trans.PathScore(emit, out.Labels, nil); !near(sc, out.Score) {
				t.Fatalf("Viterbi labels score %v, reported %v", sc, out.Score)
			}
			// marginal returns P(y_p = y) by enumeration.
			marginal := func(p int, y int32) float64 {
				marg := 0.0
				for _, l := range all {
					if l.y[p] == y {
						marg += math.Exp(l.score - z)
					}
				}
				return marg
			}
			for p := range T {
				if want := marginal(p, out.Labels[p]); !near(out.Marginals[p], want) {
					t.Fatalf("marginal %d: %v, want %v", p, out.Marginals[p], want)
				}
			}
			if len(out.AllMarginals) != T*s.m {
				t.Fatalf("%d marginals of all labels, want %d", len(out.AllMarginals), T*s.m)
			}
			for p := range T {
				for y := range int32(s.m) {
					if want := marginal(p, y); !near(out.AllMarginals[p*s.m+int(y)], want) {
						t.Fatalf("marginal of label %d at %d: %v, want %v", y, p, out.AllMarginals[p*s.m+int(y)], want)
					}
				}
			}
			possible := 0
			for _, l := range all {
				if !math.IsInf(l.score, -1) {
					possible++
				}
			}
			if len(out.NBest) != min(5, possible) {
				t.Fatalf("%d n-best paths, want %d", len(out.NBest), min(5, possible))
			}
			for k, p := range out.NBest {
				if !near(p.Score, all[k].score) || !near(p.Prob, math.Exp(all[k].score-z)) {
					t.Fatalf("path %d: score %v prob %v, want %v", k, p.Score, p.Prob, all[k].score)
				}
				if len(p.Marginals) != T {
					t.Fatalf("path %d: %d marginals for %d items", k, len(p.Marginals), T)
				}
				for q := range T {
					if want := marginal(q, p.Labels[q]); !near(p.Marginals[q], want) {
						t.Fatalf("path %d, marginal %d: %v, want %v", k, q, p.Marginals[q], want)
					}
				}
			}
			if T > 0 && !slices.Equal(out.NBest[0].Labels, out.Labels) {
				t.Fatal("first n-best path is not the Viterbi one")
			}
		}
	}
}

func logAdd(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	return max(a, b) + math.Log1p(math.Exp(-math.Abs(a-b)))
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*(1+math.Abs(b)) || (math.IsInf(a, -1) && math.IsInf(b, -1))
}

func TestTaggerConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	m := randomModel(t, r, specs[2])
	tg := m.NewTagger()
	seqs := make([]sparse.Seq, 200)
	want := make([][]int32, len(seqs))
	scores := make([]float64, len(seqs))
	for i := range seqs {
		seqs[i] = randomSeq(r, 300, 1+r.IntN(40), false)
		var err error
		if want[i], scores[i], err = tg.Viterbi(nil, seqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			var out Output
			for k := range 3 * len(seqs) {
				i := (k*7 + g) % len(seqs)
				if err := tg.Tag(seqs[i], Options{Prob: g%2 == 0, NBest: g % 3}, &out); err != nil {
					errs <- err
					return
				}
				if !slices.Equal(out.Labels, want[i]) || out.Score != scores[i] {
					errs <- fmt.Errorf("goroutine %d, sequence %d: different labelling", g, i)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestTaggerAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector empties sync.Pool at random (the test runs without -race)")
	}
	r := rand.New(rand.NewPCG(7, 7))
	m := randomModel(t, r, specs[2])
	tg := m.NewTagger()
	seq := randomSeq(r, 300, 30, false)
	dst := make([]int32, 0, 64)
	var err error
	if a := testing.AllocsPerRun(100, func() { dst, _, err = tg.Viterbi(dst, seq) }); a != 0 {
		t.Errorf("Viterbi: %v allocations per sequence", a)
	}
	var out Output
	o := Options{Prob: true, Marginals: true, AllMarginals: true, NBest: 4}
	tg.Tag(seq, o, &out)
	if a := testing.AllocsPerRun(100, func() { err = tg.Tag(seq, o, &out) }); a != 0 {
		t.Errorf("Tag with -p -i -l -n: %v allocations per sequence", a)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestTaggerRejectsBadSeq(t *testing.T) {
	m := randomModel(t, rand.New(rand.NewPCG(8, 8)), specs[0])
	tg := m.NewTagger()
	bad := sparse.Seq{Ptr: []int32{0, 1}, IDs: []int32{50}} // 50 attributes: ids 0..49
	if _, _, err := tg.Viterbi(nil, bad); err == nil {
		t.Error("out-of-range attribute id accepted")
	}
	// Gold labels outside the model's labels are ignored, not an error.
	ok := sparse.Seq{Ptr: []int32{0, 1}, IDs: []int32{3}, Labels: []int32{-1}}
	if _, _, err := tg.Viterbi(nil, ok); err != nil {
		t.Error(err)
	}
	if err := tg.Tag(ok, Options{NBest: -1}, &Output{}); err == nil {
		t.Error("negative n-best accepted")
	}
}

func TestEncode(t *testing.T) {
	m := randomModel(t, rand.New(rand.NewPCG(9, 9)), specs[0])
	var b sparse.Builder
	names := [][]byte{[]byte("w[-1]=a0"), []byte("unknown"), []byte("w[0]=a1"), []byte("w[1]=a5"), []byte("nope")}
	ptr := []int32{0, 2, 2, 5}
	s := m.Encode(&b, ptr, names, nil)
	if !slices.Equal(s.Ptr, []int32{0, 1, 1, 3}) || !slices.Equal(s.IDs, []int32{0, 1, 5}) || s.Vals != nil || s.Labels != nil {
		t.Fatalf("got %+v", s)
	}
	s = m.Encode(&b, ptr, names, []float64{0.5, 9, 1, 2, 9})
	if !slices.Equal(s.Vals, []float64{0.5, 1, 2}) {
		t.Fatalf("values %v", s.Vals)
	}
	if a := testing.AllocsPerRun(100, func() { m.Encode(&b, ptr, names, nil) }); a != 0 {
		t.Errorf("Encode: %v allocations", a)
	}
}

// TestEncodeLong checks Encode on sequences whose names run over several
// lookup chunks, with empty positions at the start, the end and across
// chunk boundaries, against name-by-name lookups.
func TestEncodeLong(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	m := randomModel(t, r, specs[0])
	var b sparse.Builder
	for _, T := range []int{1, 2, 7, 40, 300} {
		ptr := []int32{0}
		var names [][]byte
		var vals []float64
		for pos := range T {
			k := r.IntN(30)
			if pos == 0 || pos == T-1 || r.IntN(5) == 0 {
				k = 0
			}
			for range k {
				if r.IntN(3) == 0 {
					names = append(names, []byte(fmt.Sprintf("absent%d", r.IntN(1000))))
				} else {
					names = append(names, []byte(m.Attrs.String(int32(r.IntN(m.Attrs.Len())))))
				}
				vals = append(vals, float64(r.IntN(4))/2)
			}
			ptr = append(ptr, int32(len(names)))
		}
		for _, v := range [][]float64{nil, vals} {
			var want sparse.Builder
			for pos := range T {
				for f := ptr[pos]; f < ptr[pos+1]; f++ {
					if id, ok := m.Attrs.LookupBytes(names[f]); ok {
						x := 1.0
						if v != nil {
							x = v[f]
						}
						want.Add(id, x)
					}
				}
				want.End(sparse.NoLabel)
			}
			got, w := m.Encode(&b, ptr, names, v), want.Seq()
			if !slices.Equal(got.Ptr, w.Ptr) || !slices.Equal(got.IDs, w.IDs) || !slices.Equal(got.Vals, w.Vals) || got.Labels != nil {
				t.Fatalf("T=%d values %v: got %+v, want %+v", T, v != nil, got, w)
			}
		}
	}
	if s := m.Encode(&b, []int32{0}, nil, nil); s.Len() != 0 {
		t.Errorf("no positions: got %+v", s)
	}
}

func TestNewChecks(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	m := randomModel(t, r, specs[0])
	other := randomModel(t, r, spec{m: 4, attrs: 50, layout: sparse.DenseRows})
	if _, err := New(m.Labels, m.Attrs, m.State, other.Trans, m.Meta); err == nil {
		t.Error("transitions over 4 labels accepted for 5")
	}
	if _, err := New(other.Labels, m.Attrs, m.State, m.Trans, m.Meta); err == nil {
		t.Error("4 labels accepted for 5-label weights")
	}
	few := sparse.NewDict(0)
	few.Add("x")
	if _, err := New(m.Labels, few, m.State, m.Trans, m.Meta); err == nil {
		t.Error("1 attribute accepted for 50 rows")
	}
	p := slices.Clone(params(m.State))
	p[17] = math.NaN()
	nan, _ := m.State.WithParams(p)
	if _, err := New(m.Labels, m.Attrs, nan, m.Trans, m.Meta); err == nil {
		t.Error("NaN weight accepted")
	}
	if err := (&Model{}).WriteFile(t.TempDir() + "/x"); err == nil {
		t.Error("empty model written")
	}
}

func TestDropZeros(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, s := range []spec{
		{m: 6, attrs: 400, layout: sparse.DenseRows, zeros: 0.7},
		{m: 6, attrs: 400, layout: sparse.DenseRows, stride: 8, zeros: 0.7},
		{m: 30, attrs: 400, layout: sparse.SparseRows, zeros: 0.6, tied: true},
	} {
		m := randomModel(t, r, s)
		d, attrs, weights, err := m.DropZeros()
		if err != nil {
			t.Fatal(err)
		}
		if attrs == 0 || weights == 0 || d.Attrs.Len() != m.Attrs.Len()-attrs || d.State.Layout() != m.State.Layout() {
			t.Fatalf("%v: dropped %d attributes, %d weights; %d → %d attributes", s, attrs, weights, m.Attrs.Len(), d.Attrs.Len())
		}
		if s.layout == sparse.SparseRows && d.State.NumParams() != m.State.NumParams()-weights {
			t.Fatalf("%d → %d weights, dropped %d", m.State.NumParams(), d.State.NumParams(), weights)
		}
		for _, v := range params(d.State) {
			if v == 0 && s.layout == sparse.SparseRows {
				t.Fatal("zero weight kept")
			}
		}
		// Tag the same named sequences with both: identical results.
		ta, tb := m.NewTagger(), d.NewTagger()
		var ba, bb sparse.Builder
		for range 50 {
			T := 1 + r.IntN(20)
			ptr := []int32{0}
			var names [][]byte
			for range T {
				for range r.IntN(6) {
					names = append(names, []byte(m.Attrs.String(int32(r.IntN(s.attrs)))))
				}
				ptr = append(ptr, int32(len(names)))
			}
			ya, sa, err := ta.Viterbi(nil, m.Encode(&ba, ptr, names, nil))
			if err != nil {
				t.Fatal(err)
			}
			yb, sb, err := tb.Viterbi(nil, d.Encode(&bb, ptr, names, nil))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ya, yb) || sa != sb {
				t.Fatalf("%v: pruned model tags differently (%v vs %v)", s, sa, sb)
			}
		}
		// No zeros left to drop.
		if _, a, w, _ := d.DropZeros(); a != 0 || (w != 0 && s.layout == sparse.SparseRows) {
			t.Errorf("second DropZeros dropped %d attributes, %d weights", a, w)
		}
	}
}

// TestOlderAttrSection loads files with the attribute dictionary in the
// varint section that files had before the flat one (secAttrs).
func TestOlderAttrSection(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, s := range specs[:5] {
		m := randomModel(t, r, s)
		testHookVarintAttrs = true
		var old bytes.Buffer
		_, err := m.WriteTo(&old)
		testHookVarintAttrs = false
		if err != nil {
			t.Fatal(err)
		}
		buf := alignedBuf(old.Len())
		copy(buf, old.Bytes())
		l, err := decode("old", buf)
		if err != nil {
			t.Fatal(err)
		}
		sameModel(t, m, l)
		for id := range int32(l.Attrs.Len()) {
			if got, ok := l.Attrs.Lookup(m.Attrs.String(id)); !ok || got != id {
				t.Fatalf("%v: attribute %d looks up as %d, %v", s, id, got, ok)
			}
		}
	}
}

// TestHotRowsScore checks the tagger's scoring of sparse-row models (wide
// rows dense, through the gather kernel) against the layout's own Score,
// with feature values, for label counts on both sides of a vector width.
func TestHotRowsScore(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, m := range []int{2, 7, 22, 45} {
		const attrs = 120
		b, _ := sparse.NewPatternBuilder(attrs, m)
		for a := range attrs {
			n := 1 + r.IntN(m) // narrow and wide rows, one-label and empty ones
			switch r.IntN(4) {
			case 0:
				n = 0
			case 1:
				n = 1
			}
			for range n {
				if err := b.Add(int32(a), int32(r.IntN(m))); err != nil {
					t.Fatal(err)
				}
			}
		}
		p, _ := b.Build()
		w := make([]float64, p.NumPairs())
		for k := range w {
			w[k] = r.NormFloat64()
		}
		sp, err := sparse.NewSparse(p, w)
		if err != nil {
			t.Fatal(err)
		}
		hot := newHotRows(sp)
		if hot == nil {
			t.Fatalf("M=%d: no wide rows", m)
		}
		var wk work
		for range 30 {
			seq := randomSeq(r, attrs, r.IntN(12), true)
			want := make([]float64, seq.Len()*m)
			sp.Score(want, seq)
			got := make([]float64, seq.Len()*m)
			hot.score(&wk, sp, got, seq, nil)
			for k := range want {
				if math.Abs(got[k]-want[k]) > 1e-12*(1+math.Abs(want[k])) {
					t.Fatalf("M=%d: score %d = %v, want %v", m, k, got[k], want[k])
				}
			}
		}
	}
}
