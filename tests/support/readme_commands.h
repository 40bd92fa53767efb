// The shell commands the README shows, as the tests that run them read them: every line of a
// ```sh block (lines joined where one ends in a backslash; blank lines and comment lines left
// out), and every inline code span outside the blocks that reads as a whole command rather than
// the name of one: a span starting with "build/" and holding a space, or with "bash ",
// "sbatch " or "xz ", or a "weft" command of at least four words with no placeholder in
// capitals and no alternatives (`weft run FILE --db DB ...` and `--pick fastest|knee` name a
// form, `weft explore --all-vgg16 --samples 60` is one to run).
// A block right after the marker line of tests/cli/opencl_readme_commands.cpp is `marked`: that
// test runs its commands in order. Commands come in README order. Header-only: every .cpp under tests/<folder>/ is a test
// executable of its own.
#pragma once

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

namespace weft::testing {

inline const char* const kReadmeRunMarker =
    "<!-- tests/cli/opencl_readme_commands.cpp runs every command of this block, in order -->";

struct ReadmeCommand {
  std::string text;     // as written (a block's continued lines joined with one space)
  int line = 0;         // where it starts in README.md, from 1
  bool marked = false;  // in a block opencl_readme_commands runs
  bool inBlock = false;
};

namespace readme_detail {

inline int lineOf(const std::string& text, size_t offset) {
  int line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

inline std::vector<std::string> wordsOf(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

// FILE, DB, J, budget=SIZE, DIR/results.json: a word of capitals, or a part of a word (between
// '/', '=' and ':') of two capitals or more, standing for something the reader fills in. A
// size binding such as M=1024 is not one.
inline bool isPlaceholder(const std::string& word) {
  auto capitals = [](const std::string& part) {
    size_t letters = 0;
    for (char c : part) {
      if (std::islower(static_cast<unsigned char>(c))) return size_t{0};
      if (std::isupper(static_cast<unsigned char>(c))) ++letters;
    }
    return letters;
  };
  if (capitals(word) > 0) return true;
  std::string part;
  for (char c : word + "/") {
    if (c == '/' || c == '=' || c == ':') {
      if (capitals(part) >= 2) return true;
      part.clear();
    } else {
      part += c;
    }
  }
  return false;
}

inline bool isWholeCommand(const std::string& span) {
  if (span.rfind("build/", 0) == 0) return span.find(' ') != std::string::npos;
  for (const char* prefix : {"bash ", "sbatch ", "xz "}) {
    if (span.rfind(prefix, 0) == 0) return true;
  }
  if (span.rfind("weft ", 0) != 0) return false;
  if (span.find('|') != std::string::npos) return false;  // alternatives: a form
  const std::vector<std::string> words = wordsOf(span);
  if (words.size() < 4) return false;
  for (const std::string& word : words) {
    if (isPlaceholder(word)) return false;
  }
  return true;
}

}  // namespace readme_detail

inline std::vector<ReadmeCommand> readmeCommands(const std::string& readme) {
  using namespace readme_detail;
  std::vector<ReadmeCommand> commands;
  std::string outside;  // the text outside every fenced block, blocks blanked (offsets kept)
  outside.reserve(readme.size());
  size_t at = 0;
  while (at < readme.size()) {
    const size_t fence = readme.find("```", at);
    const bool fenceStartsLine = fence != std::string::npos && (fence == 0 || readme[fence - 1] == '\n');
    if (fence == std::string::npos) {
      outside += readme.substr(at);
      break;
    }
    if (!fenceStartsLine) {
      outside += readme.substr(at, fence + 3 - at);
      at = fence + 3;
      continue;
    }
    outside += readme.substr(at, fence - at);
    const size_t infoEnd = readme.find('\n', fence);
    const size_t close = readme.find("\n```", infoEnd);
    const size_t end = close == std::string::npos ? readme.size() : close + 4;
    const std::string info = readme.substr(fence + 3, infoEnd - fence - 3);
    if (info == "sh") {
      // Marked when the marker is the line right before the fence.
      const size_t previousLineEnd = fence == 0 ? 0 : fence - 1;
      const size_t previousLineStart =
          previousLineEnd == 0 ? 0 : readme.rfind('\n', previousLineEnd - 1) + 1;
      const bool marked = readme.substr(previousLineStart, previousLineEnd - previousLineStart) ==
                          kReadmeRunMarker;
      std::istringstream lines(readme.substr(infoEnd + 1, close - infoEnd - 1));
      std::string line, pending;
      int number = lineOf(readme, infoEnd + 1), startLine = number;
      while (std::getline(lines, line)) {
        const size_t first = line.find_first_not_of(' ');
        const bool skip = pending.empty() && (first == std::string::npos || line[first] == '#');
        if (!skip) {
          if (pending.empty()) startLine = number;
          std::string part = line.substr(first == std::string::npos ? 0 : first);
          const bool continued = !part.empty() && part.back() == '\\';
          if (continued) part.pop_back();
          while (!part.empty() && part.back() == ' ') part.pop_back();
          pending += (pending.empty() ? "" : " ") + part;
          if (!continued) {
            commands.push_back({pending, startLine, marked, true});
            pending.clear();
          }
        }
        ++number;
      }
    }
    outside += std::string(end - fence, ' ');
    at = end;
  }
  // Inline spans outside the blocks (a span may run over a line break).
  for (size_t open = outside.find('`'); open != std::string::npos;
       open = outside.find('`', open + 1)) {
    const size_t close = outside.find('`', open + 1);
    if (close == std::string::npos) break;
    std::string span = outside.substr(open + 1, close - open - 1);
    for (char& c : span) {
      if (c == '\n') c = ' ';
    }
    if (isWholeCommand(span)) commands.push_back({span, lineOf(readme, open), false, false});
    open = close;
  }
  std::stable_sort(commands.begin(), commands.end(),
                   [](const ReadmeCommand& a, const ReadmeCommand& b) { return a.line < b.line; });
  return commands;
}

}  // namespace weft::testing
