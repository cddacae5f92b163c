package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Series is one line of a plot: points (X[i], Y[i]); a point with a value
// a log axis cannot show (≤ 0, NaN, ±Inf) is left out.
type Series struct {
	Name string
	X, Y []float64
}

// LogPlot is a line plot on log–log axes, written as SVG by hand (no
// dependency): tick labels, one line with markers per series, a legend.
type LogPlot struct {
	Title, XLabel, YLabel string
	Series                []Series
}

// plot geometry, in SVG user units.
const (
	plotW, plotH                   = 760, 480
	marginL, marginR, marginT, mB  = 80, 210, 40, 60
	innerW, innerH                 = plotW - marginL - marginR, plotH - marginT - mB
	legendX, legendY, legendStride = plotW - marginR + 20, marginT + 10, 22
)

// palette and dash patterns: series are told apart by both colour and
// line style (and marker shape), so the plot reads in grey too.
var (
	palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"}
	dashes  = []string{"", "6,3", "2,3", "8,3,2,3", "12,4", "4,4", "1,2"}
)

func okLog(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// points returns s's drawable points in order of X.
func (s Series) points() [][2]float64 {
	var out [][2]float64
	for i := range min(len(s.X), len(s.Y)) {
		if okLog(s.X[i]) && okLog(s.Y[i]) {
			out = append(out, [2]float64{s.X[i], s.Y[i]})
		}
	}
	slices.SortFunc(out, func(a, b [2]float64) int {
		switch {
		case a[0] < b[0]:
			return -1
		case a[0] > b[0]:
			return 1
		}
		return 0
	})
	return out
}

// logAxis maps values in [lo, hi] (1, 2 or 5 times a power of ten around
// the data) to pixels.
type logAxis struct {
	lo, hi   float64 // log10 of the ends
	loV, hiV float64 // the ends
	px       float64 // pixels
	flip     bool    // y: larger values up
}

// niceSteps are the mantissas of the axis ends and ticks.
var niceSteps = []float64{1, 2, 5}

// niceBelow is the largest 1, 2 or 5 times a power of ten ≤ v; niceAbove
// the smallest ≥ v.
func niceBelow(v float64) float64 {
	e := math.Floor(math.Log10(v))
	out := math.Pow(10, e)
	for _, s := range niceSteps {
		if c := s * math.Pow(10, e); c <= v*(1+1e-12) {
			out = c
		}
	}
	return out
}

func niceAbove(v float64) float64 {
	e := math.Floor(math.Log10(v))
	for _, s := range append(niceSteps, 10) {
		if c := s * math.Pow(10, e); c >= v*(1-1e-12) {
			return c
		}
	}
	return math.Pow(10, e+1)
}

func newLogAxis(vmin, vmax, px float64, flip bool) logAxis {
	loV, hiV := niceBelow(vmin), niceAbove(vmax)
	if hiV <= loV {
		loV, hiV = niceBelow(vmin/2), niceAbove(vmax*2)
	}
	return logAxis{lo: math.Log10(loV), hi: math.Log10(hiV), loV: loV, hiV: hiV, px: px, flip: flip}
}

func (a logAxis) pos(v float64) float64 {
	f := (math.Log10(v) - a.lo) / (a.hi - a.lo) * a.px
	if a.flip {
		return a.px - f
	}
	return f
}

// ticks returns the tick values in the axis: 1, 2 and 5 times each power
// of ten over at most three decades, powers of ten alone over more (and
// the ends).
func (a logAxis) ticks() []float64 {
	steps := niceSteps
	if a.hi-a.lo > 3 {
		steps = []float64{1}
	}
	var out []float64
	add := func(v float64) {
		l := math.Log10(v)
		if l < a.lo-1e-9 || l > a.hi+1e-9 {
			return
		}
		for _, u := range out {
			if math.Abs(math.Log10(u)-l) < 1e-9 {
				return
			}
		}
		out = append(out, v)
	}
	add(a.loV)
	for e := math.Floor(a.lo); e <= math.Ceil(a.hi); e++ {
		for _, s := range steps {
			add(s * math.Pow(10, e))
		}
	}
	add(a.hiV)
	return out
}

// tickLabel writes a tick value briefly: 0.01, 0.5, 20, 1000.
func tickLabel(v float64) string {
	// Three significant digits first: 5·10⁻³ is not exactly 0.005.
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// f writes a coordinate; every coordinate comes from finite values.
func coord(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// SVG returns the plot as an SVG document. Without a drawable point it
// draws the frame and says so.
func (p LogPlot) SVG() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", plotW, plotH, plotW, plotH)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="24" text-anchor="middle" font-size="15">%s</text>`+"\n", marginL+innerW/2, esc(p.Title))
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for _, q := range s.points() {
			xmin, xmax = min(xmin, q[0]), max(xmax, q[0])
			ymin, ymax = min(ymin, q[1]), max(ymax, q[1])
		}
	}
	fmt.Fprintf(&b, `<g transform="translate(%d,%d)">`+"\n", marginL, marginT)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="none" stroke="black"/>`+"\n", innerW, innerH)
	if math.IsInf(xmin, 1) {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">no data</text>`+"\n", innerW/2, innerH/2)
		b.WriteString("</g>\n</svg>\n")
		return b.Bytes()
	}
	xa, ya := newLogAxis(xmin, xmax, innerW, false), newLogAxis(ymin, ymax, innerH, true)
	for _, v := range xa.ticks() {
		x := coord(xa.pos(v))
		fmt.Fprintf(&b, `<line x1="%s" y1="0" x2="%s" y2="%d" stroke="#ddd"/>`, x, x, innerH)
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", x, innerH+16, tickLabel(v))
	}
	for _, v := range ya.ticks() {
		y := coord(ya.pos(v))
		fmt.Fprintf(&b, `<line x1="0" y1="%s" x2="%d" y2="%s" stroke="#ddd"/>`, y, innerW, y)
		fmt.Fprintf(&b, `<text x="-6" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", y, tickLabel(v))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", innerW/2, innerH+40, esc(p.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(-58,%d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", innerH/2, esc(p.YLabel))
	for i, s := range p.Series {
		col, dash := palette[i%len(palette)], dashes[i%len(dashes)]
		pts := s.points()
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline class="series" fill="none" stroke="%s" stroke-width="2"`, col)
			if dash != "" {
				fmt.Fprintf(&b, ` stroke-dasharray="%s"`, dash)
			}
			b.WriteString(` points="`)
			for k, q := range pts {
				if k > 0 {
					b.WriteByte(' ')
				}
				fmt.Fprintf(&b, "%s,%s", coord(xa.pos(q[0])), coord(ya.pos(q[1])))
			}
			b.WriteString(`"/>` + "\n")
		}
		for _, q := range pts {
			marker(&b, i, col, xa.pos(q[0]), ya.pos(q[1]))
		}
	}
	b.WriteString("</g>\n")
	for i, s := range p.Series {
		col, dash := palette[i%len(palette)], dashes[i%len(dashes)]
		y := legendY + i*legendStride
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"`, legendX, y, legendX+30, y, col)
		if dash != "" {
			fmt.Fprintf(&b, ` stroke-dasharray="%s"`, dash)
		}
		b.WriteString("/>")
		marker(&b, i, col, float64(legendX+15), float64(y))
		name := s.Name
		if len(s.points()) == 0 {
			name += " (no points)"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", legendX+38, y, esc(name))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// marker draws series i's marker at (x, y): circle, square, triangle,
// diamond, in turn.
func marker(b *bytes.Buffer, i int, col string, x, y float64) {
	const r = 4
	switch i % 4 {
	case 0:
		fmt.Fprintf(b, `<circle class="point" cx="%s" cy="%s" r="%d" fill="%s"/>`, coord(x), coord(y), r, col)
	case 1:
		fmt.Fprintf(b, `<rect class="point" x="%s" y="%s" width="%d" height="%d" fill="%s"/>`, coord(x-r), coord(y-r), 2*r, 2*r, col)
	case 2:
		fmt.Fprintf(b, `<polygon class="point" points="%s,%s %s,%s %s,%s" fill="%s"/>`, coord(x), coord(y-r-1), coord(x-r-1), coord(y+r), coord(x+r+1), coord(y+r), col)
	default:
		fmt.Fprintf(b, `<polygon class="point" points="%s,%s %s,%s %s,%s %s,%s" fill="%s"/>`, coord(x), coord(y-r-1), coord(x+r+1), coord(y), coord(x), coord(y+r+1), coord(x-r-1), coord(y), col)
	}
	b.WriteByte('\n')
}
