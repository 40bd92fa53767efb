// The HTML report as a person sees it, in a real browser: `weft report --html` on a kept
// database (bench/results/nvidia-h200/nvidia-explore-split.db.xz: eleven layers explored on an
// H200, no OpenCL needed here) opened in headless Chromium (Debian's `chromium`, installed by
// scripts/setup.sh for the tests). A script added to a copy of the page measures what the
// browser laid out and writes it into the page, which Chromium's --dump-dom returns: every
// section has its plot; no text of a plot is clipped by the plot's box; the legend covers no
// data mark; no table runs past the window's width; the knee is labelled; and the front's
// points and table rows are the ones `weft report --format json` reads from the database; and
// peers' times recorded in the database (two planted on the first layers, as weft_bench_table3
// records PyTorch's and CLBlast's) are dashed lines at those times, named in the legend. A
// screenshot of the page is taken too (it must be a picture of some size, not an empty page).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "explore/results_db.h"
#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using weft::testing::CommandResult;
using weft::testing::readTextFile;
using weft::testing::runWeft;
using weft::testing::shellQuote;
using weft::testing::TempDir;

namespace {

// Measures the laid-out page and appends the facts as JSON in <pre id="layout">.
const char* const kProbe = R"(<script>
(() => {
  const out = {viewport: document.documentElement.clientWidth, sections: []};
  const outside = (b, r) => b.left < r.left - 0.5 || b.right > r.right + 0.5 ||
                            b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5;
  const overlap = (a, b) => !(a.right < b.left || a.left > b.right ||
                              a.bottom < b.top || a.top > b.bottom);
  for (const section of document.querySelectorAll('section')) {
    const info = {heading: section.querySelector('h2').textContent};
    const svg = section.querySelector('svg');
    info.plot = svg !== null;
    if (svg) {
      const box = svg.getBoundingClientRect();
      info.width = box.width;
      info.clippedTexts = [...svg.querySelectorAll('text')]
          .filter(t => outside(t.getBoundingClientRect(), box)).map(t => t.textContent);
      const legend = svg.querySelector('g.legend').getBoundingClientRect();
      info.legendCovers = [...svg.querySelectorAll('.variant, .front-point, .reference, .peer-line')]
          .filter(m => overlap(m.getBoundingClientRect(), legend)).length;
      info.peerTimesMs = [...svg.querySelectorAll('line.peer-line')]
          .map(e => Number(e.getAttribute('data-time-ms')));
      info.peerLabels = [...svg.querySelectorAll('.peer-label')].map(t => t.textContent);
      info.frontTimesMs = [...svg.querySelectorAll('rect.front-point')]
          .map(e => Number(e.getAttribute('data-time-ms')));
      info.kneeLabel = svg.querySelector('.knee-label') !== null;
    }
    const tables = [...section.querySelectorAll('table')];
    info.tablesPastWindow = tables.filter(
        t => t.getBoundingClientRect().right > out.viewport + 0.5).length;
    info.frontRows = tables.length ? tables[0].querySelectorAll('tr').length - 1 : 0;
    out.sections.push(info);
  }
  const pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
)";

std::string chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    if (std::system(("command -v " + std::string(name) + " > /dev/null 2>&1").c_str()) == 0) {
      return name;
    }
  }
  return "";
}

int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return status == -1 ? -1 : WEXITSTATUS(status);
}

std::string unescapedHtml(std::string text) {
  const std::vector<std::pair<std::string, std::string>> entities = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}};
  for (const auto& [entity, character] : entities) {
    for (size_t at = text.find(entity); at != std::string::npos;
         at = text.find(entity, at + character.size())) {
      text.replace(at, entity.size(), character);
    }
  }
  return text;
}

}  // namespace

TEST_CASE("the HTML report in headless Chromium: plots, fronts and tables laid out and right") {
  const std::string browser = chromium();
  REQUIRE_MESSAGE(!browser.empty(),
                  "chromium is not installed: scripts/test.sh installs it (apt-get install "
                  "chromium)");
  TempDir dir("weft_browser_report");
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  const fs::path kept =
      fs::path(root ? root : ".") / "bench/results/nvidia-h200/nvidia-explore-split.db.xz";
  const fs::path db = dir.path / "kept.db";
  REQUIRE(shell("xz -dc " + shellQuote(kept.string()) + " > " + shellQuote(db.string())) == 0);
  // Peers' times on the first two layers: one slower than every variant, one between them.
  {
    weft::explore::ResultsDb planted(db);
    const std::vector<std::string> programs = planted.programs();
    REQUIRE(programs.size() >= 2);
    for (size_t i = 0; i < 2; ++i) {
      const std::vector<weft::explore::VariantRecord> variants = planted.variants(programs[i]);
      REQUIRE(!variants.empty());
      uint64_t slowest = 0, fastest = UINT64_MAX;
      for (const auto& v : variants) {
        if (!v.medianNs) continue;
        slowest = std::max(slowest, *v.medianNs);
        fastest = std::min(fastest, *v.medianNs);
      }
      REQUIRE(slowest > 0);
      const std::string device = variants.front().key.device;
      planted.recordPeer({programs[i], device, "PyTorch 2.11 conv2d, cuDNN fp32", slowest * 3,
                          {}, "a test"});
      planted.recordPeer({programs[i], device, "CLBlast 1.5.3 im2col + SGEMM on the same device",
                          (slowest + fastest) / 2, int64_t{100000000}, "a test"});
    }
  }
  {
    // The table says the same in words.
    const CommandResult text = runWeft({"report", "--db", db.string()});
    REQUIRE_MESSAGE(text.exitCode == 0, text.output);
    CHECK(text.output.find("peer PyTorch 2.11 conv2d, cuDNN fp32: ") != std::string::npos);
    CHECK(text.output.find("(the fastest variant is ") != std::string::npos);
    CHECK(text.output.find("measured by a test") != std::string::npos);
  }
  const fs::path page = dir.path / "report.html";
  CommandResult report =
      runWeft({"report", "--db", db.string(), "--html", page.string(), "--format", "json"});
  REQUIRE_MESSAGE(report.exitCode == 0, report.output);
  // The JSON is the last line of the output (a line before it names the written page).
  const std::string jsonText = report.output.substr(report.output.find('['));
  const nlohmann::json groups = nlohmann::json::parse(jsonText, nullptr, false);
  REQUIRE(groups.is_array());
  REQUIRE(groups.size() >= 5);

  // The page with the probe, as the browser lays it out in a 1200-pixel window.
  std::string html = readTextFile(page);
  const size_t body = html.rfind("</body>");
  REQUIRE(body != std::string::npos);
  html.insert(body, kProbe);
  const fs::path probe = dir.path / "probe.html";
  std::ofstream(probe) << html;
  const std::string flags =
      " --headless --no-sandbox --disable-gpu --hide-scrollbars "
      "--window-size=1200,1000 ";
  const fs::path dom = dir.path / "dom.html";
  REQUIRE(shell("timeout 120 " + browser + flags + "--dump-dom file://" +
                shellQuote(probe.string()) + " > " + shellQuote(dom.string()) + " 2> /dev/null") ==
          0);
  const std::string dumped = readTextFile(dom);
  const size_t open = dumped.find("<pre id=\"layout\">");
  REQUIRE_MESSAGE(open != std::string::npos, "the probe did not run:\n" << dumped.substr(0, 2000));
  const size_t start = open + std::string("<pre id=\"layout\">").size();
  const nlohmann::json layout = nlohmann::json::parse(
      unescapedHtml(dumped.substr(start, dumped.find("</pre>", start) - start)), nullptr, false);
  REQUIRE(layout.is_object());
  REQUIRE(layout["sections"].size() == groups.size());

  for (size_t i = 0; i < groups.size(); ++i) {
    const nlohmann::json& section = layout["sections"][i];
    const nlohmann::json& group = groups[i];
    CAPTURE(section.dump());
    CHECK(section["heading"].get<std::string>().find(group["program"].get<std::string>()) == 0);
    REQUIRE(section["plot"] == true);
    CHECK(section["width"].get<double>() > 300);
    CHECK(section["clippedTexts"].empty());
    CHECK(section["legendCovers"] == 0);
    CHECK(section["tablesPastWindow"] == 0);
    // The front as the database gives it: its points' times, and one table row each.
    std::vector<double> drawn = section["frontTimesMs"].get<std::vector<double>>();
    std::vector<double> recorded;
    for (const nlohmann::json& point : group["front"]) {
      recorded.push_back(point["medianNs"].get<double>() / 1e6);
    }
    std::sort(drawn.begin(), drawn.end());
    std::sort(recorded.begin(), recorded.end());
    REQUIRE(drawn.size() == recorded.size());
    for (size_t k = 0; k < drawn.size(); ++k) {
      CHECK(drawn[k] == doctest::Approx(recorded[k]).epsilon(1e-5));
    }
    CHECK(section["frontRows"] == recorded.size());
    CHECK(section["kneeLabel"] == !recorded.empty());
    // The peers the database holds for this program: a line at each one's time, named.
    std::vector<double> peerDrawn = section["peerTimesMs"].get<std::vector<double>>();
    std::vector<double> peerRecorded;
    if (group.contains("peers")) {
      for (const nlohmann::json& peer : group["peers"]) {
        peerRecorded.push_back(peer["medianNs"].get<double>() / 1e6);
      }
    }
    CHECK(peerRecorded.size() == (i < 2 ? 2u : 0u));
    std::sort(peerDrawn.begin(), peerDrawn.end());
    std::sort(peerRecorded.begin(), peerRecorded.end());
    REQUIRE(peerDrawn.size() == peerRecorded.size());
    for (size_t k = 0; k < peerDrawn.size(); ++k) {
      CHECK(peerDrawn[k] == doctest::Approx(peerRecorded[k]).epsilon(1e-5));
    }
    CHECK(section["peerLabels"].size() == peerRecorded.size());
  }

  // A screenshot of the whole page: a picture with plots in it, not an empty page.
  const fs::path shot = dir.path / "report.png";
  REQUIRE(shell("timeout 120 " + browser + flags + "--screenshot=" + shellQuote(shot.string()) +
                " file://" + shellQuote(page.string()) + " > /dev/null 2>&1") == 0);
  REQUIRE(fs::exists(shot));
  CHECK(fs::file_size(shot) > 30000);
}
