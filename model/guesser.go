package model

import "github.com/simdcrf/simdcrf/format"

// A model trained with an unknown-word guesser (format.Guesser: the
// "pos" and "morph" feature sets' guesses of rare and unknown words'
// labels) stores it in section 34, format.Guesser's own encoding, marked
// needed like every section: tagging without it would extract other
// attributes than training did. Load puts it in Meta.Spec.Guesser, where
// every reader of the model's input (simdcrf tag, the front door,
// simdcrf-beam) finds it through Spec.Options.
const secGuesser = 34

// guesserSection returns the section of m's guesser (none without).
func (m *Model) guesserSection() ([]section, error) {
	g := m.Meta.Spec.Guesser
	if g == nil {
		return nil, nil
	}
	b, err := g.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return []section{{secGuesser, b}}, nil
}

// parseGuesser reads the guesser section, if any, into m.
func parseGuesser(name string, secs map[uint32][]byte, m *Model) error {
	b, ok := secs[secGuesser]
	if !ok {
		return nil
	}
	if m.Meta.Spec.Features == "" {
		return formatError(name, "a guesser section, but no feature set to add its attributes to")
	}
	g, err := format.UnmarshalGuesser(b)
	if err != nil {
		return formatError(name, "%v", err)
	}
	m.Meta.Spec.Guesser = g
	return nil
}
