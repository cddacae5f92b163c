package train

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/simdcrf/simdcrf/internal/testdata"
	"github.com/simdcrf/simdcrf/sparse"
)

// posFeatures approximates the built-in "pos" feature set (package
// format owns the real one): word, lower case, prefixes and suffixes up to
// 4, shape, digit/hyphen/capital flags, words at ±1 and ±2.
func posFeatures(words []string, i int, add func(string)) {
	w := words[i]
	add("w=" + w)
	lw := strings.ToLower(w)
	add("lw=" + lw)
	r := []rune(w)
	for k := 1; k <= 4 && k <= len(r); k++ {
		add("p" + string(rune('0'+k)) + "=" + string(r[:k]))
		add("s" + string(rune('0'+k)) + "=" + string(r[len(r)-k:]))
	}
	var shape []rune
	digit, upper, hyphen := false, false, false
	for _, c := range r {
		s := 'x'
		switch {
		case unicode.IsUpper(c):
			s, upper = 'X', true
		case unicode.IsDigit(c):
			s, digit = 'd', true
		case c == '-':
			hyphen = true
			s = c
		case !unicode.IsLetter(c):
			s = c
		}
		if len(shape) == 0 || shape[len(shape)-1] != s {
			shape = append(shape, s)
		}
	}
	add("shape=" + string(shape))
	if digit {
		add("digit")
	}
	if upper {
		add("upper")
	}
	if hyphen {
		add("hyphen")
	}
	for _, o := range []int{-2, -1, 1, 2} {
		j := i + o
		v := "_B"
		if j >= 0 && j < len(words) {
			v = strings.ToLower(words[j])
		}
		add("w[" + string(rune('0'+o+2)) + "]=" + v)
	}
	add("bias")
}

// TestEWTIteration measures L-BFGS iterations on UD English EWT with XPOS
// labels (M = 49) and approximate pos features. Env TRAIN_ITERS (default
// 10), TRAIN_THREADS.
// loadEWT reads UD English EWT's training file with XPOS labels and
// posFeatures, attributes in frequency order.
func loadEWT(t testing.TB) *Data {
	dir := testdata.Dir(t)
	f, err := os.Open(filepath.Join(dir, "ud_english_ewt", "en_ewt-ud-train.conllu"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	attrs, labels := sparse.NewDict(1<<20), sparse.NewDict(64)
	c := sparse.NewCorpus()
	var b sparse.Builder
	var words, tags []string
	flush := func() {
		if len(words) == 0 {
			return
		}
		b.Reset()
		for i := range words {
			posFeatures(words, i, func(s string) { id, _ := attrs.Add(s); b.Add(id, 1) })
			y, _ := labels.Add(tags[i])
			b.End(y)
		}
		if err := c.Append(b.Seq()); err != nil {
			t.Fatal(err)
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
		if strings.ContainsAny(cols[0], "-.") {
			continue
		}
		words = append(words, cols[1])
		tags = append(tags, cols[4])
	}
	flush()
	order := sparse.FrequencyOrder(c.AttrCounts(attrs.Len()), 1)
	_, remap, _ := attrs.Reorder(order)
	if err := c.Remap(remap); err != nil {
		t.Fatal(err)
	}
	return &Data{Corpus: c, NumAttrs: attrs.Len(), Labels: labels.Len()}
}

func TestEWTIteration(t *testing.T) {
	if testing.Short() {
		t.Skip("long: trains on UD English EWT")
	}
	d := loadEWT(t)
	c := d.Corpus
	cfg, _ := Defaults("lbfgs")
	cfg.MaxIterations = 10
	if v := os.Getenv("TRAIN_ITERS"); v != "" {
		cfg.MaxIterations = atoi(v)
	}
	if v := os.Getenv("TRAIN_THREADS"); v != "" {
		cfg.Threads = atoi(v)
	}
	var secs float64
	evals := 1 // the evaluation at the starting point
	cfg.Progress = func(p Progress) {
		secs += p.Seconds
		evals += p.Evals
	}
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	res, err := Train(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() - ru0.Utime.Nano() + ru1.Stime.Nano() - ru0.Stime.Nano())
	t.Logf("%d sequences, %d tokens, %d features, %d attrs, M=%d", c.Len(), c.Tokens(), c.Features(), d.NumAttrs, d.Labels)
	t.Logf("threads %d: %d iterations, %d evaluations, loss %.6f, %.4f s/iteration wall (iterations only), Train %v wall, %v CPU (%.4f s/iteration incl. setup)",
		cfg.Threads, res.Iterations, evals, res.Loss, secs/float64(res.Iterations), time.Since(t0), cpu, cpu.Seconds()/float64(res.Iterations))
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
