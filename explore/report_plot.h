// Plots for `weft report`: the time/space scatter of a program's explored variants as a
// self-contained SVG (like Figure 6 of the LIFT paper, Mogers et al. 2020: the Pareto frontier
// of time and space of the variants explored for one layer) and an HTML page that puts one
// such plot per program and device next to its front table.
//
// The scatter has space (bytes) on a logarithmic x axis and the median time (ms) on a
// logarithmic y axis. Every ok variant is a small circle (class "variant"); the Pareto front
// (explore/pareto.h) is a connected line (class "front-line") through square markers (class
// "front-point"), the knee is ringed and labelled (class "knee"), the fastest point labelled
// when it is not the knee (class "fastest-label"), the naive reference, when known, is a
// diamond (class "reference"), and each peer's time for the same work (PyTorch's for a layer,
// recorded by a benchmark: explore/results_db.h PeerRecord) is a dashed horizontal line across
// the frame (class "peer-line"), named with its time in the legend. The subtitle is wrapped to the plot's width (at most three
// lines) and the legend is one row above the frame, so that it never covers a point; the HTML
// page's last table column wraps (the parameters), so that tables fit the window.
// tests/cli/cli_browser_report.cpp checks the laid-out page in headless Chromium. Every data mark carries data-space-bytes and
// data-time-ms attributes and a <title> (the variant's parameters) that browsers show on hover.
// The text is generated directly (no library), with XML escaping of every string from the
// database; tests/explore/test_report_plot.cpp parses it back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "explore/results_db.h"

namespace weft::explore {

struct PlotPoint {
  double spaceBytes = 0;
  double timeMs = 0;
  std::string label;  // shown on hover (the parameters)
};

struct ScatterPlot {
  std::string title;     // e.g. "conv1_2 on device 286e2c810fd78e9a"
  std::string subtitle;  // e.g. the layer's description and the compiler
  std::vector<PlotPoint> variants;  // every ok variant
  std::vector<PlotPoint> front;     // the Pareto front, fastest first
  std::optional<size_t> knee;       // index into front
  std::optional<PlotPoint> reference;
  std::vector<PlotPoint> peers;  // timeMs and label (the peer's name); spaceBytes unused
};

// The plot of `variants` (all statuses; only ok ones with a time and a space are drawn) with
// their front and knee, the reference when given, and the peers' times.
ScatterPlot scatterPlotOf(const std::vector<VariantRecord>& variants, const std::string& title,
                          const std::string& subtitle,
                          const std::optional<ReferenceRecord>& reference,
                          const std::vector<PeerRecord>& peers = {});

// A logarithmic axis from `lo` to `hi` (data units, lo < hi, both > 0) onto pixels
// pixelLo..pixelHi (pixelHi may be below pixelLo: the y axis grows upwards).
struct LogAxis {
  double lo = 1;
  double hi = 10;
  double pixelLo = 0;
  double pixelHi = 1;
  // The pixel of `value`; values <= 0 (no logarithm) are placed at lo.
  double position(double value) const;
  // Tick values inside [lo, hi], increasing: 1-2-5 steps per decade, fewer over many
  // decades, more (1..9) over a narrow range, so that there are between 2 and about 12.
  std::vector<double> ticks() const;
};
// The axis covering every positive value of `values` with a margin (a factor of 1.2 each side;
// a decade around a single value). No positive values: 1..10.
LogAxis logAxisFor(const std::vector<double>& values, double pixelLo, double pixelHi);

struct SvgOptions {
  int width = 760;
  int height = 500;
};
std::string renderScatterSvg(const ScatterPlot& plot, const SvgOptions& options = {});

// One part of the HTML page: a heading, an inline SVG, and tables (column names, rows of cell
// text; every cell is escaped) with notes after them.
struct HtmlTable {
  std::string caption;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};
struct HtmlSection {
  std::string heading;
  std::vector<std::string> lines;  // paragraphs before the plot (escaped)
  std::string svg;                 // inserted as it is
  std::vector<HtmlTable> tables;
};
std::string renderHtmlReport(const std::string& title, const std::vector<HtmlSection>& sections);

// "&", "<", ">", '"' and "'" as entities.
std::string xmlEscaped(const std::string& text);
// A byte count with a decimal unit and up to three significant digits: "512 B", "25 MB".
std::string formatBytes(double bytes);

}  // namespace weft::explore
