// report_plot.h: the time/space scatter as SVG (log-log axes, front, knee, reference) and the
// HTML page of `weft report --html`.
#include "explore/report_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "explore/pareto.h"

namespace weft::explore {

namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

// Up to three significant digits: 0.025, 2, 150; large values in full (15000, not 1.5e+04).
std::string shortNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  if (std::strchr(text, 'e') != nullptr && std::fabs(value) >= 1) {
    std::snprintf(text, sizeof text, "%.0f", value);
  }
  return text;
}

// `text` in lines of at most `width` characters, broken after spaces, commas and semicolons (a
// word longer than a line is cut); at most `maxLines`, the last ending in "…" when text is left.
std::vector<std::string> wrappedLines(const std::string& text, size_t width, size_t maxLines) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size() && lines.size() < maxLines) {
    while (at < text.size() && text[at] == ' ') ++at;
    if (at >= text.size()) break;
    size_t end = std::min(text.size(), at + width);
    if (end < text.size()) {
      size_t cut = text.find_last_of(" ,;", end - 1);
      if (cut != std::string::npos && cut >= at + width / 2) end = cut + 1;
    }
    std::string line = text.substr(at, end - at);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    at = end;
    if (lines.size() + 1 == maxLines && at < text.size()) {
      if (line.size() + 3 > width) line.resize(width - 3);
      line += "…";
    }
    lines.push_back(line);
  }
  return lines;
}

PlotPoint pointOf(const VariantRecord& v) {
  return {static_cast<double>(*v.spaceBytes), static_cast<double>(*v.medianNs) / 1e6,
          v.key.parameters};
}

}  // namespace

std::string xmlEscaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string formatBytes(double bytes) {
  static const char* const units[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  double value = bytes;
  while (std::fabs(value) >= 1000 && unit < 4) {
    value /= 1000;
    ++unit;
  }
  return shortNumber(value) + " " + units[unit];
}

ScatterPlot scatterPlotOf(const std::vector<VariantRecord>& variants, const std::string& title,
                          const std::string& subtitle,
                          const std::optional<ReferenceRecord>& reference,
                          const std::vector<PeerRecord>& peers) {
  ScatterPlot plot;
  plot.title = title;
  plot.subtitle = subtitle;
  for (const VariantRecord& v : variants) {
    if (v.status == VariantStatus::Ok && v.medianNs && v.spaceBytes) {
      plot.variants.push_back(pointOf(v));
    }
  }
  std::vector<VariantRecord> front = paretoFront(variants);
  for (const VariantRecord& v : front) plot.front.push_back(pointOf(v));
  if (!front.empty()) plot.knee = kneeIndex(front);
  if (reference && reference->medianNs > 0 && reference->spaceBytes > 0) {
    plot.reference = PlotPoint{static_cast<double>(reference->spaceBytes),
                               static_cast<double>(reference->medianNs) / 1e6,
                               "naive reference (default lowering)"};
  }
  for (const PeerRecord& peer : peers) {
    if (peer.medianNs > 0) {
      plot.peers.push_back(PlotPoint{0, static_cast<double>(peer.medianNs) / 1e6, peer.peer});
    }
  }
  return plot;
}

double LogAxis::position(double value) const {
  double v = value > 0 ? value : lo;
  double t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  return pixelLo + t * (pixelHi - pixelLo);
}

std::vector<double> LogAxis::ticks() const {
  auto collect = [&](const std::vector<int>& mantissas, int decadeStep) {
    std::vector<double> out;
    int first = static_cast<int>(std::floor(std::log10(lo))) - 1;
    int last = static_cast<int>(std::ceil(std::log10(hi))) + 1;
    for (int e = first; e <= last; ++e) {
      if (decadeStep > 1 && ((e % decadeStep) + decadeStep) % decadeStep != 0) continue;
      for (int m : mantissas) {
        // Rounded through text so that 0.1 * 3 prints and compares as 0.3.
        double value = std::stod(std::to_string(m) + "e" + std::to_string(e));
        if (value >= lo * (1 - 1e-9) && value <= hi * (1 + 1e-9)) out.push_back(value);
      }
    }
    return out;
  };
  std::vector<double> ticks = collect({1, 2, 5}, 1);
  if (ticks.size() < 3) ticks = collect({1, 2, 3, 4, 5, 6, 7, 8, 9}, 1);
  if (ticks.size() > 12) ticks = collect({1}, 1);
  for (int step = 2; ticks.size() > 12; ++step) ticks = collect({1}, step);
  if (ticks.size() < 2) {
    // Narrower than one step of 1..9 (e.g. 25 MB to 31 MB): evenly spaced round values.
    double step = std::pow(10.0, std::floor(std::log10((hi - lo) / 4)));
    if ((hi - lo) / step > 10) step *= 2;
    if ((hi - lo) / step > 10) step *= 2.5;
    ticks.clear();
    for (double value = std::ceil(lo / step) * step; value <= hi * (1 + 1e-12); value += step) {
      ticks.push_back(std::round(value / step) * step);
    }
  }
  return ticks;
}

LogAxis logAxisFor(const std::vector<double>& values, double pixelLo, double pixelHi) {
  double lo = 0, hi = 0;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) continue;
    lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
  LogAxis axis;
  axis.pixelLo = pixelLo;
  axis.pixelHi = pixelHi;
  if (hi == 0) {
    axis.lo = 1;
    axis.hi = 10;
  } else if (hi / lo < 1.01) {
    axis.lo = lo / std::sqrt(10.0);
    axis.hi = hi * std::sqrt(10.0);
  } else {
    axis.lo = lo / 1.2;
    axis.hi = hi * 1.2;
  }
  return axis;
}

namespace {

// The dash pattern of the i-th peer's line, so that several peers stay apart in the legend.
const char* peerDash(size_t i) {
  static const char* const dashes[] = {"6 4", "2 3", "10 3 2 3", "12 6"};
  return dashes[i % 4];
}

// The legend text of a peer: its name and time.
std::string peerLegendText(const PlotPoint& peer) {
  return peer.label + ": " + shortNumber(peer.timeMs) + " ms";
}

}  // namespace

std::string renderScatterSvg(const ScatterPlot& plot, const SvgOptions& options) {
  const double width = options.width, height = options.height;
  // The subtitle in lines that fit the width (about 6.5 px per character at 12 px), at most 3;
  // the legend above the frame, so that it never covers a point: the fixed entries on one row,
  // then the peers, each entry starting a new row when it would pass the frame's right edge.
  const std::vector<std::string> subtitleLines =
      wrappedLines(plot.subtitle, static_cast<size_t>(std::max(20.0, (width - 40) / 6.5)), 3);
  const double legendY = 40 + 15 * static_cast<double>(subtitleLines.size());
  const double left = 90, right = width - 30, bottom = height - 64;
  const double firstPeerX = left + 330 + (plot.reference ? 120 : 0);
  std::vector<std::pair<double, double>> peerLegendAt;  // (x, y) of each peer's entry
  {
    double lx = firstPeerX, ly = legendY;
    for (const PlotPoint& peer : plot.peers) {
      const double entryWidth = 30 + 6.5 * static_cast<double>(peerLegendText(peer).size());
      if (lx + entryWidth > right && lx > left) {
        lx = left;
        ly += 16;
      }
      peerLegendAt.emplace_back(lx, ly);
      lx += entryWidth + 14;
    }
  }
  const double legendBottom = peerLegendAt.empty() ? legendY : peerLegendAt.back().second;
  const double top = legendBottom + 20;
  std::vector<double> spaces, times;
  auto add = [&](const PlotPoint& p) {
    spaces.push_back(p.spaceBytes);
    times.push_back(p.timeMs);
  };
  for (const PlotPoint& p : plot.variants) add(p);
  for (const PlotPoint& p : plot.front) add(p);
  if (plot.reference) add(*plot.reference);
  for (const PlotPoint& peer : plot.peers) times.push_back(peer.timeMs);
  const LogAxis x = logAxisFor(spaces, left, right);
  const LogAxis y = logAxisFor(times, bottom, top);  // faster lower down

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << options.width << "\" height=\""
      << options.height << "\" viewBox=\"0 0 " << options.width << " " << options.height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<title>" << xmlEscaped(plot.title) << "</title>\n";
  svg << "<style>.grid{stroke:#ddd;stroke-width:1}.frame{fill:none;stroke:#333}"
         ".variant{fill:#7aa6d6;fill-opacity:0.6;stroke:#3a6ea5;stroke-width:0.5}"
         ".front-line{fill:none;stroke:#d1495b;stroke-width:2}"
         ".front-point{fill:#d1495b;stroke:#fff;stroke-width:1}"
         ".knee{fill:none;stroke:#1b998b;stroke-width:2.5}"
         ".reference{fill:#edae49;stroke:#333;stroke-width:1}"
         ".peer-line,.peer-key{stroke:#6a4c93;stroke-width:1.5;fill:none}</style>\n";
  svg << "<rect x=\"0\" y=\"0\" width=\"" << options.width << "\" height=\"" << options.height
      << "\" fill=\"#fff\"/>\n";
  svg << "<text class=\"plot-title\" x=\"" << number(width / 2) << "\" y=\"22\" "
      << "text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" << xmlEscaped(plot.title)
      << "</text>\n";
  if (!subtitleLines.empty()) {
    svg << "<text class=\"plot-subtitle\" text-anchor=\"middle\" fill=\"#555\">";
    for (size_t i = 0; i < subtitleLines.size(); ++i) {
      svg << "<tspan x=\"" << number(width / 2) << "\" y=\"" << number(40 + 15 * static_cast<double>(i))
          << "\">" << xmlEscaped(subtitleLines[i]) << "</tspan>";
    }
    svg << "</text>\n";
  }
  // Grid, ticks and their labels.
  svg << "<g class=\"x-axis\">\n";
  for (double tick : x.ticks()) {
    double px = x.position(tick);
    svg << "<line class=\"grid\" x1=\"" << number(px) << "\" y1=\"" << number(top) << "\" x2=\""
        << number(px) << "\" y2=\"" << number(bottom) << "\"/>\n";
    svg << "<text class=\"tick-label\" data-value=\"" << tick << "\" x=\"" << number(px)
        << "\" y=\"" << number(bottom + 16) << "\" text-anchor=\"middle\">"
        << xmlEscaped(formatBytes(tick)) << "</text>\n";
  }
  svg << "</g>\n<g class=\"y-axis\">\n";
  for (double tick : y.ticks()) {
    double py = y.position(tick);
    svg << "<line class=\"grid\" x1=\"" << number(left) << "\" y1=\"" << number(py) << "\" x2=\""
        << number(right) << "\" y2=\"" << number(py) << "\"/>\n";
    svg << "<text class=\"tick-label\" data-value=\"" << tick << "\" x=\"" << number(left - 6)
        << "\" y=\"" << number(py + 4) << "\" text-anchor=\"end\">" << shortNumber(tick)
        << "</text>\n";
  }
  svg << "</g>\n";
  svg << "<rect class=\"frame\" x=\"" << number(left) << "\" y=\"" << number(top)
      << "\" width=\"" << number(right - left) << "\" height=\"" << number(bottom - top)
      << "\"/>\n";
  svg << "<text class=\"axis-title\" x=\"" << number((left + right) / 2) << "\" y=\""
      << number(height - 24) << "\" text-anchor=\"middle\">space: global memory of all buffers "
      << "(bytes, log scale)</text>\n";
  svg << "<text class=\"axis-title\" transform=\"translate(22 " << number((top + bottom) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">median time (ms, log scale)</text>\n";

  auto dataAttributes = [](const PlotPoint& p) {
    char text[96];
    std::snprintf(text, sizeof text, " data-space-bytes=\"%.0f\" data-time-ms=\"%.6g\"",
                  p.spaceBytes, p.timeMs);
    return std::string(text);
  };
  auto hover = [](const PlotPoint& p) {
    return "<title>" +
           xmlEscaped(shortNumber(p.timeMs) + " ms, " + formatBytes(p.spaceBytes) + ": " +
                      p.label) +
           "</title>";
  };
  svg << "<g class=\"variants\">\n";
  for (const PlotPoint& p : plot.variants) {
    svg << "<circle class=\"variant\" cx=\"" << number(x.position(p.spaceBytes)) << "\" cy=\""
        << number(y.position(p.timeMs)) << "\" r=\"3.5\"" << dataAttributes(p) << ">" << hover(p)
        << "</circle>\n";
  }
  svg << "</g>\n";
  if (!plot.front.empty()) {
    svg << "<g class=\"front\">\n<polyline class=\"front-line\" points=\"";
    for (size_t i = 0; i < plot.front.size(); ++i) {
      svg << (i ? " " : "") << number(x.position(plot.front[i].spaceBytes)) << ","
          << number(y.position(plot.front[i].timeMs));
    }
    svg << "\"/>\n";
    for (const PlotPoint& p : plot.front) {
      double px = x.position(p.spaceBytes), py = y.position(p.timeMs);
      svg << "<rect class=\"front-point\" x=\"" << number(px - 4.5) << "\" y=\""
          << number(py - 4.5) << "\" width=\"9\" height=\"9\"" << dataAttributes(p) << ">"
          << hover(p) << "</rect>\n";
    }
    svg << "</g>\n";
  }
  if (!plot.front.empty() && (!plot.knee || *plot.knee != 0)) {
    // The fastest point (the front's first), labelled unless it is the knee.
    const PlotPoint& f = plot.front.front();
    svg << "<text class=\"fastest-label\" x=\"" << number(x.position(f.spaceBytes) + 8)
        << "\" y=\"" << number(y.position(f.timeMs) + 16) << "\" fill=\"#d1495b\" "
        << "font-weight=\"bold\">fastest</text>\n";
  }
  if (plot.knee && *plot.knee < plot.front.size()) {
    const PlotPoint& k = plot.front[*plot.knee];
    double px = x.position(k.spaceBytes), py = y.position(k.timeMs);
    svg << "<g class=\"knee-mark\">\n<circle class=\"knee\" cx=\"" << number(px) << "\" cy=\""
        << number(py) << "\" r=\"10\"" << dataAttributes(k) << "/>\n"
        << "<text class=\"knee-label\" x=\"" << number(px + 13) << "\" y=\"" << number(py - 10)
        << "\" fill=\"#1b998b\" font-weight=\"bold\">knee</text>\n</g>\n";
  }
  if (plot.reference) {
    const PlotPoint& r = *plot.reference;
    double px = x.position(r.spaceBytes), py = y.position(r.timeMs);
    svg << "<path class=\"reference\" d=\"M " << number(px) << " " << number(py - 7) << " L "
        << number(px + 7) << " " << number(py) << " L " << number(px) << " " << number(py + 7)
        << " L " << number(px - 7) << " " << number(py) << " Z\"" << dataAttributes(r) << ">"
        << hover(r) << "</path>\n";
  }
  for (size_t i = 0; i < plot.peers.size(); ++i) {
    const PlotPoint& peer = plot.peers[i];
    const double py = y.position(peer.timeMs);
    svg << "<line class=\"peer-line\" x1=\"" << number(left) << "\" y1=\"" << number(py)
        << "\" x2=\"" << number(right) << "\" y2=\"" << number(py) << "\" stroke-dasharray=\""
        << peerDash(i) << "\" data-time-ms=\"" << peer.timeMs << "\"><title>"
        << xmlEscaped(peerLegendText(peer)) << "</title></line>\n";
  }
  // Legend: above the frame (outside the data, so that it covers no point).
  double lx = left;
  const double ly = legendY;
  svg << "<g class=\"legend\">\n"
      << "<circle cx=\"" << number(lx + 4) << "\" cy=\"" << number(ly - 4)
      << "\" r=\"3.5\" fill=\"#7aa6d6\" stroke=\"#3a6ea5\"/>\n"
      << "<text x=\"" << number(lx + 14) << "\" y=\"" << number(ly) << "\">ok variant ("
      << plot.variants.size() << ")</text>\n";
  lx += 130;
  svg << "<line x1=\"" << number(lx) << "\" y1=\"" << number(ly - 4) << "\" x2=\""
      << number(lx + 16) << "\" y2=\"" << number(ly - 4)
      << "\" stroke=\"#d1495b\" stroke-width=\"2\"/>\n"
      << "<rect x=\"" << number(lx + 4) << "\" y=\"" << number(ly - 8)
      << "\" width=\"8\" height=\"8\" fill=\"#d1495b\"/>\n"
      << "<text x=\"" << number(lx + 22) << "\" y=\"" << number(ly) << "\">Pareto front ("
      << plot.front.size() << ")</text>\n";
  lx += 140;
  svg << "<circle cx=\"" << number(lx + 6) << "\" cy=\"" << number(ly - 4)
      << "\" r=\"6\" fill=\"none\" stroke=\"#1b998b\" stroke-width=\"2\"/>\n"
      << "<text x=\"" << number(lx + 18) << "\" y=\"" << number(ly) << "\">knee</text>\n";
  lx += 60;
  if (plot.reference) {
    svg << "<path d=\"M " << number(lx + 6) << " " << number(ly - 10)
        << " l 6 6 l -6 6 l -6 -6 Z\" fill=\"#edae49\" stroke=\"#333\"/>\n"
        << "<text x=\"" << number(lx + 18) << "\" y=\"" << number(ly)
        << "\">naive reference</text>\n";
  }
  for (size_t i = 0; i < plot.peers.size(); ++i) {
    const auto [px, py] = peerLegendAt[i];
    svg << "<line class=\"peer-key\" x1=\"" << number(px) << "\" y1=\"" << number(py - 4)
        << "\" x2=\"" << number(px + 22) << "\" y2=\"" << number(py - 4)
        << "\" stroke-dasharray=\"" << peerDash(i) << "\"/>\n"
        << "<text class=\"peer-label\" x=\"" << number(px + 28) << "\" y=\"" << number(py)
        << "\">" << xmlEscaped(peerLegendText(plot.peers[i])) << "</text>\n";
  }
  svg << "</g>\n</svg>\n";
  return svg.str();
}

std::string renderHtmlReport(const std::string& title, const std::vector<HtmlSection>& sections) {
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
       << xmlEscaped(title) << "</title>\n<style>\n"
       << "body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}\n"
       << "table{border-collapse:collapse;margin:0.5em 0 1.5em}\n"
       << "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;white-space:nowrap}\n"
       << "td:last-child{white-space:normal;overflow-wrap:anywhere}\n"
       << "table{max-width:100%}\nsvg{max-width:100%;height:auto}\n"
       << "th{background:#f3f3f3}\ncaption{text-align:left;font-weight:bold;padding:4px 0}\n"
       << "td code{font-size:90%}\nsection{margin-bottom:3em}\n</style>\n</head>\n<body>\n<h1>"
       << xmlEscaped(title) << "</h1>\n";
  if (sections.empty()) html << "<p>No results.</p>\n";
  for (const HtmlSection& section : sections) {
    html << "<section>\n<h2>" << xmlEscaped(section.heading) << "</h2>\n";
    for (const std::string& line : section.lines) html << "<p>" << xmlEscaped(line) << "</p>\n";
    html << section.svg;
    for (const HtmlTable& table : section.tables) {
      html << "<table>\n";
      if (!table.caption.empty()) html << "<caption>" << xmlEscaped(table.caption) << "</caption>\n";
      html << "<tr>";
      for (const std::string& column : table.columns) html << "<th>" << xmlEscaped(column) << "</th>";
      html << "</tr>\n";
      for (const auto& row : table.rows) {
        html << "<tr>";
        for (const std::string& cell : row) html << "<td>" << xmlEscaped(cell) << "</td>";
        html << "</tr>\n";
      }
      html << "</table>\n";
    }
    html << "</section>\n";
  }
  html << "</body>\n</html>\n";
  return html.str();
}

}  // namespace weft::explore
