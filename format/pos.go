package format

import (
	"unicode"
	"unicode/utf8"
)

// posFeatures is the built-in "pos" feature set, for part-of-speech tagging
// and other word-level tasks on column input (the word is column 0, FORM
// in CoNLL-U). For the word at position t it gives:
//
//	b              bias
//	w=, lw=        the word, lower-cased
//	p1= … p4=      prefixes of the lower-cased word, 1..4 runes (as long as the word)
//	s1= … s4=      suffixes likewise
//	sh=            shape: X upper, x lower, d digit, other runes themselves,
//	               runs longer than 4 cut to 4 ("Xxxxx", "dd.dd", "X.X.")
//	cs=            compressed shape: runs cut to 1 ("Xx", "d.d")
//	dg, hy         has a digit, has a hyphen
//	ac, ic         all letters upper case (at least one), initial capital
//	w-2= w-1= w+1= w+2=  the lower-cased words around (CRF++ padding names
//	               _B-1, _B+1, … beyond the sentence)
//	w-1|w=, w|w+1= word bigrams with the neighbours (lower-cased)
//	cs-1=, cs+1=   compressed shapes of the neighbours
//
// Suffixes and shapes carry most of the weight on unknown words; the word
// bigrams help with ambiguous words ("that", "to", "-ing" forms). Measured
// with an averaged perceptron on UD EWT XPOS (train → test, 8 epochs): the
// set without the last four features 94.22%, with them 94.48%; dropping
// the word bigrams alone costs 0.2 points. Suffixes of the neighbours,
// suffix+neighbour pairs, w-2|w-1 and a sentence-initial-capital flag gave
// nothing measurable (±0.1) and are left out to keep the model small.
type posFeatures struct {
	morph bool     // the "morph" set: pos plus morphMore's features
	guess *Guesser // the unknown-word guesser, or nil
	cache []byte   // lower-cased words, then compressed shapes
	lower []int    // start, end of each row's lower-cased word in cache
	cshp  []int    // start, end of each row's compressed shape in cache
	inq   []bool   // morph: the row is inside quotation marks
	n     int
}

// prepare computes the per-row forms the window features share.
func (p *posFeatures) prepare(sent *sentence) {
	p.cache = p.cache[:0]
	p.lower = p.lower[:0]
	p.cshp = p.cshp[:0]
	p.n = sent.rows
	for t := 0; t < sent.rows; t++ {
		w := sent.field(t, 0)
		start := len(p.cache)
		p.cache = appendLower(p.cache, w)
		p.lower = append(p.lower, start, len(p.cache))
		start = len(p.cache)
		p.cache = appendShape(p.cache, w, 1)
		p.cshp = append(p.cshp, start, len(p.cache))
	}
	if p.morph {
		p.quoted(sent)
	}
}

// quoted marks the rows between an opening and a closing quotation mark
// („…“, “…”, «…», »…«, "…"): Czech legal text tags the words of a quoted
// multi-word term X@ (foreign or unknown), whatever they are.
func (p *posFeatures) quoted(sent *sentence) {
	p.inq = p.inq[:0]
	var open string // the mark that closes the quotation, "" outside one
	for t := 0; t < sent.rows; t++ {
		w := string(sent.field(t, 0))
		switch {
		case open != "" && w == open:
			open = ""
			p.inq = append(p.inq, false)
			continue
		case open == "":
			switch w {
			case "„":
				open = "“"
			case "“":
				open = "”"
			case "«":
				open = "»"
			case "»":
				open = "«"
			case "\"":
				open = "\""
			}
			if open != "" {
				p.inq = append(p.inq, false)
				continue
			}
		}
		p.inq = append(p.inq, open != "")
	}
	// An unclosed mark quotes nothing.
	if open != "" {
		for t := len(p.inq) - 1; t >= 0 && p.inq[t]; t-- {
			p.inq[t] = false
		}
	}
}

func (p *posFeatures) lw(t int) []byte { return p.cache[p.lower[2*t]:p.lower[2*t+1]] }
func (p *posFeatures) cs(t int) []byte { return p.cache[p.cshp[2*t]:p.cshp[2*t+1]] }

// ctx appends the lower-cased word at t (or its padding name).
func (p *posFeatures) ctx(dst []byte, t int) []byte {
	if t < 0 || t >= p.n {
		return padding(dst, t, p.n)
	}
	return append(dst, p.lw(t)...)
}

func (p *posFeatures) ctxShape(dst []byte, t int) []byte {
	if t < 0 || t >= p.n {
		return padding(dst, t, p.n)
	}
	return append(dst, p.cs(t)...)
}

// pairs adds two attributes: before, then the previous word, '|' and x;
// after, then x, '|' and the next word.
func (p *posFeatures) pairs(b *builder, t int, before, after string, x []byte) {
	st := len(b.arena)
	b.arena = append(b.arena, before...)
	b.arena = p.ctx(b.arena, t-1)
	b.arena = append(b.arena, '|')
	b.arena = append(b.arena, x...)
	b.mark(st)
	st = len(b.arena)
	b.arena = append(b.arena, after...)
	b.arena = append(b.arena, x...)
	b.arena = append(b.arena, '|')
	b.arena = p.ctx(b.arena, t+1)
	b.mark(st)
}

func (p *posFeatures) item(b *builder, sent *sentence, t int) {
	w := sent.field(t, 0)
	lw := p.lw(t)

	st := b.put("b")
	b.mark(st)
	st = b.put("w=")
	b.arena = append(b.arena, w...)
	b.mark(st)
	st = b.put("lw=")
	b.arena = append(b.arena, lw...)
	b.mark(st)

	// Affixes by runes.
	nr := utf8.RuneCount(lw)
	for k := 1; k <= 4 && k <= nr; k++ {
		st = b.put("p")
		b.arena = append(b.arena, byte('0'+k), '=')
		b.arena = append(b.arena, lw[:runePrefix(lw, k)]...)
		b.mark(st)
	}
	for k := 1; k <= 4 && k <= nr; k++ {
		st = b.put("s")
		b.arena = append(b.arena, byte('0'+k), '=')
		b.arena = append(b.arena, lw[runeSuffix(lw, k):]...)
		b.mark(st)
	}

	st = b.put("sh=")
	b.arena = appendShape(b.arena, w, 4)
	b.mark(st)
	st = b.put("cs=")
	b.arena = append(b.arena, p.cs(t)...)
	b.mark(st)

	digit, hyphen, upper, lower, letters := false, false, 0, 0, 0
	first := true
	initCap := false
	for _, r := range string(w) {
		switch {
		case r >= '0' && r <= '9' || unicode.IsDigit(r):
			digit = true
		case r == '-':
			hyphen = true
		case unicode.IsUpper(r):
			upper++
			letters++
			if first {
				initCap = true
			}
		case unicode.IsLower(r):
			lower++
			letters++
		case unicode.IsLetter(r):
			letters++
		}
		first = false
	}
	if digit {
		b.mark(b.put("dg"))
	}
	if hyphen {
		b.mark(b.put("hy"))
	}
	if upper > 0 && lower == 0 {
		b.mark(b.put("ac"))
	}
	if initCap {
		b.mark(b.put("ic"))
	}

	for _, d := range [...]struct {
		name string
		off  int
	}{{"w-2=", -2}, {"w-1=", -1}, {"w+1=", 1}, {"w+2=", 2}} {
		st = b.put(d.name)
		b.arena = p.ctx(b.arena, t+d.off)
		b.mark(st)
	}
	p.pairs(b, t, "w-1|w=", "w|w+1=", lw)
	st = b.put("cs-1=")
	b.arena = p.ctxShape(b.arena, t-1)
	b.mark(st)
	st = b.put("cs+1=")
	b.arena = p.ctxShape(b.arena, t+1)
	b.mark(st)
	if p.morph {
		p.morphMore(b, t, lw, nr, digit, upper > 0 && lower == 0, initCap)
	}
	if p.guess != nil {
		p.guess.attrs(b, w, lw)
	}
}

// runePrefix is the byte length of the first k runes of s.
func runePrefix(s []byte, k int) int {
	i := 0
	for ; k > 0 && i < len(s); k-- {
		_, n := utf8.DecodeRune(s[i:])
		i += n
	}
	return i
}

// runeSuffix is the byte offset where the last k runes of s start.
func runeSuffix(s []byte, k int) int {
	i := len(s)
	for ; k > 0 && i > 0; k-- {
		_, n := utf8.DecodeLastRune(s[:i])
		i -= n
	}
	return i
}

// appendLower appends s lower-cased (ASCII fast path; invalid UTF-8 bytes
// are kept as they are).
func appendLower(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, c)
		} else {
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
		}
		i += n
	}
	return dst
}

// appendShape appends the shape of s with runs of one class cut to maxRun.
func appendShape(dst, s []byte, maxRun int) []byte {
	var prev rune = -1
	run := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRune(s[i:])
		i += n
		var c rune
		switch {
		case r >= 'A' && r <= 'Z':
			c = 'X'
		case r >= 'a' && r <= 'z':
			c = 'x'
		case r >= '0' && r <= '9':
			c = 'd'
		case r < utf8.RuneSelf:
			c = r
		case unicode.IsUpper(r):
			c = 'X'
		case unicode.IsLower(r) || unicode.IsLetter(r):
			c = 'x'
		case unicode.IsDigit(r):
			c = 'd'
		default:
			c = r
			if r == utf8.RuneError && n == 1 {
				c = '?'
			}
		}
		if c == prev {
			run++
		} else {
			prev, run = c, 1
		}
		if run <= maxRun {
			dst = utf8.AppendRune(dst, c)
		}
	}
	return dst
}

// morphMore adds the "morph" set's features to pos's, for inflected
// languages (Czech positional tags):
//
//	s5= s6= s7=, p5=   longer suffixes and a longer prefix of the lower-cased word
//	s1-1= s2-1= s3-1=, s1+1= s2+1= s3+1=  the neighbours' suffixes
//	p2-1= p2+1=        the neighbours' 2-rune prefixes
//	ic|s3=, dg|s2=     initial capital / digit with the suffix
//	w-1|s3=, s3|w+1=   the previous/next word with the word's suffix
//	q, q|ic=           inside quotation marks, and with it whether capitalised
//	len=               the word's length in runes, 1..9, 10+
//
// Measured on UD Czech CLTT XPOS (train → test, L-BFGS with CRFsuite's
// defaults, M = 304): pos 78.89 %; with the features above but q 78.99 %
// (dev 80.73); with q 82.02 % (dev 83.36): CLTT tags the words of a quoted
// multi-word term X@, and without q the model ran chains of X@ through
// ordinary text. Tried and left out, no gain: the suffixes of the words two
// away (82.01 %, dev 83.22) and the nearest short word to the left with
// the suffix, for prepositions' case (82.01 %, dev 83.39).
func (p *posFeatures) morphMore(b *builder, t int, lw []byte, nr int, digit, allCaps, initCap bool) {
	for k := 5; k <= 7 && k <= nr; k++ {
		st := b.put("s")
		b.arena = append(b.arena, byte('0'+k), '=')
		b.arena = append(b.arena, lw[runeSuffix(lw, k):]...)
		b.mark(st)
	}
	if nr >= 5 {
		st := b.put("p5=")
		b.arena = append(b.arena, lw[:runePrefix(lw, 5)]...)
		b.mark(st)
	}
	for _, d := range [...]int{-1, 1} {
		for k := 1; k <= 3; k++ {
			st := b.put("s")
			b.arena = append(b.arena, byte('0'+k))
			if d < 0 {
				b.arena = append(b.arena, "-1="...)
			} else {
				b.arena = append(b.arena, "+1="...)
			}
			b.arena = p.affix(b.arena, t+d, k, false)
			b.mark(st)
		}
		st := b.put("p2")
		if d < 0 {
			b.arena = append(b.arena, "-1="...)
		} else {
			b.arena = append(b.arena, "+1="...)
		}
		b.arena = p.affix(b.arena, t+d, 2, true)
		b.mark(st)
	}
	s3 := lw[runeSuffix(lw, 3):]
	if initCap {
		st := b.put("ic|s3=")
		b.arena = append(b.arena, s3...)
		b.mark(st)
	}
	if allCaps {
		st := b.put("ac|s3=")
		b.arena = append(b.arena, s3...)
		b.mark(st)
	}
	if digit {
		st := b.put("dg|s2=")
		b.arena = append(b.arena, lw[runeSuffix(lw, 2):]...)
		b.mark(st)
	}
	p.pairs(b, t, "w-1|s3=", "s3|w+1=", s3)
	var st int
	if p.inq[t] {
		b.mark(b.put("q"))
		st = b.put("q|ic=")
		b.arena = append(b.arena, byte('0'+b2i(initCap)))
		b.mark(st)
	}
	st = b.put("len=")
	if nr >= 10 {
		b.arena = append(b.arena, "10+"...)
	} else {
		b.arena = append(b.arena, byte('0'+nr))
	}
	b.mark(st)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// affix appends the k-rune suffix (prefix when pre) of the lower-cased word
// at t, or its padding name beyond the sentence.
func (p *posFeatures) affix(dst []byte, t, k int, pre bool) []byte {
	if t < 0 || t >= p.n {
		return padding(dst, t, p.n)
	}
	w := p.lw(t)
	if pre {
		return append(dst, w[:runePrefix(w, k)]...)
	}
	return append(dst, w[runeSuffix(w, k):]...)
}
