package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// parseSVG checks that b is well-formed XML with an svg root and returns
// its elements' attributes by element name, in document order.
func parseSVG(t *testing.T, b []byte) map[string][]map[string]string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	out := map[string][]map[string]string{}
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, b)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			a := map[string]string{}
			for _, at := range se.Attr {
				a[at.Name.Local] = at.Value
			}
			out[se.Name.Local] = append(out[se.Name.Local], a)
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q", root)
	}
	return out
}

// polyPoints reads a polyline's points attribute.
func polyPoints(t *testing.T, s string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, p := range strings.Fields(s) {
		x, y, ok := strings.Cut(p, ",")
		if !ok {
			t.Fatalf("point %q", p)
		}
		fx, err1 := strconv.ParseFloat(x, 64)
		fy, err2 := strconv.ParseFloat(y, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("point %q", p)
		}
		out = append(out, [2]float64{fx, fy})
	}
	return out
}

// TestLogPlotSVG: the plot is well-formed SVG; each series' line runs
// right as M grows and up as the value grows (log axes: equal ratios give
// equal steps); points a log axis cannot show (0, negative, NaN, Inf) are
// left out and never written; names are escaped; a series without points
// is named "(no points)" in the legend.
func TestLogPlotSVG(t *testing.T) {
	p := LogPlot{Title: "cost <M> & more", XLabel: "M", YLabel: "s",
		Series: []Series{
			{Name: "a", X: []float64{10, 100, 1000}, Y: []float64{0.01, 0.1, 1}},
			{Name: "b & c", X: []float64{1000, 10, 100, 50}, Y: []float64{4, 1, 2, math.NaN()}},
			{Name: "d", X: []float64{10, 100, 1000, 2000}, Y: []float64{0, -1, math.Inf(1), 3}},
			{Name: "empty"},
		}}
	b := p.SVG()
	if bytes.Contains(b, []byte("NaN")) || bytes.Contains(b, []byte("Inf")) {
		t.Errorf("NaN or Inf written:\n%s", b)
	}
	el := parseSVG(t, b)
	lines := el["polyline"]
	if len(lines) != 2 { // d has one point, empty none
		t.Fatalf("%d polylines, want 2:\n%s", len(lines), b)
	}
	a, bc := polyPoints(t, lines[0]["points"]), polyPoints(t, lines[1]["points"])
	if len(a) != 3 || len(bc) != 3 {
		t.Fatalf("points: %v, %v", a, bc)
	}
	for _, pts := range [][][2]float64{a, bc} {
		for i := 1; i < len(pts); i++ {
			if pts[i][0] <= pts[i-1][0] || pts[i][1] >= pts[i-1][1] {
				t.Errorf("not monotone (x right, y up): %v", pts)
			}
		}
	}
	// a's values grow by ×10 per ×10 of M: equal steps.
	dx1, dx2 := a[1][0]-a[0][0], a[2][0]-a[1][0]
	dy1, dy2 := a[1][1]-a[0][1], a[2][1]-a[1][1]
	if math.Abs(dx1-dx2) > 0.2 || math.Abs(dy1-dy2) > 0.2 {
		t.Errorf("log axes: steps %v %v, %v %v", dx1, dx2, dy1, dy2)
	}
	// 3 + 3 + 1 points, 4 legend markers.
	markers := 0
	for _, name := range []string{"circle", "rect", "polygon"} {
		for _, e := range el[name] {
			if e["class"] == "point" {
				markers++
			}
		}
	}
	if markers != 7+4 {
		t.Errorf("%d markers, want 11", markers)
	}
	s := string(b)
	for _, want := range []string{"cost &lt;M&gt; &amp; more", "b &amp; c", "empty (no points)", ">1000<", ">0.01<"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}

	// Nothing to draw: a frame that says so, still well-formed.
	for _, q := range []LogPlot{{Title: "none"}, {Series: []Series{{Name: "x", X: []float64{1}, Y: []float64{math.NaN()}}}}} {
		b := q.SVG()
		parseSVG(t, b)
		if !bytes.Contains(b, []byte("no data")) || bytes.Contains(b, []byte("NaN")) {
			t.Errorf("empty plot:\n%s", b)
		}
	}
	for v, want := range map[float64]string{5 * math.Pow(10, -3): "0.005", math.Pow(10, math.Log10(2000)): "2000", 0.01: "0.01", 1000: "1000"} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%v) = %q, want %q", v, got, want)
		}
	}
	for _, c := range []struct{ v, below, above float64 }{{12, 10, 20}, {1208, 1000, 2000}, {0.00866, 0.005, 0.01}, {34.7, 20, 50}, {100, 100, 100}} {
		if b, a := niceBelow(c.v), niceAbove(c.v); math.Abs(b-c.below) > 1e-9*c.below || math.Abs(a-c.above) > 1e-9*c.above {
			t.Errorf("%v: nice ends %v, %v; want %v, %v", c.v, b, a, c.below, c.above)
		}
	}
	// Ticks: each once, in range, the ends included.
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{{12, 1208, []string{"10", "20", "50", "100", "200", "500", "1000", "2000"}}, {0.00866, 34.7, []string{"0.005", "0.01", "0.1", "1", "10", "50"}}} {
		var got []string
		for _, v := range newLogAxis(c.lo, c.hi, 100, false).ticks() {
			got = append(got, tickLabel(v))
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("ticks for [%v, %v]: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	// One point: the axes still span a range around it.
	parseSVG(t, LogPlot{Series: []Series{{Name: "one", X: []float64{100}, Y: []float64{1}}}}.SVG())
}
