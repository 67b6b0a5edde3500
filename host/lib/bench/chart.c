/* The bar charts of an evidence folder, bench compare and the Action's job summary: per test, a
 * bar each for stock, shimmed and bare metal (those there are). Two renderings of the same bars:
 * Mermaid's xychart-beta (GitHub renders a ```mermaid block in Markdown: README.md, issues, job
 * summaries; mermaid.js.org/syntax/xyChart.html), and SVG written here (a Mac has no gnuplot). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "error_internal.h"

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

void lm_bench_chart_mermaid(lm_buf *b, const char *heading, const lm_bench_chart *c, size_t n)
{
	size_t i, k;
	int first;

	for (i = 0; i < n; i++) {
		lm_buf_adds(b, "```mermaid\nxychart-beta\n    title \"");
		if (heading != NULL && heading[0] != '\0') {
			mermaid_text(b, heading);
			lm_buf_adds(b, ": ");
		}
		mermaid_text(b, c[i].title);
		lm_buf_addf(b, " (%s, %s)\"\n    x-axis [", c[i].unit, direction(c[i].unit));
		for (k = 0, first = 1; k < 3; k++) {
			if (!(c[i].values[k] > 0))
				continue;
			lm_buf_adds(b, first ? "\"" : ", \"");
			mermaid_text(b, c[i].labels[k]);
			lm_buf_adds(b, "\"");
			first = 0;
		}
		lm_buf_addf(b, "]\n    y-axis \"%s\"\n    bar [", c[i].unit);
		for (k = 0, first = 1; k < 3; k++) {
			if (!(c[i].values[k] > 0))
				continue;
			lm_buf_addf(b, "%s%.2f", first ? "" : ", ", c[i].values[k]);
			first = 0;
		}
		lm_buf_adds(b, "]\n```\n\n");
	}
}

/* Text content and attribute values: the five characters XML reserves escaped. */
static void xml_text(lm_buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
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

#define PANEL_W 300
#define PANEL_H 260
#define TOP 60      /* the heading, then each panel's title */
#define PLOT_H 160  /* the tallest bar */
#define BAR_W 60

static const char *const colors[3] = {"#9e9e9e", "#2e7d32", "#1565c0"}; /* stock, shimmed, bare metal */

int lm_bench_chart_svg(const char *heading, const lm_bench_chart *c, size_t n, char **out)
{
	const size_t width = (n > 0 ? n : 1) * PANEL_W + 20, height = TOP + PANEL_H;
	size_t i, k;
	lm_buf b;

	*out = NULL;
	lm_buf_init(&b, LM_BUF_TEXT_MAX);
	lm_buf_addf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%zu\" height=\"%zu\" viewBox=\"0 0 %zu %zu\" "
	    "font-family=\"Helvetica, Arial, sans-serif\">\n<title>", width, height, width, height);
	xml_text(&b, heading != NULL ? heading : "lume-metal bench");
	lm_buf_addf(&b, "</title>\n<rect width=\"%zu\" height=\"%zu\" fill=\"#ffffff\"/>\n"
	    "<text class=\"heading\" x=\"10\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", width, height);
	xml_text(&b, heading != NULL ? heading : "lume-metal bench");
	lm_buf_adds(&b, "</text>\n");
	for (i = 0; i < n; i++) {
		const double x0 = 10.0 + (double)(i * PANEL_W), base = TOP + 30 + PLOT_H;
		double max = 0, x;
		size_t bars = 0;

		for (k = 0; k < 3; k++) {
			if (c[i].values[k] > max)
				max = c[i].values[k];
			bars += c[i].values[k] > 0;
		}
		lm_buf_addf(&b, "<g class=\"chart\" data-test=\"");
		xml_text(&b, c[i].title);
		lm_buf_addf(&b, "\">\n<text class=\"title\" x=\"%.1f\" y=\"%d\" font-size=\"14\">", x0, TOP);
		xml_text(&b, c[i].title);
		lm_buf_addf(&b, " (%s, %s)</text>\n", c[i].unit, direction(c[i].unit));
		lm_buf_addf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n", x0, base,
		    x0 + PANEL_W - 20, base);
		x = x0 + (PANEL_W - 20 - (double)bars * (BAR_W + 20)) / 2 + 10;
		for (k = 0; k < 3; k++) {
			const double v = c[i].values[k], h = max > 0 ? v / max * PLOT_H : 0;
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
			x += BAR_W + 20;
		}
		lm_buf_adds(&b, "</g>\n");
	}
	lm_buf_adds(&b, "</svg>\n");
	return lm_buf_take(&b, out, NULL);
}
