package crfsuite

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed tagc/tagc.c
var tagcC []byte

// tagcSources are the files of CRFsuite and libLBFGS (under the npm
// package's directory) that tagc links: CRFsuite's library as the binding
// builds it (crfsuite.c needs the trainers to link).
var tagcSources = []string{
	"liblbfgs/lib/lbfgs.c",
	"crfsuite/lib/crf/src/crf1d_context.c",
	"crfsuite/lib/crf/src/crf1d_encode.c",
	"crfsuite/lib/crf/src/crf1d_feature.c",
	"crfsuite/lib/crf/src/crf1d_model.c",
	"crfsuite/lib/crf/src/crf1d_tag.c",
	"crfsuite/lib/crf/src/crfsuite.c",
	"crfsuite/lib/crf/src/crfsuite_train.c",
	"crfsuite/lib/crf/src/dataset.c",
	"crfsuite/lib/crf/src/dictionary.c",
	"crfsuite/lib/crf/src/holdout.c",
	"crfsuite/lib/crf/src/logging.c",
	"crfsuite/lib/crf/src/params.c",
	"crfsuite/lib/crf/src/quark.c",
	"crfsuite/lib/crf/src/rumavl.c",
	"crfsuite/lib/crf/src/train_arow.c",
	"crfsuite/lib/crf/src/train_averaged_perceptron.c",
	"crfsuite/lib/crf/src/train_l2sgd.c",
	"crfsuite/lib/crf/src/train_lbfgs.c",
	"crfsuite/lib/crf/src/train_passive_aggressive.c",
	"crfsuite/lib/cqdb/src/cqdb.c",
	"crfsuite/lib/cqdb/src/lookup3.c",
}

// EnsureTagC returns the path of tagc, a small C program (tagc/tagc.c, embedded
// here) that tags a CRFsuite attribute file with a CRFsuite model through
// CRFsuite's own library and prints what `crfsuite tag -r -p -i -l` prints:
// the reference for the probabilities and marginals simdcrf must
// reproduce (the npm binding returns labels only). It is compiled on first
// use with the system's C compiler (cc, or $CC) from the C sources the npm
// package ships, as the binding compiles them (-O3, no SSE), into the
// package's cache directory (Dir), under a name that changes with tagc.c.
func EnsureTagC(ctx context.Context) (string, error) {
	dir, err := Ensure(ctx)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(tagcC)
	exe := filepath.Join(dir, "tagc-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("%w: no C compiler (%s) to build tagc", ErrUnavailable, cc)
	}
	pkg := filepath.Join(dir, "node_modules", "crfsuite")
	src, err := os.CreateTemp(dir, "tagc-*.c")
	if err != nil {
		return "", fmt.Errorf("crfsuite: %w", err)
	}
	defer os.Remove(src.Name())
	if _, err := src.Write(tagcC); err != nil {
		src.Close()
		return "", fmt.Errorf("crfsuite: %w", err)
	}
	src.Close()
	tmp := exe + ".tmp" + fmt.Sprint(os.Getpid())
	args := []string{"-O3", "-w", "-o", tmp,
		"-I", filepath.Join(pkg, "crfsuite", "include"),
		"-I", filepath.Join(pkg, "crfsuite", "lib", "cqdb", "include"),
		"-I", filepath.Join(pkg, "liblbfgs", "include"),
		src.Name()}
	for _, s := range tagcSources {
		args = append(args, filepath.Join(pkg, s))
	}
	args = append(args, "-lm")
	cmd := exec.CommandContext(ctx, cc, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("crfsuite: compiling tagc: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, exe); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("crfsuite: %w", err)
	}
	return exe, nil
}

// TagText tags data (a CRFsuite attribute file) with model (a CRFsuite
// model file) through CRFsuite's own library (EnsureTagC) and returns what
// `crfsuite tag` prints with the options given ("-r", "-p", "-i", "-l"):
// the labels, scores, probabilities and marginals CRFsuite computes, in
// its digits. (With -r the reference is printed as the data has it, where
// crfsuite tag prints "(null)" for a label unknown to the model.)
func TagText(ctx context.Context, model, data string, options ...string) ([]byte, error) {
	exe, err := EnsureTagC(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range options {
		if o != "-r" && o != "-p" && o != "-i" && o != "-l" {
			return nil, fmt.Errorf("crfsuite: TagText: option %q (want -r, -p, -i or -l)", o)
		}
	}
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, append(options, model, data)...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("crfsuite: tagc %s %s: %v: %s", model, data, err, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}
