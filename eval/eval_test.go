package eval

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func fields(s string) []string { return strings.Fields(s) }

type chunkCase struct {
	name                   string
	gold, pred             []string // sequences, space-separated labels
	nGold, nPred, nCorrect int
}

// The expected counts are worked out by hand from conlleval's rules.
var chunkCases = []chunkCase{
	{"IOB2 type error", []string{"B-NP I-NP O B-VP"}, []string{"B-NP I-NP O B-NP"}, 2, 2, 1},
	// An I after O (or at the start of a sentence) starts a chunk (IOB1).
	{"IOB1 I after O", []string{"I-NP I-NP O I-VP"}, []string{"B-NP I-NP O I-VP"}, 2, 2, 2},
	// A change of type inside I tags starts a new chunk.
	{"type change", []string{"B-NP I-NP I-VP"}, []string{"B-NP I-NP I-NP"}, 2, 1, 0},
	// A chunk open at the end of a sentence ends there, and the next
	// sentence's leading I starts a new one.
	{"sentence ends", []string{"O B-NP I-NP", "I-NP O"}, []string{"O B-NP I-NP", "I-NP O"}, 2, 2, 2},
	{"sentence end wrong type", []string{"B-NP", "I-NP"}, []string{"B-NP", "I-VP"}, 2, 2, 1},
	// Split chunk: the ends disagree at token 1.
	{"split", []string{"B-NP I-NP"}, []string{"B-NP B-NP"}, 1, 2, 0},
	// Over-long prediction.
	{"too long", []string{"B-NP O"}, []string{"B-NP I-NP"}, 1, 1, 0},
	{"IOE", []string{"I-NP E-NP I-NP E-NP"}, []string{"I-NP I-NP I-NP E-NP"}, 2, 1, 0},
	{"IOE right", []string{"I-NP E-NP E-NP O"}, []string{"I-NP E-NP E-NP O"}, 2, 2, 2},
	{"BIOES", []string{"S-PER S-PER B-LOC E-LOC O"}, []string{"B-PER E-PER B-LOC E-LOC O"}, 3, 2, 1},
	{"BILOU", []string{"U-PER U-PER B-LOC L-LOC O"}, []string{"B-PER L-PER B-LOC L-LOC O"}, 3, 2, 1},
	{"BIOES E then B", []string{"B-X E-X B-X E-X"}, []string{"B-X E-X B-X E-X"}, 2, 2, 2},
	{"types with hyphens", []string{"B-NP-TMP I-NP-TMP"}, []string{"B-NP-TMP I-NP-TMP"}, 1, 1, 1},
	{"all O", []string{"O O"}, []string{"O O"}, 0, 0, 0},
}

func TestChunkCases(t *testing.T) {
	for _, c := range chunkCases {
		e := &Evaluator{}
		for i := range c.gold {
			e.Add(fields(c.gold[i]), fields(c.pred[i]))
		}
		r := e.Result()
		if r.Chunk == nil {
			t.Errorf("%s: no chunk result", c.name)
			continue
		}
		if r.Chunk.Gold != c.nGold || r.Chunk.Predicted != c.nPred || r.Chunk.Correct != c.nCorrect {
			t.Errorf("%s: gold/pred/correct = %d/%d/%d, want %d/%d/%d", c.name,
				r.Chunk.Gold, r.Chunk.Predicted, r.Chunk.Correct, c.nGold, c.nPred, c.nCorrect)
		}
	}
}

func TestChunkPerType(t *testing.T) {
	e := &Evaluator{}
	e.Add(fields("B-NP I-NP O B-VP B-NP"), fields("B-NP I-NP O B-NP B-NP"))
	c := e.Result().Chunk
	// NP: gold 2, predicted 3, correct 2; VP: gold 1, predicted 0.
	want := []ChunkTypeResult{
		{Type: "NP", Gold: 2, Predicted: 3, Correct: 2, Precision: 2.0 / 3, Recall: 1, F1: 0.8},
		{Type: "VP", Gold: 1},
	}
	if len(c.Types) != 2 {
		t.Fatalf("types %+v", c.Types)
	}
	for i, w := range want {
		g := c.Types[i]
		if g.Type != w.Type || g.Gold != w.Gold || g.Predicted != w.Predicted || g.Correct != w.Correct ||
			!near(g.Precision, w.Precision) || !near(g.Recall, w.Recall) || !near(g.F1, w.F1) {
			t.Errorf("type %d: %+v, want %+v", i, g, w)
		}
	}
	if !near(c.F1, 2*(2.0/3)*(2.0/3)/(4.0/3)) {
		t.Errorf("chunk F1 %v", c.F1)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestNotChunks(t *testing.T) {
	for _, labels := range [][2]string{
		{"NN VB", "NN NN"},
		{"NP-B NP-I", "NP-B NP-I"}, // suffix style is not recognised
		{"B-NP NN", "B-NP O"},
		{"B- O", "B- O"},
		{"-LRB- O", "O O"},
	} {
		e := &Evaluator{}
		e.Add(fields(labels[0]), fields(labels[1]))
		r := e.Result()
		if r.Chunk != nil {
			t.Errorf("%q: chunk result %+v for labels that are not chunks", labels, r.Chunk)
		}
		var m map[string]any
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if v, ok := m["chunk_f1"]; !ok || v != nil {
			t.Errorf("%q: chunk_f1 = %v (present %v), want null", labels, v, ok)
		}
	}
}

func TestLabels(t *testing.T) {
	e := NewEvaluator([]string{"D", "C", "B", "A"})
	e.Add(fields("A B A"), fields("A A C"))
	e.Add(fields("A"), fields("A"))
	r := e.Result()
	if r.Tokens != 4 || r.CorrectTokens != 2 || !near(r.ItemAccuracy, 0.5) {
		t.Errorf("items %d/%d %v", r.CorrectTokens, r.Tokens, r.ItemAccuracy)
	}
	if r.Sequences != 2 || r.CorrectSequences != 1 || !near(r.InstanceAccuracy, 0.5) {
		t.Errorf("instances %d/%d %v", r.CorrectSequences, r.Sequences, r.InstanceAccuracy)
	}
	// D occurs nowhere: left out. Order is the evaluator's: C, B, A.
	// A: support 3, predicted 4, correct 2.
	want := []LabelResult{
		{Label: "C", Predicted: 1},
		{Label: "B", Support: 1},
		{Label: "A", Correct: 2, Predicted: 3, Support: 3, Precision: 2.0 / 3, Recall: 2.0 / 3, F1: 2.0 / 3},
	}
	if len(r.Labels) != len(want) {
		t.Fatalf("labels %+v", r.Labels)
	}
	for i, w := range want {
		g := r.Labels[i]
		if g.Label != w.Label || g.Correct != w.Correct || g.Predicted != w.Predicted || g.Support != w.Support ||
			!near(g.Precision, w.Precision) || !near(g.Recall, w.Recall) || !near(g.F1, w.F1) {
			t.Errorf("label %d: %+v, want %+v", i, g, w)
		}
	}
	if !near(r.MacroF1, (2.0/3)/3) || !near(r.MacroPrecision, (2.0/3)/3) {
		t.Errorf("macro F1 %v precision %v", r.MacroF1, r.MacroPrecision)
	}
	if r.Chunk != nil {
		t.Errorf("chunks for A/B/C")
	}
}

func TestJSON(t *testing.T) {
	e := &Evaluator{}
	e.Add(fields("B-NP I-NP O B-VP"), fields("B-NP I-NP O B-NP"))
	b, err := json.Marshal(e.Result())
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Item     *float64 `json:"item_accuracy"`
		Instance *float64 `json:"instance_accuracy"`
		ChunkF1  *float64 `json:"chunk_f1"`
		MacroF1  *float64 `json:"macro_f1"`
		Labels   map[string]struct {
			Precision, Recall, F1 *float64
			Support               *int
		} `json:"labels"`
		Chunks struct {
			Gold, Predicted, Correct int
			Types                    map[string]struct{ F1 float64 }
		} `json:"chunks"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if m.Item == nil || *m.Item != 0.75 || m.Instance == nil || *m.Instance != 0 || m.ChunkF1 == nil || *m.ChunkF1 != 0.5 || m.MacroF1 == nil {
		t.Fatalf("bad JSON %s", b)
	}
	// B-NP: support 1, predicted 2, correct 1 → P .5, R 1, F1 2/3.
	bnp := m.Labels["B-NP"]
	if bnp.Support == nil || *bnp.Support != 1 || *bnp.Precision != 0.5 || *bnp.Recall != 1 || !near(*bnp.F1, 2.0/3) {
		t.Errorf("B-NP in %s", b)
	}
	if len(m.Labels) != 4 || m.Chunks.Gold != 2 || m.Chunks.Correct != 1 || m.Chunks.Types["VP"].F1 != 0 || m.Chunks.Types["NP"].F1 != 2.0/3 {
		t.Errorf("bad JSON %s", b)
	}
}

func TestText(t *testing.T) {
	e := &Evaluator{}
	e.Add(fields("B-NP I-NP O B-VP"), fields("B-NP I-NP O B-NP"))
	e.Add(fields("O"), fields("B-PP"))
	var buf bytes.Buffer
	if err := e.Result().WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"    B-NP: (1, 2, 1) (0.5000, 1.0000, 0.6667)\n",
		"    B-VP: (0, 0, 1) (0.0000, 0.0000, 0.0000)\n",
		"    B-PP: (0, 1, 0) (******, ******, ******)\n", // no support: CRFsuite's stars
		"Item accuracy: 3 / 5 (0.6000)\n",
		"Instance accuracy: 0 / 2 (0.0000)\n",
		"processed 5 tokens with 2 phrases; found: 3 phrases; correct: 1.\n",
		"accuracy:  60.00%; precision:  33.33%; recall:  50.00%; FB1:  40.00\n",
		"               VP: precision:   0.00%; recall:   0.00%; FB1:   0.00  0\n",
	} {
		if !strings.Contains(buf.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, buf.String())
		}
	}
}

// TestRandomIOB2 checks the conlleval counting against plain span matching
// on well-formed IOB2 and BIOES labellings, where the two must agree.
func TestRandomIOB2(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	types := []string{"NP", "VP", "PP"}
	for _, scheme := range []string{"iob2", "bioes"} {
		e := &Evaluator{}
		var gold, pred, correct int
		for range 2000 {
			n := r.IntN(12)
			gs, gl := randomSpans(r, n, types)
			ps, pl := randomSpans(r, n, types)
			if r.IntN(3) == 0 { // often predict exactly, with one change
				ps, pl = gs, gl
				if n > 0 && r.IntN(2) == 0 {
					ps, pl = randomSpans(r, n, types)
				}
			}
			e.Add(encode(gl, n, scheme), encode(pl, n, scheme))
			gold += len(gs)
			pred += len(ps)
			for s := range ps {
				if gs[s] {
					correct++
				}
			}
		}
		c := e.Result().Chunk
		if c.Gold != gold || c.Predicted != pred || c.Correct != correct {
			t.Errorf("%s: conlleval %d/%d/%d, spans %d/%d/%d", scheme, c.Gold, c.Predicted, c.Correct, gold, pred, correct)
		}
	}
}

type span struct {
	start, end int // [start, end)
	typ        string
}

// randomSpans returns a random set of disjoint typed spans over n tokens.
func randomSpans(r *rand.Rand, n int, types []string) (map[span]bool, []span) {
	set := map[span]bool{}
	var list []span
	for t := 0; t < n; {
		if r.IntN(3) == 0 {
			t++
			continue
		}
		l := 1 + r.IntN(min(3, n-t))
		s := span{t, t + l, types[r.IntN(len(types))]}
		set[s] = true
		list = append(list, s)
		t += l
	}
	return set, list
}

func encode(spans []span, n int, scheme string) []string {
	labels := make([]string, n)
	for i := range labels {
		labels[i] = "O"
	}
	for _, s := range spans {
		for t := s.start; t < s.end; t++ {
			p := "I-"
			switch {
			case scheme == "bioes" && s.end-s.start == 1:
				p = "S-"
			case t == s.start:
				p = "B-"
			case scheme == "bioes" && t == s.end-1:
				p = "E-"
			}
			labels[t] = p + s.typ
		}
	}
	return labels
}

func TestAddAllocs(t *testing.T) {
	e := &Evaluator{}
	g, p := fields("B-NP I-NP O B-VP B-PP"), fields("B-NP I-NP O B-NP B-PP")
	var gb [][]byte
	for _, l := range g {
		gb = append(gb, []byte(l))
	}
	e.Add(g, p)
	if a := testing.AllocsPerRun(100, func() { e.Add(g, p) }); a != 0 {
		t.Errorf("Add allocates %v times", a)
	}
	if a := testing.AllocsPerRun(100, func() { e.AddBytes(gb, p) }); a != 0 {
		t.Errorf("AddBytes allocates %v times", a)
	}
	// AddBytes counts as Add does.
	e, f := &Evaluator{}, &Evaluator{}
	for range 3 {
		e.AddBytes(gb, p)
		f.Add(g, p)
	}
	if r1, r2 := e.Result(), f.Result(); !reflect.DeepEqual(r1, r2) {
		t.Errorf("AddBytes: %+v, Add: %+v", r1, r2)
	}
}

// TestModelLabelsDecideChunks: labels given to NewEvaluator count in the
// decision even if the data never uses them.
func TestModelLabelsDecideChunks(t *testing.T) {
	e := NewEvaluator([]string{"B-NP", "NN"})
	e.Add(fields("B-NP"), fields("B-NP"))
	if e.Result().Chunk != nil {
		t.Error("chunk score although the label set has NN")
	}
}

// TestMerge: evaluators given parts of the data, merged, report what one
// given all of it reports (labels, chunks, and a non-chunk label in one
// part only).
func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, labels := range [][]string{{"B-NP", "I-NP", "B-VP", "O", "B-PP"}, {"B-NP", "I-NP", "O", "NN"}} {
		var gold, pred [][]string
		for range 40 {
			n := 1 + r.IntN(8)
			g, p := make([]string, n), make([]string, n)
			for i := range n {
				g[i], p[i] = labels[r.IntN(len(labels))], labels[r.IntN(len(labels))]
				if r.IntN(3) > 0 {
					p[i] = g[i]
				}
				if len(gold) < 30 { // NN only in the last part
					g[i], p[i] = strings.Replace(g[i], "NN", "O", 1), strings.Replace(p[i], "NN", "O", 1)
				}
			}
			gold, pred = append(gold, g), append(pred, p)
		}
		all := NewEvaluator(labels[:2])
		parts := []*Evaluator{NewEvaluator(labels[:2]), {}, {}}
		for k := range gold {
			all.Add(gold[k], pred[k])
			parts[min(k/15, 2)].Add(gold[k], pred[k])
		}
		parts[0].Merge(parts[1])
		parts[0].Merge(parts[2])
		parts[0].Merge(&Evaluator{})
		want, got := all.Result(), parts[0].Result()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("merged:\n%+v\nwant\n%+v", got, want)
		}
		if (want.Chunk == nil) != slices.Contains(labels, "NN") {
			t.Errorf("labels %v: chunk result %v", labels, want.Chunk)
		}
	}
}

// TestBinary sends evaluators through MarshalBinary and UnmarshalBinary,
// as a pipeline's combiner does, and merges them: the result is a single
// evaluator's, label order included; damaged encodings are errors.
func TestBinary(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	labels := []string{"B-NP", "I-NP", "B-VP", "O", "B-PP", "I-PP"}
	all := NewEvaluator([]string{"O", "B-UNSEEN"})
	parts := []*Evaluator{NewEvaluator([]string{"O", "B-UNSEEN"}), {}, {}}
	for k := range 60 {
		n := 1 + r.IntN(9)
		g, p := make([]string, n), make([]string, n)
		for i := range n {
			g[i], p[i] = labels[r.IntN(len(labels))], labels[r.IntN(len(labels))]
		}
		all.Add(g, p)
		parts[k/20].Add(g, p)
	}
	merged := &Evaluator{}
	for _, p := range parts {
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var q Evaluator
		if err := q.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if b2, _ := q.MarshalBinary(); !bytes.Equal(b, b2) {
			t.Fatal("encoding of a decoded evaluator differs")
		}
		merged.Merge(&q)
	}
	if got, want := merged.Result(), all.Result(); !reflect.DeepEqual(got, want) || want.Chunk == nil {
		t.Fatalf("through the encoding:\n%+v\nwant\n%+v", got, want)
	}
	// B-UNSEEN never occurs, but it is part of the order: kept.
	b, _ := parts[0].MarshalBinary()
	var q Evaluator
	if err := q.UnmarshalBinary(b); err != nil || q.names[1] != "B-UNSEEN" {
		t.Fatalf("declared label lost: %v %v", err, q.names)
	}
	for n := range len(b) {
		if err := q.UnmarshalBinary(b[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
	if err := q.UnmarshalBinary(append(b, 0)); err == nil {
		t.Fatal("trailing byte: no error")
	}
	if err := q.UnmarshalBinary([]byte{9}); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Fatalf("version 9: %v", err)
	}
}
