package crfsuite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
)

// ensure installs CRFsuite or skips (fails under CI) when it cannot be had.
func ensure(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := Ensure(ctx); err != nil {
		if errors.Is(err, ErrUnavailable) && os.Getenv("CI") == "" {
			t.Skipf("CRFsuite unavailable: %v", err)
		}
		t.Fatal(err)
	}
}

// writeToy writes n sequences over labels A, B, C where each item carries an
// attribute naming its label (with an escaped colon in it) and a noise attribute,
// so a trained model must tag the data perfectly.
func writeToy(t *testing.T, path string, n int, seed int64) (labels [][]string) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	var b strings.Builder
	for i := 0; i < n; i++ {
		var seq []string
		for j := 0; j < 1+rng.Intn(8); j++ {
			l := string(rune('A' + rng.Intn(3)))
			seq = append(seq, l)
			fmt.Fprintf(&b, "%s\tw\\:%s%d\tnoise=%d\tbias:1\n", l, strings.ToLower(l), rng.Intn(3), rng.Intn(5))
		}
		b.WriteString("\n")
		labels = append(labels, seq)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return labels
}

func TestToy(t *testing.T) {
	ensure(t)
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "toy.txt")
	gold := writeToy(t, data, 200, 1)
	model := filepath.Join(dir, "toy.model")
	tr, err := Train(ctx, TrainOptions{Data: data, Model: model, Params: map[string]string{"max_iterations": "100"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("train: %+v", tr)
	if tr.Sequences != 200 || tr.Iterations < 1 || tr.Iterations > 100 || !(tr.Loss > 0) || tr.Params["max_iterations"] != "100" {
		t.Errorf("odd training result: %+v", tr)
	}
	if tr.PeakRSS < tr.BaselineRSS || tr.BaselineRSS <= 0 || tr.WallSeconds < tr.TrainSeconds {
		t.Errorf("odd memory or time: %+v", tr)
	}
	out := filepath.Join(dir, "out.txt")
	tg, err := Tag(ctx, TagOptions{Model: model, Data: data, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tag: %+v", tg)
	if tg.Sequences != 200 || tg.ItemAccuracy != 1 || tg.InstanceAccuracy != 1 || tg.Correct != tg.Tokens {
		t.Errorf("separable data not tagged perfectly: %+v", tg)
	}
	// The labels written must be the gold ones, sequence by sequence.
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, s := range gold {
		want.WriteString(strings.Join(s, "\n") + "\n\n")
	}
	if string(b) != want.String() {
		t.Errorf("output labels differ from gold:\n%.200s\nwant\n%.200s", b, want.String())
	}
}

func TestDriverRejects(t *testing.T) {
	ensure(t)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"value":  "A\tx:0.5\n\n",
		"weight": "@weight:2\nA\tx\n\n",
	} {
		data := filepath.Join(dir, name+".txt")
		if err := os.WriteFile(data, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Train(context.Background(), TrainOptions{Data: data, Model: filepath.Join(dir, "m")})
		if err == nil || !strings.Contains(err.Error(), data+":") {
			t.Errorf("%s: got %v, want an error naming %s and its line", name, err, data)
		}
	}
	_, err := Train(context.Background(), TrainOptions{Data: filepath.Join(dir, "value.txt"), Model: filepath.Join(dir, "m"),
		Params: map[string]string{"no_such": "1"}})
	if err == nil || !strings.Contains(err.Error(), "unknown parameter no_such") {
		t.Errorf("unknown parameter: got %v", err)
	}
}

func TestParseLog(t *testing.T) {
	log := `Feature generation
Number of features: 42
Seconds required: 0.010

***** Iteration #1 *****
Loss: 10.5
Active features: 40
Seconds required for this iteration: 0.250

***** Iteration #2 *****
Loss: 7.25
Active features: 41
Seconds required for this iteration: 0.500

L-BFGS resulted in convergence
Total seconds required for training: 0.800
`
	var r TrainResult
	if err := parseLog([]byte(log), &r); err != nil {
		t.Fatal(err)
	}
	if r.Iterations != 2 || r.Loss != 7.25 || r.Features != 42 || r.ActiveFeatures != 41 ||
		r.IterationCPUSeconds != 0.75 || r.Stop != "L-BFGS resulted in convergence" {
		t.Errorf("parsed %+v", r)
	}
	if err := parseLog([]byte("Loss: x\n"), &r); err == nil {
		t.Error("bad number accepted")
	}
	if err := parseLog([]byte("nothing\n"), &TrainResult{}); err == nil {
		t.Error("a log without iterations accepted")
	}
}

// TestReal measures CRFsuite on real data written as CRFsuite attribute files by
// the stand-in writers below (package format will write them later): CoNLL-2000
// chunking with chunking.tpl, and UD English EWT XPOS with a "pos"-like feature
// set. It takes minutes, so it runs only when SIMDCRF_CRFSUITE_REAL names the
// corpora ("chunking", "ewt", comma-separated, or "1" for both). The files, models,
// logs and labels go to $SIMDCRF_CRFSUITE_OUT if set.
func TestReal(t *testing.T) {
	want := os.Getenv("SIMDCRF_CRFSUITE_REAL")
	if want == "" {
		t.Skip("set SIMDCRF_CRFSUITE_REAL=1 (or chunking, ewt) to measure CRFsuite on real data (minutes)")
	}
	root := sharedDir()
	if _, err := os.Stat(filepath.Join(root, "data")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ensure(t)
	dir := os.Getenv("SIMDCRF_CRFSUITE_OUT")
	if dir == "" {
		dir = t.TempDir()
	}
	run := func(name string) bool { return want == "1" || strings.Contains(","+want+",", ","+name+",") }
	if run("chunking") {
		t.Run("chunking", func(t *testing.T) {
			tpl := readTemplate(t, filepath.Join(root, "templates", "chunking.tpl"))
			train, test := filepath.Join(dir, "chunking-train.attr"), filepath.Join(dir, "chunking-test.attr")
			writeConllAttrs(t, filepath.Join(root, "data", "conll2000", "train.txt"), train, tpl)
			writeConllAttrs(t, filepath.Join(root, "data", "conll2000", "test.txt"), test, tpl)
			measure(t, dir, "chunking", train, test, 47377)
		})
	}
	if run("ewt") {
		t.Run("ewt", func(t *testing.T) {
			ud := filepath.Join(root, "data", "ud_english_ewt")
			train, test := filepath.Join(dir, "ewt-train.attr"), filepath.Join(dir, "ewt-test.attr")
			writeUDAttrs(t, filepath.Join(ud, "en_ewt-ud-train.conllu"), train)
			writeUDAttrs(t, filepath.Join(ud, "en_ewt-ud-test.conllu"), test)
			measure(t, dir, "ewt", train, test, 0)
		})
	}
}

// measure trains on train with CRFsuite's defaults (c2=1), tags test and logs the
// figures; testTokens, if not 0, is the expected size of the test set.
func measure(t *testing.T, dir, name, train, test string, testTokens int) {
	ctx := context.Background()
	model := filepath.Join(dir, name+".model")
	tr, err := Train(ctx, TrainOptions{Data: train, Model: model, Log: filepath.Join(dir, name+"-train.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("train: %d seqs %d tokens, read %.1f s, train %.1f s, %d iterations, %.3f s/iter (CPU sum %.1f s), loss %.3f, features %d, peak RSS %.1f MiB (node baseline %.1f MiB, after reading %.1f MiB), wall %.1f s (user %.1f s, sys %.1f s), %s",
		tr.Sequences, tr.Tokens, tr.ReadSeconds, tr.TrainSeconds, tr.Iterations, tr.SecondsPerIteration(), tr.IterationCPUSeconds,
		tr.Loss, tr.Features, mib(tr.PeakRSS), mib(tr.BaselineRSS), mib(tr.ReadRSS), tr.WallSeconds, tr.UserSeconds, tr.SystemSeconds, tr.Stop)
	tg, err := Tag(ctx, TagOptions{Model: model, Data: test, Output: filepath.Join(dir, name+"-test.out")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tag: %d seqs %d tokens, accuracy %.4f, tag-only %.0f tokens/s, whole process %.0f tokens/s (wall %.2f s, load %.2f s, read+tag %.2f s, tag %.2f s), peak RSS %.1f MiB, user %.2f s",
		tg.Sequences, tg.Tokens, tg.ItemAccuracy, tg.TokensPerSecond, tg.WholeTokensPerSecond(), tg.WallSeconds, tg.LoadSeconds,
		tg.ReadTagSeconds, tg.TagSeconds, mib(tg.PeakRSS), tg.UserSeconds)
	if name == "chunking" {
		p, r, f := chunkF1(t, test, filepath.Join(dir, name+"-test.out"))
		t.Logf("chunks: precision %.2f recall %.2f F1 %.2f", p, r, f)
	}
	if testTokens != 0 && tg.Tokens != testTokens || tg.ItemAccuracy < 0.9 {
		t.Errorf("test set: %d tokens (want %d), accuracy %.4f", tg.Tokens, testTokens, tg.ItemAccuracy)
	}
}

// sharedDir finds ../shared beside the repository root (the first ancestor of the
// working directory with a shared/data), so it works from a worktree too.
func sharedDir() string {
	d, err := os.Getwd()
	if err != nil {
		return "../../../shared"
	}
	for {
		if fi, err := os.Stat(filepath.Join(d, "shared", "data")); err == nil && fi.IsDir() {
			return filepath.Join(d, "shared")
		}
		up := filepath.Dir(d)
		if up == d {
			return "../../../shared"
		}
		d = up
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// template is a CRF++ template reduced to its unigram lines: name prefix and the
// %x[row,col] references joined by the literal text between them.
type template struct {
	lines [][]tplPart
}

type tplPart struct {
	lit      string
	row, col int
	ref      bool
}

func readTemplate(t *testing.T, path string) template {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tpl template
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == 'B' {
			continue // B: label bigrams, which CRFsuite always has
		}
		if line[0] != 'U' {
			t.Fatalf("%s:%d: unsupported template line %q", path, n+1, line)
		}
		var parts []tplPart
		for line != "" {
			i := strings.Index(line, "%x[")
			if i < 0 {
				parts = append(parts, tplPart{lit: line})
				break
			}
			if i > 0 {
				parts = append(parts, tplPart{lit: line[:i]})
			}
			j := strings.IndexByte(line[i:], ']')
			var p tplPart
			if j < 0 {
				t.Fatalf("%s:%d: unterminated %%x[", path, n+1)
			}
			if _, err := fmt.Sscanf(line[i+3:i+j], "%d,%d", &p.row, &p.col); err != nil {
				t.Fatalf("%s:%d: %v", path, n+1, err)
			}
			p.ref = true
			parts = append(parts, p)
			line = line[i+j+1:]
		}
		tpl.lines = append(tpl.lines, parts)
	}
	return tpl
}

// writeConllAttrs expands tpl over a whitespace-column file (label last, blank
// line between sentences) as CRF++ does, with its padding "_B-k" before and
// "_B+k" after the sentence, and writes a CRFsuite attribute file with ':' and
// '\' escaped.
func writeConllAttrs(t *testing.T, in, out string, tpl template) {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tmp := out + ".tmp"
	o, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(o, 1<<20)
	esc := strings.NewReplacer(`\`, `\\`, `:`, `\:`)
	var rows [][]string
	var sb strings.Builder
	flush := func() {
		for i, r := range rows {
			w.WriteString(esc.Replace(r[len(r)-1]))
			for _, parts := range tpl.lines {
				sb.Reset()
				for _, p := range parts {
					if !p.ref {
						sb.WriteString(p.lit)
						continue
					}
					k := i + p.row
					switch {
					case k < 0:
						fmt.Fprintf(&sb, "_B%d", k)
					case k >= len(rows):
						fmt.Fprintf(&sb, "_B+%d", k-len(rows)+1)
					default:
						if p.col >= len(rows[k])-1 {
							t.Fatalf("%s: template column %d beyond the observation columns", in, p.col)
						}
						sb.WriteString(rows[k][p.col])
					}
				}
				w.WriteByte('\t')
				w.WriteString(esc.Replace(sb.String()))
			}
			w.WriteByte('\n')
		}
		if len(rows) > 0 {
			w.WriteByte('\n')
		}
		rows = rows[:0]
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			flush()
			continue
		}
		rows = append(rows, fields)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	flush()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
}

// writeUDAttrs writes a CoNLL-U file as a CRFsuite attribute file labelled with
// XPOS, with a stand-in for the "pos" feature set: the word, its lower
// case, prefixes and suffixes up to 4 characters, its shape, digit, hyphen and
// capital flags, and the words at -2..+2 (padded "_B-k"/"_B+k" like CRF++).
// Comment lines, multiword-token ranges and empty nodes are skipped.
func writeUDAttrs(t *testing.T, in, out string) {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tmp := out + ".tmp"
	o, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(o, 1<<20)
	esc := strings.NewReplacer(`\`, `\\`, `:`, `\:`)
	var words, tags []string
	attr := func(a string) {
		w.WriteByte('\t')
		w.WriteString(esc.Replace(a))
	}
	flush := func() {
		for i, word := range words {
			w.WriteString(esc.Replace(tags[i]))
			attr("w=" + word)
			attr("lw=" + strings.ToLower(word))
			r := []rune(word)
			for k := 1; k <= 4 && k <= len(r); k++ {
				attr(fmt.Sprintf("p%d=%s", k, string(r[:k])))
				attr(fmt.Sprintf("s%d=%s", k, string(r[len(r)-k:])))
			}
			attr("shape=" + shape(r))
			if strings.ContainsAny(word, "0123456789") {
				attr("digit")
			}
			if strings.Contains(word, "-") {
				attr("hyphen")
			}
			if len(r) > 0 && unicode.IsUpper(r[0]) {
				attr("cap")
			}
			if strings.ToUpper(word) == word && strings.ToLower(word) != word {
				attr("allcaps")
			}
			for _, d := range []int{-2, -1, 1, 2} {
				k := i + d
				switch {
				case k < 0:
					attr(fmt.Sprintf("w[%d]=_B%d", d, k))
				case k >= len(words):
					attr(fmt.Sprintf("w[%+d]=_B+%d", d, k-len(words)+1))
				default:
					attr(fmt.Sprintf("w[%+d]=%s", d, strings.ToLower(words[k])))
				}
			}
			w.WriteByte('\n')
		}
		if len(words) > 0 {
			w.WriteByte('\n')
		}
		words, tags = words[:0], tags[:0]
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			flush()
			continue
		}
		if line[0] == '#' {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 10 {
			t.Fatalf("%s: line %q: want 10 columns", in, line)
		}
		if strings.ContainsAny(cols[0], "-.") {
			continue
		}
		words = append(words, cols[1])
		tags = append(tags, cols[4])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	flush()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, out); err != nil {
		t.Fatal(err)
	}
}

// shape maps upper case to X, lower case to x, digits to d and keeps other
// characters, collapsing runs: "McDonald's" -> "XxXx'x".
func shape(r []rune) string {
	var b strings.Builder
	var last rune
	for _, c := range r {
		s := c
		switch {
		case unicode.IsUpper(c):
			s = 'X'
		case unicode.IsLower(c):
			s = 'x'
		case unicode.IsDigit(c):
			s = 'd'
		}
		if s != last {
			b.WriteRune(s)
			last = s
		}
	}
	return b.String()
}

// chunkF1 scores the IOB2 labels in out against the gold labels (first fields) of
// the attribute file gold, counting chunks as conlleval does for IOB2: a chunk
// starts at B-X, or at I-X not continuing a chunk of type X.
func chunkF1(t *testing.T, gold, out string) (p, r, f float64) {
	t.Helper()
	read := func(path string, first bool) []string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var tags []string
		for _, line := range strings.Split(string(b), "\n") {
			if first && line != "" {
				line, _, _ = strings.Cut(line, "\t")
			}
			tags = append(tags, line) // "" separates sequences
		}
		return tags
	}
	g, o := read(gold, true), read(out, false)
	for len(g) > 0 && g[len(g)-1] == "" {
		g = g[:len(g)-1]
	}
	for len(o) > 0 && o[len(o)-1] == "" {
		o = o[:len(o)-1]
	}
	if len(g) != len(o) {
		t.Fatalf("%s and %s differ in length: %d and %d lines", gold, out, len(g), len(o))
	}
	chunks := func(tags []string) map[[2]int]string {
		m := map[[2]int]string{}
		start, typ := -1, ""
		end := func(i int) {
			if start >= 0 {
				m[[2]int{start, i}] = typ
			}
			start, typ = -1, ""
		}
		for i, tag := range tags {
			kind, ty, _ := strings.Cut(tag, "-")
			switch {
			case kind == "B" || kind == "I" && (start < 0 || ty != typ):
				end(i)
				start, typ = i, ty
			case kind == "I":
			default: // O or a sequence break
				end(i)
			}
		}
		end(len(tags))
		return m
	}
	gc, oc := chunks(g), chunks(o)
	correct := 0
	for k, ty := range oc {
		if gc[k] == ty {
			correct++
		}
	}
	p = 100 * float64(correct) / float64(len(oc))
	r = 100 * float64(correct) / float64(len(gc))
	return p, r, 2 * p * r / (p + r)
}

func TestChunkF1(t *testing.T) {
	dir := t.TempDir()
	gold, out := filepath.Join(dir, "gold"), filepath.Join(dir, "out")
	// Gold chunks: NP[0,2) VP[3,4) NP[4,5) | NP[0,1); predicted: NP[0,2) NP[3,4)
	// NP[4,5) | NP[0,1) with an I- start: 3 of 4 right each way.
	os.WriteFile(gold, []byte("B-NP\tx\nI-NP\tx\nO\tx\nB-VP\tx\nB-NP\tx\n\nB-NP\tx\n\n"), 0o644)
	os.WriteFile(out, []byte("B-NP\nI-NP\nO\nB-NP\nB-NP\n\nI-NP\n\n"), 0o644)
	p, r, f := chunkF1(t, gold, out)
	if p != 75 || r != 75 || f != 75 {
		t.Errorf("got P %v R %v F %v, want 75 each", p, r, f)
	}
}
