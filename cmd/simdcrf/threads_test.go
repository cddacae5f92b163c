package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// insertLine returns text with line inserted before the first line of the
// sentence (blank-line separated block) that starts after byte at.
func insertLine(text string, at int, line string) (string, int) {
	k := at + strings.Index(text[at:], "\n\n") + 2
	return text[:k] + line + "\n" + text[k:], strings.Count(text[:k], "\n") + 1
}

// tagThreadsAgree tags data at --threads 1, 2 and 3 with each of the
// option sets, and fails unless each prints the same bytes and the same
// error; it returns the output and error of the last run at --threads 1.
func tagThreadsAgree(t *testing.T, modelPath, data string, optionSets [][]string) (string, error) {
	t.Helper()
	var lastOut string
	var lastErr error
	for _, opts := range optionSets {
		var want string
		var wantErr error
		for _, threads := range []string{"1", "2", "3"} {
			args := append([]string{"tag", "-m", modelPath, "--threads", threads}, opts...)
			out, _, err := runCLI(t, append(args, data)...)
			if threads == "1" {
				want, wantErr = out, err
				continue
			}
			if out != want {
				t.Errorf("tag %s: --threads %s prints %d bytes unlike --threads 1's %d", strings.Join(opts, " "), threads, len(out), len(want))
			}
			if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Errorf("tag %s: --threads %s: error %v, --threads 1: %v", strings.Join(opts, " "), threads, err, wantErr)
			}
		}
		lastOut, lastErr = want, wantErr
	}
	return lastOut, lastErr
}

// TestTagThreadsAgree: input of several batches (4,096 positions each)
// tags alike on one thread and on several (batches tagged out of order,
// printed in order), with candidate labels, observation-dependent
// transitions and attribute values, under -r -p -i, -l -n 2 and -t; an
// input error in the middle stops each after the same batches, naming the
// same file and line.
func TestTagThreadsAgree(t *testing.T) {
	// Workers running in parallel, even on one core.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	// Column input: a lexicon and bigram attributes.
	trainPath, testPath, tplPath, modelPath := toyFiles(t, 200, 2000)
	dir := filepath.Dir(tplPath)
	obsTpl := filepath.Join(dir, "obs.tpl")
	lexPath := filepath.Join(dir, "lex.txt")
	os.WriteFile(obsTpl, []byte(toyTemplate+"B01:%x[0,1]\nB02:%x[-1,1]/%x[0,1]\n"), 0o644)
	os.WriteFile(lexPath, []byte("the\tO\nsees\tB-VP\nsees\tI-NP\n"), 0o644)
	if _, stderr, err := runCLI(t, "learn", "-q", "-m", modelPath, "-a", "ap", "--template", obsTpl, "--lexicon", lexPath,
		"-p", "max_iterations=10", trainPath); err != nil {
		t.Fatalf("learn: %v\n%s", err, stderr)
	}
	in, err := os.ReadFile(testPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(in), "\n") - strings.Count(string(in), "\n\n"); n < 3*batchItems {
		t.Fatalf("test data of %d positions: want several batches", n)
	}
	out, err := tagThreadsAgree(t, modelPath, testPath, [][]string{{"-r", "-p", "-i"}, {"-l", "-n", "2"}, {"-t", "-q"}})
	if err != nil || !strings.Contains(out, "Item accuracy") {
		t.Errorf("tag -t: %v\n%.300s", err, out)
	}
	bad, line := insertLine(string(in), len(in)/2, "the DT B-NP extra")
	badPath := filepath.Join(dir, "bad.txt")
	os.WriteFile(badPath, []byte(bad), 0o644)
	out, err = tagThreadsAgree(t, modelPath, badPath, [][]string{{"-r", "-p", "-i"}})
	if want := badPath + ":" + strconv.Itoa(line) + ":"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("tag, bad line %d: error %v, want one naming %s", line, err, want)
	}
	if n := strings.Count(out, "@probability"); n == 0 || n >= strings.Count(bad[:len(in)/2], "\n\n") {
		t.Errorf("tag, bad line %d: printed %d sequences, want the first full batches", line, n)
	}

	// CRFsuite's format: values, every third sequence without, unknown
	// attributes and labels.
	train, test := filepath.Join(dir, "train.attr"), filepath.Join(dir, "test.attr")
	attrs := func(n int, seed uint64) string {
		r := rand.New(rand.NewPCG(seed, 4))
		var b strings.Builder
		for i := range n {
			for range 2 + r.IntN(6) {
				x := r.IntN(4)
				if i%3 == 0 {
					fmt.Fprintf(&b, "L%d\tw=%d\tbias\n", x, x)
					continue
				}
				fmt.Fprintf(&b, "L%d\tw=%d\tshape\\:x%d:%.1f\tbias\n", x, x, x, 0.5+r.Float64())
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	os.WriteFile(train, []byte(attrs(150, 1)), 0o644)
	text := attrs(4000, 2)
	os.WriteFile(test, []byte(text), 0o644)
	cm := filepath.Join(dir, "m.model")
	if _, stderr, err := runCLI(t, "learn", "-q", "-m", cm, "-p", "max_iterations=20", train); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if _, err := tagThreadsAgree(t, cm, test, [][]string{{"-r", "-p", "-i"}, {"-l"}}); err != nil {
		t.Error(err)
	}
	bad, line = insertLine(text, len(text)/2, "L0\tw=1:x")
	os.WriteFile(badPath, []byte(bad), 0o644)
	out, err = tagThreadsAgree(t, cm, badPath, [][]string{{"-p"}})
	if want := badPath + ":" + strconv.Itoa(line) + ":"; err == nil || !strings.Contains(err.Error(), want) || out == "" {
		t.Errorf("tag, bad line %d: error %v (want one naming %s), %d bytes printed", line, err, want, len(out))
	}
}
