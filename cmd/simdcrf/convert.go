package main

import (
	"fmt"
	"io"

	"github.com/simdcrf/simdcrf/model"
)

const convertSynopsis = "convert -m IN -o OUT [--to simdcrf|crfsuite]"

// cmdConvert converts a model between simdcrf's format and CRFsuite's.
func cmdConvert(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("convert", convertSynopsis, stderr)
	in := fs.String("m", "", "the model `FILE` to convert (required): simdcrf's or CRFsuite's format")
	out := fs.String("o", "", "write the converted model to `FILE` (required; written atomically)")
	to := fs.String("to", "", "the `FORMAT` to write, simdcrf or crfsuite (default: the one IN is not in)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *in == "" || *out == "" || fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	from, err := model.FileFormat(*in)
	if err != nil {
		return err
	}
	target := *to
	switch target {
	case "":
		target = model.FormatCRFsuite
		if from == model.FormatCRFsuite {
			target = model.FormatSimdcrf
		}
	case model.FormatSimdcrf, model.FormatCRFsuite:
	default:
		return fmt.Errorf("--to %s: want simdcrf or crfsuite", target)
	}
	m, err := model.Load(*in)
	if err != nil {
		return err
	}
	if target == model.FormatSimdcrf {
		return m.WriteFile(*out)
	}
	if err := m.CRFsuiteCompatible(); err != nil {
		return fmt.Errorf("%s cannot be converted to CRFsuite's format, which would tag differently: %w; %s was not written", *in, err, *out)
	}
	return m.WriteCRFsuiteFile(*out)
}
