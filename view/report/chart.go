package report

import (
	"fmt"
	"math"
)

// Chart geometry, in SVG user units.
const (
	chartH   = 180 // plot height
	chartTop = 10
	chartL   = 64 // room for the token axis
	chartR   = 64 // room for the cost axis
	maxW     = 960
)

// chart draws, per model turn, a stacked bar of its tokens (input, cache
// read, cache write, output) and a line of its cost, as inline SVG.
func (r *renderer) chart() {
	n := len(r.turns)
	if n == 0 {
		return
	}
	step := float64(maxW) / float64(n)
	if step > 40 {
		step = 40
	}
	if step < 2 {
		step = 2
	}
	plotW := step * float64(n)
	// Wide enough for the legend however few the turns.
	width := math.Max(chartL+plotW+chartR, chartL+560)
	var maxTok int64
	var maxCost float64
	haveCost := false
	for _, t := range r.turns {
		maxTok = max(maxTok, t.u.Input+t.u.Output+t.u.CacheRead+t.u.CacheWrite)
		if t.cost != nil {
			haveCost = true
			maxCost = math.Max(maxCost, *t.cost)
		}
	}
	if maxTok == 0 {
		maxTok = 1
	}
	y := func(v float64, top float64) float64 { return chartTop + chartH - v/top*chartH }
	fmt.Fprintf(r.w, "<figure class=\"chart\"><figcaption>Tokens and cost per model turn</figcaption>\n<svg role=\"img\" aria-label=\"tokens and cost per turn\" viewBox=\"0 0 %.0f %d\" width=\"%.0f\" height=\"%d\">\n", width, chartTop+chartH+40, width, chartTop+chartH+40)
	// Axes and their top values.
	fmt.Fprintf(r.w, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", chartL, chartTop, chartL, chartTop+chartH)
	fmt.Fprintf(r.w, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", chartL, chartTop+chartH, chartL+plotW, chartTop+chartH)
	fmt.Fprintf(r.w, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%d</text><text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", chartL-4, chartTop+8, maxTok, chartL-4, chartTop+chartH)
	for i, t := range r.turns {
		x := chartL + float64(i)*step
		w := math.Max(step*0.8, 1)
		fmt.Fprintf(r.w, "<a href=\"#turn-%d\"><g><title>turn %d: %d in, %d cache read, %d cache write, %d out", i+1, i+1, t.u.Input, t.u.CacheRead, t.u.CacheWrite, t.u.Output)
		if t.cost != nil {
			r.w.WriteString(", " + dollars(*t.cost))
		}
		r.w.WriteString("</title>")
		base := 0.0
		for _, part := range []struct {
			class string
			v     int64
		}{{"in", t.u.Input}, {"cr", t.u.CacheRead}, {"cw", t.u.CacheWrite}, {"out", t.u.Output}} {
			if part.v == 0 {
				continue
			}
			y0 := y(base, float64(maxTok))
			base += float64(part.v)
			y1 := y(base, float64(maxTok))
			fmt.Fprintf(r.w, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", part.class, x, y1, w, y0-y1)
		}
		r.w.WriteString("</g></a>\n")
	}
	if haveCost && maxCost > 0 {
		fmt.Fprintf(r.w, "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", chartL+plotW, chartTop, chartL+plotW, chartTop+chartH)
		fmt.Fprintf(r.w, "<text class=\"tick\" x=\"%.1f\" y=\"%d\">%s</text><text class=\"tick\" x=\"%.1f\" y=\"%d\">$0</text>\n", chartL+plotW+4, chartTop+8, dollars(maxCost), chartL+plotW+4, chartTop+chartH)
		r.w.WriteString("<polyline class=\"cost\" points=\"")
		for i, t := range r.turns {
			c := 0.0
			if t.cost != nil {
				c = *t.cost
			}
			fmt.Fprintf(r.w, "%.1f,%.1f ", chartL+float64(i)*step+step*0.4, y(c, maxCost))
		}
		r.w.WriteString("\"/>\n")
	}
	// The legend.
	ly := chartTop + chartH + 24
	lx := chartL
	for _, l := range []struct{ class, label string }{{"in", "input"}, {"cr", "cache read"}, {"cw", "cache write"}, {"out", "output"}} {
		fmt.Fprintf(r.w, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"10\" height=\"10\"/><text class=\"tick\" x=\"%d\" y=\"%d\">%s</text>", l.class, lx, ly-9, lx+14, ly, l.label)
		lx += 100
	}
	if haveCost {
		fmt.Fprintf(r.w, "<line class=\"cost\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><text class=\"tick\" x=\"%d\" y=\"%d\">cost (right axis)</text>", lx, ly-4, lx+12, ly-4, lx+16, ly)
	}
	r.w.WriteString("\n</svg></figure>\n")
}

const style = `
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;--err:#cf222e;--ok:#1a7f37}
*{box-sizing:border-box}
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1100px;padding:16px 24px}
h1{font-size:20px;margin:8px 0}
h3{font-size:13px;color:var(--muted);margin:0 0 6px;font-weight:600}
code,pre,.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{white-space:pre-wrap;word-break:break-word;background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px;margin:4px 0;max-height:none}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0 0 12px}
.meta dt{color:var(--muted)}.meta dd{margin:0;word-break:break-all}
.totals{border-collapse:collapse;margin:8px 0;font-variant-numeric:tabular-nums}
.totals th,.totals td{border:1px solid var(--line);padding:4px 8px;text-align:right}
.totals th{background:var(--soft);font-weight:600;font-size:12px}
.chart{margin:12px 0;overflow-x:auto}
.chart figcaption{color:var(--muted);font-size:12px}
svg .axis{stroke:#8c959f;stroke-width:1}
svg .tick{font-size:11px;fill:var(--muted)}
svg .in{fill:#0969da}svg .cr{fill:#54aeff}svg .cw{fill:#b6e3ff}svg .out{fill:#bf8700}
svg .cost{fill:none;stroke:#cf222e;stroke-width:1.5}
.msg{border:1px solid var(--line);border-radius:8px;padding:10px 12px;margin:10px 0}
.msg.user{border-left:4px solid #0969da}
.msg.assistant{border-left:4px solid #8250df}
.msg.check{border-left:4px solid #bf8700;background:#fff8c5}
details.msg>summary{cursor:pointer;color:var(--muted)}
.text{white-space:pre-wrap;word-break:break-word;margin:4px 0}
.tool{border:1px solid var(--line);border-radius:6px;margin:8px 0;padding:6px 8px;background:#fff}
.tool.error{border-color:var(--err)}
.tool .call b{font-family:ui-monospace,monospace}
.id{color:var(--muted);font-size:11px}
.label{color:var(--muted);font-size:11px;margin-top:4px}
details>summary{cursor:pointer}
.out>summary{color:var(--muted);font-size:12px}
.tool.error .out>summary{color:var(--err)}
.more{display:block;color:var(--muted);font-style:italic}
.all>summary{color:#0969da;font-size:12px}
.note{color:var(--muted);font-style:italic;font-size:12px}
.hook{font-size:12px;margin-top:4px}.hook.deny b{color:var(--err)}
.mark{margin:12px 0;padding:6px 10px;border-radius:6px;background:var(--soft);border:1px dashed var(--line);font-size:13px}
.mark.prune{border-color:#54aeff}
.mark.compaction{border-color:#8250df}
.mark.run{border-style:solid;border-width:2px 0 0 0;border-radius:0;background:none}
.mark.run.ok b{color:var(--ok)}.mark.run.fail b,.err{color:var(--err)}
img{max-width:100%;height:auto;display:block;margin:6px 0;border:1px solid var(--line)}
footer{color:var(--muted);font-size:12px;margin:24px 0}
`
