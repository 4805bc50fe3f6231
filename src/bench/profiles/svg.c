/*
 * svg.c -- grouped bar charts for the profile report. The layout is fixed:
 * a title, a legend, the bars on a linear axis from zero with four grid
 * lines, category labels rotated under the groups.
 */
#include "bench/profiles/svg.h"

#include <math.h>
#include <stdio.h>

static const char *const colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                     "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
    }
}

/* A short human label: 1234567 -> "1.23M". */
static void label(double v, char *buf, size_t cap)
{
    if (v < 0)
        snprintf(buf, cap, "n/a");
    else if (v >= 1e9)
        snprintf(buf, cap, "%.2fG", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, cap, "%.2fM", v / 1e6);
    else if (v >= 1e4)
        snprintf(buf, cap, "%.1fk", v / 1e3);
    else if (v >= 10 || v == 0)
        snprintf(buf, cap, "%.0f", v);
    else
        snprintf(buf, cap, "%.1f", v);
}

/* The axis maximum: a round number >= max. */
static double nice_max(double max)
{
    if (max <= 0) return 1;
    double p = pow(10, floor(log10(max)));
    for (double m = 1; m <= 10; m += 0.5)
        if (m * p >= max) return m * p;
    return 10 * p;
}

/* Legend, horizontal grid lines with their values, and the axis label. */
static void frame(FILE *f, int left, int top_y, int plot_h, int width, double top, const char *unit,
                  int nser, const char *const *series)
{
    for (int s = 0; s < nser; s++) {
        int x = left + s * 120;
        fprintf(f, "<rect x=\"%d\" y=\"36\" width=\"12\" height=\"12\" fill=\"%s\"/>", x,
                colors[s % 8]);
        fprintf(f, "<text x=\"%d\" y=\"46\">", x + 16);
        esc(f, series[s]);
        fprintf(f, "</text>\n");
    }
    for (int g = 0; g <= 4; g++) {
        double v = top * g / 4;
        int y = top_y + plot_h - (int)(plot_h * g / 4);
        char lb[32];
        label(v, lb, sizeof(lb));
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>", left, y,
                width - 20, y);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left - 6, y + 4, lb);
    }
    fprintf(f, "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" text-anchor=\"middle\">",
            top_y + plot_h / 2, top_y + plot_h / 2);
    esc(f, unit);
    fprintf(f, "</text>\n");
}

int svg_grouped_bars(const char *path, const char *title, const char *unit, int ncat,
                     const char *const *cats, int nser, const char *const *series,
                     const double *values)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    double max = 0;
    for (int i = 0; i < ncat * nser; i++)
        if (values[i] > max) max = values[i];
    double top = nice_max(max);
    int bw = 18, gap = 24, left = 80, plot_h = 300, top_y = 70;
    int group_w = nser * bw + gap;
    int width = left + ncat * group_w + 40, height = top_y + plot_h + 170;
    if (width < 480) width = 480;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "font-family=\"sans-serif\" font-size=\"11\">\n",
            width, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", left);
    esc(f, title);
    fprintf(f, "</text>\n");
    frame(f, left, top_y, plot_h, width, top, unit, nser, series);
    for (int c = 0; c < ncat; c++) {
        int gx = left + c * group_w + gap / 2;
        for (int s = 0; s < nser; s++) {
            double v = values[s * ncat + c];
            int h = v > 0 ? (int)(plot_h * v / top) : 0;
            int x = gx + s * bw, y = top_y + plot_h - h;
            char lb[32];
            label(v, lb, sizeof(lb));
            fprintf(f,
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">"
                    "<title>%s: %s</title></rect>",
                    x, y, bw - 2, h, colors[s % 8], series[s], lb);
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"8\" text-anchor=\"middle\">%s</text>\n",
                    x + bw / 2, y - 3, lb);
        }
        int lx = gx + nser * bw / 2, ly = top_y + plot_h + 12;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" transform=\"rotate(-35 %d %d)\">",
                lx, ly, lx, ly);
        esc(f, cats[c]);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", left,
            top_y + plot_h, width - 20, top_y + plot_h);
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}
