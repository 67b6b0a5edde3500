/* The bar charts of an evidence folder, bench compare and the Action's job summary: per test, a
 * bar each for stock, shimmed and bare metal (those there are). Two renderings of the same bars:
 * Mermaid's xychart-beta (GitHub renders a ```mermaid block in Markdown: README.md, issues, job
 * summaries; mermaid.js.org/syntax/xyChart.html), and SVG written here (a Mac has no gnuplot).
 *
 * Neither may mislead: the value axis starts at zero (Mermaid starts it at the smallest bar unless
 * told the range), every bar carries its figure, each arm keeps one colour everywhere (stock grey,
 * unlocked green, bare metal blue) and the speed-up is written on the chart. tests/render renders
 * both in Chromium and checks the drawn picture (docs/testing.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "error_internal.h"

/* One colour per arm, in the order of lm_bench_chart's bars: stock, shimmed (unlocked), bare metal. */
static const char *const colors[3] = {"#9e9e9e", "#2e7d32", "#1565c0"};

/* Text inside a Mermaid string: its quote cannot be escaped there, so it becomes an apostrophe. */
static void mermaid_text(lm_buf *b, const char *s)
{
	for (; *s != '\0'; s++)
		lm_buf_add(b, *s == '"' ? "'" : s, 1);
}

static const char *direction(const char *unit)
{
	return strcmp(unit, "s") == 0 ? "lower is faster" : "higher is faster";
}

double lm_bench_chart_speedup(const lm_bench_chart *c)
{
	if (!(c->values[0] > 0) || !(c->values[1] > 0))
		return 0;
	/* Wall-clock seconds: lower is faster, so the speed-up is stock / shimmed. */
	return strcmp(c->unit, "s") == 0 ? c->values[0] / c->values[1] : c->values[1] / c->values[0];
}

/* The top of a value axis that starts at 0: above max by a tenth (room for the bars' figures),
 * rounded up to a multiple of a 1, 2, 2.5 or 5 step giving at most 6 ticks; *step is that step. */
double lm_bench_chart_axis_max(double max, double *step)
{
	static const double mult[] = {0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10};
	/* A figure from a folder is whatever its files say: kept within what the loops below and a
	 * long long can take (a hostile 1e308 or 1e-300 still draws). */
	const double raw = !(max > 1e-6) ? (max > 0 ? 1.1e-6 : 1) : max > 1e300 ? 1.1e300 : max * 1.1;
	double p = 1, s = 10, q;
	long long ticks;
	size_t i;

	while (raw / p >= 10)
		p *= 10;
	while (raw / p < 1)
		p /= 10;
	/* raw / p is in [1, 10): the smallest step m * p that needs at most 5 steps. */
	for (i = 0; i < sizeof(mult) / sizeof(mult[0]); i++) {
		s = mult[i] * p;
		if (raw / s <= 5)
			break;
	}
	q = raw / s;
	ticks = (long long)q;
	if ((double)ticks < q)
		ticks++;
	if (step != NULL)
		*step = s;
	return s * (double)ticks;
}

/* A figure as the charts print it: 2 decimals, as the tables. */
static void figure(lm_buf *b, double v)
{
	lm_buf_addf(b, "%.2f", v);
}

void lm_bench_chart_mermaid(lm_buf *b, const char *heading, const lm_bench_chart *c, size_t n)
{
	size_t i, k, j;
	int first;

	for (i = 0; i < n; i++) {
		double max = 0, top, speedup = lm_bench_chart_speedup(&c[i]);

		for (k = 0; k < 3; k++)
			if (c[i].values[k] > max)
				max = c[i].values[k];
		top = lm_bench_chart_axis_max(max, NULL);
		/* The arms' colours: Mermaid gives the Nth bar series the Nth colour of plotColorPalette
		 * (mermaid 12.4.0, src/diagrams/xychart/chartBuilder/components/plot/index.ts), so each arm
		 * is a series of its own and keeps its colour in every chart. Each bar's figure is in its
		 * category's label under it, not in Mermaid's showDataLabel: 12.4.0 labels every series'
		 * bars with the first series' figures (xychartRenderer.ts: labelData = plots[0].data).
		 * width and titleFontSize make room for the title, which Mermaid does not wrap
		 * (mermaid.js.org/syntax/xyChart.html, "Chart Configurations"). */
		lm_buf_adds(b, "```mermaid\n%%{init: {\"xyChart\": {\"width\": 800, \"titleFontSize\": 16}, "
		    "\"themeVariables\": {\"xyChart\": {\"plotColorPalette\": \"");
		for (k = 0, first = 1; k < 3; k++) {
			if (!(c[i].values[k] > 0))
				continue;
			lm_buf_addf(b, "%s%s", first ? "" : ", ", colors[k]);
			first = 0;
		}
		/* A short title (Mermaid does not wrap it): what, and the speed-up. */
		lm_buf_adds(b, "\"}}}}%%\nxychart-beta\n    title \"");
		if (heading != NULL && heading[0] != '\0') {
			mermaid_text(b, heading);
			lm_buf_adds(b, " ");
		}
		mermaid_text(b, c[i].title);
		if (speedup > 0)
			lm_buf_addf(b, ": %.2f× unlocked / stock", speedup);
		lm_buf_adds(b, "\"\n    x-axis [");
		for (k = 0, first = 1; k < 3; k++) {
			if (!(c[i].values[k] > 0))
				continue;
			lm_buf_adds(b, first ? "\"" : ", \"");
			mermaid_text(b, c[i].labels[k]);
			lm_buf_adds(b, " ");
			figure(b, c[i].values[k]);
			lm_buf_adds(b, "\"");
			first = 0;
		}
		/* The value axis from 0, always: without a range Mermaid starts it at the smallest bar. */
		lm_buf_addf(b, "]\n    y-axis \"%s, %s\" 0 --> %g\n", c[i].unit, direction(c[i].unit), top);
		/* Each series has a figure at its own arm's place and, at the other arms' places, -top:
		 * a series has a value for every category, and Mermaid draws a bar from the plot's bottom
		 * edge, a little below the axis' 0 (barPlot.ts: height = the plot's bottom - y; the axis
		 * keeps half a tick label of padding, linearAxis), so a 0 there would be a sliver with a "0"
		 * over it. A value below the axis makes a negative height, which SVG does not draw
		 * (SVG 1.1, 9.2 "The rect element": a negative height is an error, the element not
		 * rendered). */
		for (k = 0; k < 3; k++) {
			if (!(c[i].values[k] > 0))
				continue;
			lm_buf_adds(b, "    bar [");
			for (j = 0, first = 1; j < 3; j++) {
				if (!(c[i].values[j] > 0))
					continue;
				lm_buf_adds(b, first ? "" : ", ");
				if (j == k)
					figure(b, c[i].values[j]);
				else
					lm_buf_addf(b, "%g", -top);
				first = 0;
			}
			lm_buf_adds(b, "]\n");
		}
		lm_buf_adds(b, "```\n\n");
	}
}

/* Text content and attribute values: the five characters XML reserves escaped; n bytes of s (or
 * to its end). */
static void xml_text_n(lm_buf *b, const char *s, size_t n)
{
	for (; n > 0 && *s != '\0'; s++, n--) {
		switch (*s) {
		case '&': lm_buf_adds(b, "&amp;"); break;
		case '<': lm_buf_adds(b, "&lt;"); break;
		case '>': lm_buf_adds(b, "&gt;"); break;
		case '"': lm_buf_adds(b, "&quot;"); break;
		case '\'': lm_buf_adds(b, "&apos;"); break;
		default:
			/* Control characters are not XML 1.0 characters: left out. */
			if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
				lm_buf_add(b, s, 1);
		}
	}
}

static void xml_text(lm_buf *b, const char *s)
{
	xml_text_n(b, s, strlen(s));
}

/* The SVG: a grid of panels, at most COLS a row, so that it fits a page (20 + 3 * 320 = 980 px). */
#define COLS 3
#define PANEL_W 320
#define PANEL_H 300
#define TOP 64        /* the heading and the legend */
#define AXIS_W 56     /* the value axis' figures, left of each plot */
#define PLOT_TOP 72   /* below a panel's title, subtitle and speed-up line */
#define PLOT_H 170    /* the axis' top figure */
#define BAR_W 56
#define TITLE_CHARS 40 /* a longer title is fitted to the panel (textLength) */

/* The value axis' top per chart: one shared scale per metric (the charts of the same test and
 * unit), so that two panels of pp512 can be compared by eye. */
static double shared_max(const lm_bench_chart *c, size_t n, size_t i, double *step)
{
	const char *metric = c[i].metric != NULL ? c[i].metric : c[i].title;
	double max = 0;
	size_t j, k;

	for (j = 0; j < n; j++) {
		const char *m = c[j].metric != NULL ? c[j].metric : c[j].title;
		if (strcmp(m, metric) != 0 || strcmp(c[j].unit, c[i].unit) != 0)
			continue;
		for (k = 0; k < 3; k++)
			if (c[j].values[k] > max)
				max = c[j].values[k];
	}
	return lm_bench_chart_axis_max(max, step);
}

/* One line of text: len bytes of text, then sep and suffix when suffix is given; fitted to fit pixels (textLength) when longer
 * than TITLE_CHARS characters. */
static void svg_text_fitted(lm_buf *b, const char *cls, double x, double y, int size, const char *weight,
    const char *text, size_t len, const char *sep, const char *suffix, double fit)
{
	lm_buf_addf(b, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\" font-size=\"%d\"%s%s%s", cls, x, y, size,
	    weight ? " font-weight=\"" : "", weight ? weight : "", weight ? "\"" : "");
	if (len + (suffix ? strlen(sep) + strlen(suffix) : 0) > TITLE_CHARS)
		lm_buf_addf(b, " textLength=\"%.1f\" lengthAdjust=\"spacingAndGlyphs\"", fit);
	lm_buf_adds(b, ">");
	for (; len > 0 && *text != '\0'; len--, text++)
		xml_text_n(b, text, 1);
	if (suffix != NULL) {
		xml_text(b, sep);
		xml_text(b, suffix);
	}
	lm_buf_adds(b, "</text>\n");
}

int lm_bench_chart_svg(const char *heading, const lm_bench_chart *c, size_t n, char **out)
{
	const size_t cols = n == 0 ? 1 : n < COLS ? n : COLS, rows = n == 0 ? 1 : (n + COLS - 1) / COLS;
	const size_t width = cols * PANEL_W + 20, height = TOP + rows * PANEL_H;
	static const char *const legend[3] = {"stock", "unlocked", "bare metal"};
	const char *comma, *rest;
	size_t i, k;
	lm_buf b;

	*out = NULL;
	if (heading == NULL)
		heading = "lume-metal bench";
	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	lm_buf_addf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%zu\" height=\"%zu\" viewBox=\"0 0 %zu %zu\" "
	    "font-family=\"Helvetica, Arial, sans-serif\">\n<title>", width, height, width, height);
	xml_text(&b, heading);
	lm_buf_addf(&b, "</title>\n<rect width=\"%zu\" height=\"%zu\" fill=\"#ffffff\"/>\n", width, height);
	svg_text_fitted(&b, "heading", 10, 24, 16, "bold", heading, strlen(heading), NULL, NULL, (double)width - 20);
	/* The legend, in the heading's band: never over a bar. */
	lm_buf_adds(&b, "<g class=\"legend\">\n");
	for (k = 0; k < 3; k++) {
		const double x = 10 + (double)k * 120;
		lm_buf_addf(&b, "<rect x=\"%.1f\" y=\"38\" width=\"14\" height=\"14\" fill=\"%s\"/>\n"
		    "<text class=\"legend-label\" x=\"%.1f\" y=\"50\" font-size=\"12\">%s</text>\n", x, colors[k], x + 20,
		    legend[k]);
	}
	lm_buf_adds(&b, "</g>\n");
	for (i = 0; i < n; i++) {
		const double x0 = 10.0 + (double)((i % COLS) * PANEL_W), y0 = TOP + (double)((i / COLS) * PANEL_H);
		const double plot_x = x0 + AXIS_W, plot_w = PANEL_W - AXIS_W - 14, base = y0 + PLOT_TOP + PLOT_H;
		double step, top = shared_max(c, n, i, &step), t, x, speedup = lm_bench_chart_speedup(&c[i]);
		size_t bars = 0;

		for (k = 0; k < 3; k++)
			bars += c[i].values[k] > 0;
		lm_buf_addf(&b, "<g class=\"chart\" data-test=\"");
		xml_text(&b, c[i].title);
		lm_buf_addf(&b, "\" data-axis-max=\"%g\">\n", top);
		/* The title on two lines when it has a comma ("TinyLlama 1.1B Chat Q4_K_M pp512" / "Cua"),
		 * each fitted to the panel; then the speed-up. */
		comma = strrchr(c[i].title, ',');
		svg_text_fitted(&b, "title", x0, y0 + 16, 13, "bold", c[i].title,
		    comma != NULL ? (size_t)(comma - c[i].title) : strlen(c[i].title), NULL, NULL, PANEL_W - 20);
		rest = comma != NULL ? comma + 1 + (comma[1] == ' ') : "";
		svg_text_fitted(&b, "subtitle", x0, y0 + 33, 12, NULL, rest, strlen(rest), rest[0] ? ", " : "", c[i].unit,
		    PANEL_W - 20);
		if (speedup > 0)
			lm_buf_addf(&b, "<text class=\"speedup\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"%s\">"
			    "%.2f× unlocked / stock (%s)</text>\n", x0, y0 + 50, colors[1], speedup, direction(c[i].unit));
		else
			lm_buf_addf(&b, "<text class=\"speedup\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s</text>\n", x0, y0 + 50,
			    direction(c[i].unit));
		/* The value axis: from 0, a tick and a grid line per step. */
		lm_buf_addf(&b, "<g class=\"axis\">\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n",
		    plot_x, base, plot_x, base - PLOT_H);
		for (t = 0; t <= top + step / 1000; t += step) {
			const double y = base - t / top * PLOT_H;
			lm_buf_addf(&b, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n",
			    plot_x - 4, y, plot_x, y);
			if (t > 0)
				lm_buf_addf(&b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n",
				    plot_x, y, plot_x + plot_w, y);
			lm_buf_addf(&b, "<text class=\"tick-label\" data-value=\"%g\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
			    "text-anchor=\"end\">%g</text>\n", t, plot_x - 6, y + 4, t);
		}
		lm_buf_addf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n</g>\n", plot_x, base,
		    plot_x + plot_w, base);
		x = plot_x + (plot_w - (double)bars * (BAR_W + 24) + 24) / 2;
		for (k = 0; k < 3; k++) {
			const double v = c[i].values[k], h = v / top * PLOT_H;
			if (!(v > 0))
				continue;
			lm_buf_addf(&b, "<rect class=\"bar\" data-label=\"");
			xml_text(&b, c[i].labels[k]);
			lm_buf_addf(&b, "\" data-value=\"%.2f\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"/>\n",
			    v, x, base - h, BAR_W, h, colors[k]);
			lm_buf_addf(&b, "<text class=\"value\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">"
			    "%.2f</text>\n", x + BAR_W / 2.0, base - h - 4, v);
			lm_buf_addf(&b, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">",
			    x + BAR_W / 2.0, base + 16);
			xml_text(&b, c[i].labels[k]);
			lm_buf_adds(&b, "</text>\n");
			x += BAR_W + 24;
		}
		lm_buf_adds(&b, "</g>\n");
	}
	lm_buf_adds(&b, "</svg>\n");
	return lm_buf_take(&b, out, NULL);
}
