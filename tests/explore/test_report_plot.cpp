// Tests of explore/report_plot: the SVG scatter parsed back with a small tag scanner — tags
// balance, one circle per ok variant, one square per front point, the front line passes
// through them, the knee ring sits on the front's knee, the axes are logarithmic and monotone
// (the pixel order of the marks follows their data), strings from the database are escaped —
// and the HTML page holds every section's plot and table.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "explore/pareto.h"
#include "explore/report_plot.h"

using namespace weft;
using namespace weft::explore;

namespace {

VariantRecord variant(uint64_t ns, int64_t bytes, VariantStatus status = VariantStatus::Ok) {
  VariantRecord v;
  v.key.program = "conv_4_8_8_4_3_1_1";
  v.key.parameters = "{\"ns\":" + std::to_string(ns) + ",\"bytes\":" + std::to_string(bytes) + "}";
  v.status = status;
  if (status == VariantStatus::Ok) v.medianNs = ns;
  v.spaceBytes = bytes;
  return v;
}

struct Tag {
  std::string name;
  std::map<std::string, std::string> attributes;
  bool closing = false;
  bool selfClosing = false;
};

// Every tag of `text` in order (comments, <!DOCTYPE> and text skipped). Fails the test on an
// unterminated tag or attribute.
std::vector<Tag> scanTags(const std::string& text) {
  std::vector<Tag> tags;
  size_t i = 0;
  while ((i = text.find('<', i)) != std::string::npos) {
    size_t end = text.find('>', i);
    REQUIRE(end != std::string::npos);
    std::string inside = text.substr(i + 1, end - i - 1);
    i = end + 1;
    if (inside.empty() || inside[0] == '!') continue;
    Tag tag;
    size_t p = 0;
    if (inside[0] == '/') {
      tag.closing = true;
      p = 1;
    }
    if (!inside.empty() && inside.back() == '/') {
      tag.selfClosing = true;
      inside.pop_back();
    }
    size_t nameEnd = inside.find_first_of(" \n\t", p);
    tag.name = inside.substr(p, nameEnd == std::string::npos ? std::string::npos : nameEnd - p);
    p = nameEnd;
    while (p != std::string::npos && p < inside.size()) {
      p = inside.find_first_not_of(" \n\t", p);
      if (p == std::string::npos) break;
      size_t eq = inside.find('=', p);
      REQUIRE(eq != std::string::npos);
      std::string key = inside.substr(p, eq - p);
      REQUIRE(eq + 1 < inside.size());
      char quote = inside[eq + 1];
      REQUIRE((quote == '"' || quote == '\''));
      size_t close = inside.find(quote, eq + 2);
      REQUIRE(close != std::string::npos);
      tag.attributes[key] = inside.substr(eq + 2, close - eq - 2);
      p = close + 1;
    }
    tags.push_back(tag);
  }
  return tags;
}

// Whether opening and closing tags nest properly (HTML's void <meta> excepted).
bool balanced(const std::vector<Tag>& tags) {
  std::vector<std::string> stack;
  for (const Tag& tag : tags) {
    if (tag.selfClosing || tag.name == "meta") continue;
    if (!tag.closing) {
      stack.push_back(tag.name);
    } else {
      if (stack.empty() || stack.back() != tag.name) return false;
      stack.pop_back();
    }
  }
  return stack.empty();
}

std::vector<Tag> withClass(const std::vector<Tag>& tags, const std::string& cls) {
  std::vector<Tag> out;
  for (const Tag& tag : tags) {
    auto found = tag.attributes.find("class");
    if (!tag.closing && found != tag.attributes.end() && found->second == cls) out.push_back(tag);
  }
  return out;
}

double attr(const Tag& tag, const std::string& name) {
  auto found = tag.attributes.find(name);
  REQUIRE_MESSAGE(found != tag.attributes.end(), "missing attribute " << name);
  return std::stod(found->second);
}

std::vector<VariantRecord> randomVariants(std::mt19937_64& rng, int count) {
  std::vector<VariantRecord> variants;
  std::uniform_real_distribution<double> logTime(3, 7), logSpace(3, 8);
  for (int i = 0; i < count; ++i) {
    VariantStatus status = std::uniform_int_distribution<int>(0, 5)(rng) == 0
                               ? VariantStatus::BuildError
                               : VariantStatus::Ok;
    variants.push_back(variant(static_cast<uint64_t>(std::pow(10.0, logTime(rng))),
                               static_cast<int64_t>(std::pow(10.0, logSpace(rng))), status));
  }
  return variants;
}

}  // namespace

TEST_CASE("the scatter has one mark per ok variant and per front point, balanced tags") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 40; ++round) {
    std::vector<VariantRecord> variants =
        randomVariants(rng, std::uniform_int_distribution<int>(1, 60)(rng));
    ReferenceRecord reference;
    reference.medianNs = 2'000'000;
    reference.spaceBytes = 123'456;
    const bool withReference = round % 2 == 0;
    ScatterPlot plot = scatterPlotOf(variants, "conv_4_8_8_4_3_1_1 on device abc", "subtitle",
                                     withReference ? std::optional(reference) : std::nullopt);
    std::string svg = renderScatterSvg(plot);
    std::vector<Tag> tags = scanTags(svg);
    CHECK(balanced(tags));
    REQUIRE(!tags.empty());
    CHECK(tags.front().name == "svg");

    size_t ok = std::count_if(variants.begin(), variants.end(),
                              [](const VariantRecord& v) { return v.status == VariantStatus::Ok; });
    std::vector<VariantRecord> front = paretoFront(variants);
    CHECK(withClass(tags, "variant").size() == ok);
    std::vector<Tag> frontPoints = withClass(tags, "front-point");
    CHECK(frontPoints.size() == front.size());
    CHECK(withClass(tags, "reference").size() == (withReference ? 1u : 0u));
    CHECK(withClass(tags, "knee").size() == (front.empty() ? 0u : 1u));

    // The front points carry the front's data, fastest first, and the line goes through them.
    for (size_t i = 0; i < frontPoints.size() && i < front.size(); ++i) {
      CHECK(attr(frontPoints[i], "data-space-bytes") == doctest::Approx(*front[i].spaceBytes));
      CHECK(attr(frontPoints[i], "data-time-ms") ==
            doctest::Approx(*front[i].medianNs / 1e6).epsilon(1e-5));
    }
    std::vector<Tag> lines = withClass(tags, "front-line");
    REQUIRE(lines.size() == (front.empty() ? 0u : 1u));
    if (!front.empty()) {
      std::string points = lines[0].attributes["points"];
      CHECK(static_cast<size_t>(std::count(points.begin(), points.end(), ',')) == front.size());
      // The knee ring is centred on the knee's square.
      const Tag knee = withClass(tags, "knee")[0];
      const Tag& square = frontPoints[kneeIndex(front)];
      CHECK(attr(knee, "cx") == doctest::Approx(attr(square, "x") + 4.5).epsilon(1e-3));
      CHECK(attr(knee, "cy") == doctest::Approx(attr(square, "y") + 4.5).epsilon(1e-3));
    }
  }
}

TEST_CASE("the axes are monotone: larger space further right, slower further up") {
  std::mt19937_64 rng(3);
  std::vector<VariantRecord> variants = randomVariants(rng, 50);
  std::string svg = renderScatterSvg(scatterPlotOf(variants, "t", "", std::nullopt));
  std::vector<Tag> marks = withClass(scanTags(svg), "variant");
  REQUIRE(marks.size() > 10);
  for (const Tag& a : marks) {
    for (const Tag& b : marks) {
      if (attr(a, "data-space-bytes") < attr(b, "data-space-bytes")) {
        CHECK(attr(a, "cx") <= attr(b, "cx"));
      }
      if (attr(a, "data-time-ms") < attr(b, "data-time-ms")) CHECK(attr(a, "cy") >= attr(b, "cy"));
    }
  }
  // Logarithmic: equal ratios give equal distances.
  LogAxis axis = logAxisFor({1, 1000}, 0, 600);
  CHECK(axis.position(10) - axis.position(1) ==
        doctest::Approx(axis.position(1000) - axis.position(100)));
  CHECK(axis.position(axis.lo) == doctest::Approx(0));
  CHECK(axis.position(axis.hi) == doctest::Approx(600));
}

TEST_CASE("ticks are increasing, inside the axis, and neither too few nor too many") {
  for (double lo : {1e-4, 0.013, 0.9, 7.0, 25e6}) {
    for (double ratio : {1.0, 1.3, 4.0, 30.0, 1e3, 1e9, 1e30}) {
      LogAxis axis = logAxisFor({lo, lo * ratio}, 0, 100);
      std::vector<double> ticks = axis.ticks();
      CAPTURE(lo);
      CAPTURE(ratio);
      CHECK(ticks.size() >= 2);
      CHECK(ticks.size() <= 12);
      for (size_t i = 0; i < ticks.size(); ++i) {
        CHECK(ticks[i] >= axis.lo * (1 - 1e-9));
        CHECK(ticks[i] <= axis.hi * (1 + 1e-9));
        if (i > 0) CHECK(ticks[i] > ticks[i - 1]);
      }
    }
  }
}

TEST_CASE("strings from the database are escaped; empty plots still render") {
  std::vector<VariantRecord> variants = {variant(1000, 2000)};
  variants[0].key.parameters = "{\"a<b\":\"&'\"}";
  std::string svg = renderScatterSvg(scatterPlotOf(variants, "p<q & \"r\"", "", std::nullopt));
  CHECK(svg.find("p&lt;q &amp; &quot;r&quot;") != std::string::npos);
  CHECK(svg.find("a<b") == std::string::npos);
  CHECK(balanced(scanTags(svg)));

  std::string empty = renderScatterSvg(scatterPlotOf({}, "nothing", "", std::nullopt));
  std::vector<Tag> tags = scanTags(empty);
  CHECK(balanced(tags));
  CHECK(withClass(tags, "variant").empty());
  CHECK(withClass(tags, "front-line").empty());
}

TEST_CASE("a long subtitle is wrapped into lines that fit; the fastest point is labelled") {
  std::string subtitle;
  for (int i = 0; i < 30; ++i) subtitle += "structure " + std::to_string(i) + ", ";
  // Three variants, all on the front: the fastest is labelled unless it is the knee.
  std::vector<VariantRecord> variants = {variant(1000, 9000), variant(5000, 2000),
                                         variant(9000, 1000)};
  const std::string svg = renderScatterSvg(scatterPlotOf(variants, "p", subtitle, std::nullopt));
  CHECK(balanced(scanTags(svg)));
  size_t lines = 0;
  for (size_t at = svg.find("<tspan"); at != std::string::npos; at = svg.find("<tspan", at + 1)) {
    const size_t open = svg.find('>', at) + 1;
    const std::string line = svg.substr(open, svg.find("</tspan>", open) - open);
    CHECK(line.size() <= (760 - 40) / 6.5 + 3);  // "…" is 3 bytes
    ++lines;
  }
  CHECK(lines == 3);
  CHECK(svg.find("…</tspan>") != std::string::npos);  // more than fits: cut with an ellipsis
  const ScatterPlot plot = scatterPlotOf(variants, "p", "", std::nullopt);
  const bool kneeIsFastest = plot.knee && *plot.knee == 0;
  CHECK((svg.find("fastest-label") != std::string::npos) == !kneeIsFastest);
}

TEST_CASE("peers are dashed lines at their time across the frame, named in the legend") {
  std::mt19937_64 rng(5);
  std::vector<VariantRecord> variants = randomVariants(rng, 30);
  double slowest = 0;
  for (const VariantRecord& v : variants) {
    if (v.medianNs) slowest = std::max(slowest, *v.medianNs / 1e6);
  }
  // One peer far slower than every variant (the axis must reach it), and enough peers with
  // long names that the legend needs more rows.
  std::vector<PeerRecord> peers = {
      {"p", "d", "PyTorch 1.13 conv2d (2 threads)", static_cast<uint64_t>(slowest * 20e6), {}, ""},
      {"p", "d", "CLBlast 1.5.3 im2col + SGEMM on the same OpenCL device", 2000000, 4096, ""},
      {"p", "d", "a third peer with a long name, to push the legend to a new row", 3000000, {},
       ""}};
  const ScatterPlot plot = scatterPlotOf(variants, "p", "", std::nullopt, peers);
  REQUIRE(plot.peers.size() == 3);
  const std::string svg = renderScatterSvg(plot);
  CHECK(balanced(scanTags(svg)));
  const std::vector<Tag> lines = withClass(scanTags(svg), "peer-line");
  REQUIRE(lines.size() == 3);
  const std::vector<Tag> frames = withClass(scanTags(svg), "frame");
  REQUIRE(frames.size() == 1);
  const double top = attr(frames[0], "y"), bottom = top + attr(frames[0], "height");
  for (const Tag& line : lines) {
    CHECK(attr(line, "y1") == attr(line, "y2"));  // horizontal
    CHECK(attr(line, "y1") >= top);
    CHECK(attr(line, "y1") <= bottom);
    CHECK(attr(line, "x1") == attr(frames[0], "x"));
  }
  // Slower higher up, like the variants.
  CHECK(attr(lines[0], "y1") < attr(lines[2], "y1"));
  CHECK(attr(lines[2], "y1") < attr(lines[1], "y1"));
  // Every legend text stays inside the picture, and the frame starts below the last row.
  const std::vector<Tag> labels = withClass(scanTags(svg), "peer-label");
  REQUIRE(labels.size() == 3);
  double lowestLabel = 0;
  for (const Tag& label : labels) {
    CHECK(attr(label, "x") >= 0);
    CHECK(attr(label, "x") < 760);
    lowestLabel = std::max(lowestLabel, attr(label, "y"));
  }
  CHECK(lowestLabel > attr(labels[0], "y"));  // wrapped to a second row
  CHECK(top > lowestLabel);
  CHECK(svg.find("PyTorch 1.13 conv2d (2 threads): ") != std::string::npos);
}

TEST_CASE("the HTML page holds each section's plot and table") {
  std::mt19937_64 rng(8);
  std::vector<HtmlSection> sections;
  for (int i = 0; i < 3; ++i) {
    HtmlSection section;
    section.heading = "layer " + std::to_string(i) + " <x>";
    section.svg = renderScatterSvg(scatterPlotOf(randomVariants(rng, 10), "p", "", std::nullopt));
    section.tables.push_back({"front", {"#", "ms"}, {{"1", "0.5"}, {"2", "<0.7>"}}});
    sections.push_back(section);
  }
  std::string html = renderHtmlReport("weft report", sections);
  std::vector<Tag> tags = scanTags(html);
  CHECK(balanced(tags));
  CHECK(std::count_if(tags.begin(), tags.end(),
                      [](const Tag& t) { return t.name == "svg" && !t.closing; }) == 3);
  CHECK(std::count_if(tags.begin(), tags.end(),
                      [](const Tag& t) { return t.name == "table" && !t.closing; }) == 3);
  CHECK(html.find("layer 1 &lt;x&gt;") != std::string::npos);
  CHECK(html.find("&lt;0.7&gt;") != std::string::npos);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
}

TEST_CASE("byte sizes read with decimal units") {
  CHECK(formatBytes(512) == "512 B");
  CHECK(formatBytes(25e6) == "25 MB");
  CHECK(formatBytes(1500) == "1.5 kB");
  CHECK(formatBytes(3.1e9) == "3.1 GB");
}
