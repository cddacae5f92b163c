package simdcrf

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// small trains a model on synthetic data (M = 5).
func small(t *testing.T, o Options) (*Model, []labelled) {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 5))
	if o.Params == nil {
		o.Params = map[string]string{"max_iterations": "15"}
	}
	return trainItems(t, o, synthetic(r, 120), nil), synthetic(r, 40)
}

// TestAgainstEnumeration: on short sequences, the probabilities of all
// M^T labellings sum to 1; the marginals are their sums by label; Tag is
// the most probable one; NBest lists them in order with their
// probabilities, its first entry Tag's with Probability's value.
func TestAgainstEnumeration(t *testing.T) {
	for _, o := range []Options{{}, {Params: map[string]string{"max_iterations": "15", "prune.max": "2"}},
		{Params: map[string]string{"max_iterations": "15", "order": "2", "prune.max": "3"}},
		{Params: map[string]string{"max_iterations": "15", "order": "2", "prune.max": "4", "prune.by": "first"}}} {
		m, test := small(t, o)
		g := m.Tagger()
		labels := m.Labels()
		M := len(labels)
		checked := 0
		for _, q := range test {
			T := len(q.x)
			if T > 4 {
				continue
			}
			checked++
			n := 1
			for range T {
				n *= M
			}
			type lp struct {
				y []string
				p float64
			}
			var all []lp
			sum := 0.0
			marg := make([][]float64, T)
			for i := range marg {
				marg[i] = make([]float64, M)
			}
			for code := range n {
				y := make([]string, T)
				ids := make([]int, T)
				for i, c := 0, code; i < T; i, c = i+1, c/M {
					ids[i], y[i] = c%M, labels[c%M]
				}
				p, err := g.Probability(q.x, y)
				if err != nil {
					t.Fatal(err)
				}
				sum += p
				all = append(all, lp{y, p})
				for i, j := range ids {
					marg[i][j] += p
				}
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("%v: probabilities sum to %v", o.Params, sum)
			}
			got, err := g.Marginals(q.x)
			if err != nil {
				t.Fatal(err)
			}
			for i := range T {
				for j := range M {
					if math.Abs(got[i][j]-marg[i][j]) > 1e-9 {
						t.Fatalf("%v: marginal [%d][%d] %v, enumeration %v", o.Params, i, j, got[i][j], marg[i][j])
					}
				}
			}
			slices.SortStableFunc(all, func(a, b lp) int {
				switch {
				case a.p > b.p:
					return -1
				case a.p < b.p:
					return 1
				}
				return 0
			})
			best, err := g.Tag(q.x)
			if err != nil {
				t.Fatal(err)
			}
			if p, _ := g.Probability(q.x, best); math.Abs(p-all[0].p) > 1e-12 {
				t.Fatalf("%v: Tag %v has p %v, the best labelling %v", o.Params, best, p, all[0].p)
			}
			k := min(5, n)
			nb, err := g.NBest(q.x, k)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(nb[0].Labels, best) {
				t.Fatalf("%v: NBest first %v, Tag %v", o.Params, nb[0].Labels, best)
			}
			for i, l := range nb {
				p, err := g.Probability(q.x, l.Labels)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(p-l.Prob) > 1e-12 || math.Abs(l.Prob-all[i].p) > 1e-12 {
					t.Fatalf("%v: NBest %d: %v p %v, Probability %v, enumeration %v", o.Params, i, l.Labels, l.Prob, p, all[i].p)
				}
			}
		}
		if checked < 10 {
			t.Fatalf("only %d short sequences", checked)
		}
	}
}

// TestEmpty: an empty sequence has an empty labelling, of probability 1.
func TestEmpty(t *testing.T) {
	m, _ := small(t, Options{})
	g := m.Tagger()
	if y, err := g.Tag(nil); err != nil || y == nil || len(y) != 0 {
		t.Errorf("Tag(nil) = %v, %v", y, err)
	}
	if mg, err := g.Marginals(nil); err != nil || mg == nil || len(mg) != 0 {
		t.Errorf("Marginals(nil) = %v, %v", mg, err)
	}
	if p, err := g.Probability(nil, nil); err != nil || p != 1 {
		t.Errorf("Probability(nil, nil) = %v, %v", p, err)
	}
	if nb, err := g.NBest(nil, 2); err != nil || len(nb) != 1 || len(nb[0].Labels) != 0 || nb[0].Prob != 1 {
		t.Errorf("NBest(nil, 2) = %v, %v", nb, err)
	}
}

// TestUnknownAttributes: attributes the model does not know change nothing.
func TestUnknownAttributes(t *testing.T) {
	m, test := small(t, Options{})
	g := m.Tagger()
	for _, q := range test {
		want, err := g.Tag(q.x)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]Item, len(q.x))
		for i, it := range q.x {
			x[i] = append(Binary("never seen", "nor this"), it...)
		}
		got, err := g.Tag(x)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("with unknown attributes %v (%v), without %v", got, err, want)
		}
	}
}

// TestBadInput: every kind of bad input is an error that names the
// sequence (its index among those appended) and the position, not a panic.
func TestBadInput(t *testing.T) {
	x := []Item{Binary("a"), Binary("b")}
	y := []string{"A", "B"}
	nan := []Item{Binary("a"), {{Name: "b", Value: math.NaN()}}}
	inf := []Item{{{Name: "a", Value: math.Inf(1)}}}
	for _, c := range []struct {
		name string
		do   func(tr *Trainer) error
		want string
	}{
		{"lengths", func(tr *Trainer) error { return tr.Append(x, y[:1]) }, "sequence 1: 2 items but 1 labels"},
		{"no labels", func(tr *Trainer) error { return tr.Append(x, nil) }, "sequence 1: no labels"},
		{"empty label", func(tr *Trainer) error { return tr.Append(x, []string{"A", ""}) }, "sequence 1, position 1: empty label"},
		{"NaN", func(tr *Trainer) error { return tr.Append(nan, y) }, "sequence 1, position 1: attribute \"b\" has value NaN"},
		{"Inf", func(tr *Trainer) error { return tr.Append(inf, y[:1]) }, "sequence 1, position 0: attribute \"a\" has value +Inf"},
		{"holdout lengths", func(tr *Trainer) error { return tr.AppendHoldout(x, y[:1]) }, "holdout sequence 0: 2 items but 1 labels"},
		{"holdout NaN", func(tr *Trainer) error { return tr.AppendHoldout(nan, y) }, "holdout sequence 0, position 1"},
		{"tokens", func(tr *Trainer) error { return tr.AppendTokens([][]string{{"a"}}, []string{"A"}) }, "needs Options.Template or Options.Features"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := NewTrainer(Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Append(x, y); err != nil {
				t.Fatal(err)
			}
			err = c.do(tr)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one with %q", err, c.want)
			}
			var se *SequenceError
			if strings.Contains(c.want, "sequence") && !errors.As(err, &se) {
				t.Errorf("%T is not a *SequenceError", err)
			}
		})
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Algorithm: "newton"}, `unknown algorithm "newton"`},
		{Options{Params: map[string]string{"c3": "1"}}, "c3"},
		{Options{Params: map[string]string{"c2": "-1"}}, "c2=-1"},
		{Options{Params: map[string]string{"max_iterations": "many"}}, "max_iterations"},
		{Options{Params: map[string]string{"prune.threshold": "2"}}, "prune.threshold"},
		{Options{Threads: -1}, "Options.Threads"},
		{Options{ModelFormat: "wapiti"}, "Options.ModelFormat"},
		{Options{Template: "U00:%x[0\n"}, "Options.Template"},
		{Options{Features: "syntax"}, "syntax"},
	} {
		if _, err := NewTrainer(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one with %q", c.o, err, c.want)
		}
	}
	tr, _ := NewTrainer(Options{})
	if _, err := tr.Train(context.Background()); err == nil || !strings.Contains(err.Error(), "no training sequences") {
		t.Errorf("empty training set: %v", err)
	}
	if err := tr.Append(x, y); err == nil || !strings.Contains(err.Error(), "after Train") {
		t.Errorf("Append after Train: %v", err)
	}
	tr, _ = NewTrainer(Options{Features: "pos"})
	if err := tr.Append(x, y); err == nil || !strings.Contains(err.Error(), "AppendTokens") {
		t.Errorf("Append to a token trainer: %v", err)
	}
	if err := tr.AppendTokens([][]string{{"a"}, {"b", "c"}}, y); err == nil || !strings.Contains(err.Error(), "sequence 0, position 1: 2 columns") {
		t.Errorf("ragged tokens: %v", err)
	}
	if err := tr.AppendTokens([][]string{{"a"}, {"b"}}, []string{"A", ""}); err == nil || !strings.Contains(err.Error(), "sequence 1, position 1: empty label") {
		t.Errorf("token with an empty label: %v", err)
	}
	if err := tr.AppendTokens([][]string{{"a", "x"}}, []string{"A"}); err != nil {
		t.Fatal(err)
	}
	if err := tr.AppendTokens([][]string{{"a"}}, []string{"A"}); err == nil || !strings.Contains(err.Error(), "sequence 3: 1 observation columns, but the sequences before have 2") {
		t.Errorf("tokens of another width: %v", err)
	}

	m, _ := small(t, Options{})
	g := m.Tagger()
	for _, c := range []struct {
		name string
		do   func() error
		want string
	}{
		{"Tag NaN", func() error { _, err := g.Tag(nan); return err }, "position 1: attribute \"b\" has value NaN"},
		{"Marginals Inf", func() error { _, err := g.Marginals(inf); return err }, "position 0"},
		{"NBest k", func() error { _, err := g.NBest(x, 0); return err }, "k = 0"},
		{"NBest NaN", func() error { _, err := g.NBest(nan, 2); return err }, "position 1"},
		{"Probability lengths", func() error { _, err := g.Probability(x, y[:1]); return err }, "2 items but 1 labels"},
		{"Probability unknown label", func() error { _, err := g.Probability(x, []string{"A", "Z"}); return err }, `position 1: label "Z" is not one of the model's`},
		{"TagTokens", func() error { _, err := g.TagTokens([][]string{{"a"}}); return err }, "reads attributes"},
	} {
		if err := c.do(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}

// TestRoundTrip: a model saved in either format and loaded back tags and
// scores alike; a model CRFsuite's format cannot hold is refused with the
// reason, leaving no file; a failed save leaves the old file whole.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []Options{{}, {ModelFormat: "crfsuite"}} {
		m, test := small(t, o)
		path := filepath.Join(dir, "m.simdcrf")
		save := m.Save
		if o.ModelFormat == "crfsuite" {
			path, save = filepath.Join(dir, "m.crfsuite"), m.SaveCRFsuite
		}
		if err := save(path); err != nil {
			t.Fatal(err)
		}
		back, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.Labels(), m.Labels()) {
			t.Fatalf("labels %v, saved %v", back.Labels(), m.Labels())
		}
		for _, q := range test {
			a, err1 := m.Tagger().Marginals(q.x)
			b, err2 := back.Tagger().Marginals(q.x)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			for i := range a {
				for j := range a[i] {
					if math.Abs(a[i][j]-b[i][j]) > 1e-12 {
						t.Fatalf("%s: marginal %v after the round trip, %v before", path, b[i][j], a[i][j])
					}
				}
			}
		}
	}
	m, _ := small(t, Options{})
	p := filepath.Join(dir, "no.crfsuite")
	if err := m.SaveCRFsuite(p); err == nil || !strings.Contains(err.Error(), "start") {
		t.Errorf("SaveCRFsuite with start and end weights: %v", err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("a refused model left %s (%v)", p, err)
	}
	old := filepath.Join(dir, "m.simdcrf")
	before, _ := os.ReadFile(old)
	if err := m.Save(filepath.Join(dir, "missing", "m.simdcrf")); err == nil {
		t.Error("Save into a missing directory: no error")
	}
	if err := os.Chmod(dir, 0o500); err == nil && os.Geteuid() != 0 {
		if err := m.Save(old); err == nil {
			t.Error("Save into a read-only directory: no error")
		}
		os.Chmod(dir, 0o700)
	}
	if after, _ := os.ReadFile(old); string(after) != string(before) {
		t.Error("a failed Save changed the file")
	}
	if _, err := Load(filepath.Join(dir, "missing.model")); err == nil {
		t.Error("Load of a missing file: no error")
	}
}

// TestConcurrentTagging: many goroutines share one Tagger and get what one
// goroutine gets (run under -race by CI).
func TestConcurrentTagging(t *testing.T) {
	m, test := small(t, Options{})
	g := m.Tagger()
	want := make([][]string, len(test))
	for i, q := range test {
		var err error
		if want[i], err = g.Tag(q.x); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 20 {
				i := (w*7 + r) % len(test)
				got, err := g.Tag(test[i].x)
				if err == nil && !slices.Equal(got, want[i]) {
					err = errors.New("labels differ from a lone call's")
				}
				if err == nil {
					_, err = g.Marginals(test[i].x)
				}
				if err == nil {
					_, err = g.NBest(test[i].x, 3)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

var raceEnabled bool

// TestTagAllocs: once warm, a call allocates only what it returns.
func TestTagAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m, test := small(t, Options{})
	g := m.Tagger()
	x := test[0].x
	y, _ := g.Tag(x)
	if n := testing.AllocsPerRun(100, func() { g.Tag(x) }); n > 1 {
		t.Errorf("Tag: %v allocations, want 1 (the labels)", n)
	}
	if n := testing.AllocsPerRun(100, func() { g.Probability(x, y) }); n > 0 {
		t.Errorf("Probability: %v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { g.Marginals(x) }); n > 2 {
		t.Errorf("Marginals: %v allocations, want 2", n)
	}
}

// TestCancel: cancelled after the second iteration, Train returns the model
// of that iteration and the context's error.
func TestCancel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var iters []int
	tr, err := NewTrainer(Options{Threads: 1, Progress: func(p Progress) {
		iters = append(iters, p.Iteration)
		if !math.IsNaN(p.Holdout) || p.Loss <= 0 || p.Seconds < 0 {
			t.Errorf("progress %+v", p)
		}
		if p.Iteration == 2 {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range synthetic(r, 100) {
		if err := tr.Append(s.x, s.y); err != nil {
			t.Fatal(err)
		}
	}
	m, err := tr.Train(ctx)
	if !errors.Is(err, context.Canceled) || m == nil {
		t.Fatalf("Train: %v, %v", m, err)
	}
	if !slices.Equal(iters, []int{1, 2}) || m.m.Meta.Stats.Iterations != 2 || !m.m.Meta.Stats.Interrupted {
		t.Errorf("iterations %v, stats %+v", iters, m.m.Meta.Stats)
	}
	if _, err := m.Tagger().Tag(synthetic(r, 1)[0].x); err != nil {
		t.Error(err)
	}
}

// TestHoldoutProgress: with holdout sequences, Progress reports their item
// accuracy.
func TestHoldoutProgress(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	var last Progress
	tr, err := NewTrainer(Options{Params: map[string]string{"max_iterations": "10"}, Progress: func(p Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range synthetic(r, 100) {
		tr.Append(s.x, s.y)
	}
	for _, s := range synthetic(r, 20) {
		tr.AppendHoldout(s.x, s.y)
	}
	if _, err := tr.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if last.Iteration != 10 || !(last.Holdout > 0.5 && last.Holdout <= 1) {
		t.Errorf("last progress %+v", last)
	}
}
