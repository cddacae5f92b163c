package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"testing"
)

// sameBits reports where a and b differ, comparing float64s by their bits
// (so -0 ≠ +0), through pointers, slices and the unexported fields of
// structs; "" when they do not.
func sameBits(a, b reflect.Value, path string) string {
	if a.Kind() != b.Kind() {
		return path + ": kinds differ"
	}
	if a.Type() == reflect.TypeFor[atomic.Pointer[pairIndex]]() {
		return "" // the restricted path's index, made on first use from the exception pairs
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.Type() == reflect.TypeFor[*lazyForms]() {
			return "" // made at once or on first use: dense() below makes them
		}
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": one is nil"
			}
			return ""
		}
		return sameBits(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if d := sameBits(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: lengths %d and %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := sameBits(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Sprintf("%s: %v and %v", path, a.Float(), b.Float())
		}
	case reflect.Int, reflect.Int32:
		if a.Int() != b.Int() {
			return fmt.Sprintf("%s: %d and %d", path, a.Int(), b.Int())
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return path + ": bools differ"
		}
	default:
		return path + ": unexpected kind " + a.Kind().String()
	}
	return ""
}

func checkSameTransitions(t *testing.T, what string, got, want *Transitions) {
	t.Helper()
	// The dense forms too: a Tied one makes them on first use.
	got.dense()
	want.dense()
	if d := sameBits(reflect.ValueOf(got), reflect.ValueOf(want), "Transitions"); d != "" {
		t.Fatalf("%s: differs from a new Transitions at %s", what, d)
	}
}

// randomScores returns n scores: normal with the given spread, some -Inf
// (forbid), some equal to def.
func randomScores(r *rand.Rand, n int, spread, forbid, def float64) []float64 {
	s := make([]float64, n)
	for k := range s {
		switch u := r.Float64(); {
		case u < forbid:
			s[k] = math.Inf(-1)
		case u < forbid+0.1:
			s[k] = def
		default:
			s[k] = r.NormFloat64() * spread
		}
	}
	return s
}

// TestSetScores checks that SetScores leaves a Dense Transitions bit for
// bit as NewTransitionsWith makes it from the same scores (through -Inf
// entries, the log-domain range and nil start or end), and that it does
// not allocate.
func TestSetScores(t *testing.T) {
	r := rand.New(rand.NewPCG(40, 41))
	for trial := range 100 {
		M := 1 + r.IntN(40)
		spread := []float64{1, 3, 200}[trial%3] // 200: beyond scaledRange
		tr, err := NewTransitionsWith(M, randomScores(r, M*M, 1, 0.1, 0), nil, randomScores(r, M, 1, 0, 0), Options{Structure: Dense})
		if err != nil {
			t.Fatal(err)
		}
		for step := range 3 {
			score := randomScores(r, M*M, spread, 0.2, 0)
			start, end := randomScores(r, M, spread, 0.1, 0), randomScores(r, M, spread, 0.1, 0)
			if step == 1 {
				start = nil
			}
			if step == 2 {
				end = nil
			}
			if err := tr.SetScores(score, start, end); err != nil {
				t.Fatal(err)
			}
			want, err := NewTransitionsWith(M, score, start, end, Options{Structure: Dense})
			if err != nil {
				t.Fatal(err)
			}
			checkSameTransitions(t, fmt.Sprintf("trial %d step %d (M=%d)", trial, step, M), tr, want)
		}
	}
	M := 30
	score, start, end := randomScores(r, M*M, 1, 0.1, 0), randomScores(r, M, 1, 0, 0), randomScores(r, M, 1, 0, 0)
	tr, _ := NewTransitionsWith(M, score, start, end, Options{Structure: Dense})
	if a := testing.AllocsPerRun(20, func() { tr.SetScores(score, start, end) }); a != 0 {
		t.Errorf("SetScores allocates %v times per call", a)
	}
}

// TestSetTied checks that SetTied leaves a Tied Transitions bit for bit as
// NewTied makes it from the same exceptions with the new scores, and that
// it does not allocate.
func TestSetTied(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 43))
	for trial := range 100 {
		M := 1 + r.IntN(40)
		if trial%10 == 0 {
			M = 64 + r.IntN(100)
		}
		def0 := []float64{0, math.Inf(-1), 1.5, -3}[trial%4]
		exc := randomTied(r, M, 1+r.IntN(3*M), def0)
		tr, err := NewTied(M, def0, exc, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for step := range 3 {
			def := []float64{0, math.Inf(-1), 2.5, -1}[(trial+step)%4]
			spread := []float64{1, 3, 200}[(trial+step)%3]
			scores := randomScores(r, len(exc), spread, 0.1, def)
			if math.IsInf(def, -1) {
				// Keep a labelling possible.
				for k := range scores {
					if math.IsInf(scores[k], -1) {
						scores[k] = 0
					}
				}
			}
			start, end := randomScores(r, M, spread, 0.1, 0), randomScores(r, M, spread, 0.1, 0)
			if step == 1 {
				start, end = nil, nil
			}
			if err := tr.SetTied(def, scores, start, end); err != nil {
				t.Fatal(err)
			}
			fresh := make([]Exception, len(exc))
			for k, e := range exc {
				fresh[k] = Exception{e.From, e.To, scores[k]}
			}
			want, err := NewTied(M, def, fresh, start, end)
			if err != nil {
				t.Fatal(err)
			}
			checkSameTransitions(t, fmt.Sprintf("trial %d step %d (M=%d, %d exceptions)", trial, step, M, len(exc)), tr, want)
			if trial == 0 && step == 2 {
				if a := testing.AllocsPerRun(20, func() { tr.SetTied(def, scores, start, end); tr.dense() }); a != 0 {
					t.Errorf("SetTied and remaking the dense forms allocate %v times per call", a)
				}
			}
		}
	}
	// A Tied structure made from a matrix keeps the exceptions it found.
	M := 20
	score := make([]float64, M*M)
	for k := range score {
		if r.IntN(10) == 0 {
			score[k] = r.NormFloat64()
		}
	}
	tr, err := NewTransitions(M, score, nil, nil)
	if err != nil || tr.Structure() != Tied {
		t.Fatalf("%v, structure %v", err, tr.Structure())
	}
	def, exc := tr.Exceptions()
	exc = append([]Exception(nil), exc...)
	scores := make([]float64, len(exc))
	for k := range exc {
		scores[k] = r.NormFloat64()
		exc[k].Score = scores[k]
	}
	start := randomScores(r, M, 1, 0, 0)
	if err := tr.SetTied(def+1, scores, start, nil); err != nil {
		t.Fatal(err)
	}
	want, _ := NewTied(M, def+1, exc, start, nil)
	checkSameTransitions(t, "from a matrix", tr, want)
	if a := testing.AllocsPerRun(20, func() { tr.SetTied(def, scores, start, nil) }); a != 0 {
		t.Errorf("SetTied allocates %v times per call", a)
	}
}

// TestSetErrors checks that bad scores and the wrong structure are
// rejected and leave the Transitions as they were.
func TestSetErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 45))
	M := 5
	score, start := randomScores(r, M*M, 1, 0, 0), randomScores(r, M, 1, 0, 0)
	dense, _ := NewTransitionsWith(M, score, start, nil, Options{Structure: Dense})
	wantDense, _ := NewTransitionsWith(M, score, start, nil, Options{Structure: Dense})
	exc := randomTied(r, M, 6, 0)
	tied, _ := NewTied(M, 0.5, exc, start, nil)
	wantTied, _ := NewTied(M, 0.5, exc, start, nil)
	scores := make([]float64, len(exc))
	bad := func(k int, v float64) []float64 {
		s := randomScores(r, M*M, 1, 0, 0)
		s[k] = v
		return s
	}
	for name, err := range map[string]error{
		"dense NaN":        dense.SetScores(bad(7, math.NaN()), nil, nil),
		"dense +Inf":       dense.SetScores(bad(0, math.Inf(1)), nil, nil),
		"dense short":      dense.SetScores(score[:M], nil, nil),
		"dense start NaN":  dense.SetScores(score, bad(2, math.NaN())[:M], nil),
		"dense end short":  dense.SetScores(score, nil, start[:2]),
		"dense SetTied":    dense.SetTied(0, nil, nil, nil),
		"tied SetScores":   tied.SetScores(score, nil, nil),
		"tied default NaN": tied.SetTied(math.NaN(), scores, nil, nil),
		"tied +Inf":        tied.SetTied(0, bad(len(exc)-1, math.Inf(1))[:len(exc)], nil, nil),
		"tied count":       tied.SetTied(0, scores[1:], nil, nil),
		"tied end +Inf":    tied.SetTied(0, scores, nil, bad(M-1, math.Inf(1))[:M]),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	checkSameTransitions(t, "dense after errors", dense, wantDense)
	checkSameTransitions(t, "tied after errors", tied, wantTied)
}
