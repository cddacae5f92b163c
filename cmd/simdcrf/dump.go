package main

import (
	"bufio"
	"io"

	"github.com/simdcrf/simdcrf/model"
)

func cmdDump(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("dump", "dump -m MODEL [--top N]", stderr)
	modelPath := fs.String("m", "", "the model `FILE` (required)")
	top := fs.Int("top", 100, "print the `N` strongest state features (0: all non-zero ones)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *modelPath == "" && fs.NArg() == 1 {
		*modelPath = fs.Arg(0)
	} else if *modelPath == "" || fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	m, unmap, err := model.Map(*modelPath)
	if err != nil {
		return err
	}
	defer unmap()
	return dumpModel(m, *top, stdout)
}

// dumpModel prints m (mapped: see guardModel).
func dumpModel(m *model.Model, top int, stdout io.Writer) (err error) {
	defer guardModel(m, &err)()
	w := bufio.NewWriter(stdout)
	if err := m.Dump(w, top); err != nil {
		return err
	}
	return w.Flush()
}
