// Counting and sampling many structures' spaces in forked workers (structure_sampling.h).
#include "explore/structure_sampling.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "explore/child_process.h"

namespace weft::explore {

namespace {

using Json = nlohmann::json;

Json countToJson(const SpaceCount& count) {
  Json out = {{"points", count.points},
              {"exact", count.exact},
              {"nodesVisited", count.nodesVisited},
              {"method", count.method},
              {"launchSizesNotCounted", count.launchSizesNotCounted}};
  if (count.upperBound) out["upperBound"] = *count.upperBound;
  if (count.estimate) out["estimate"] = *count.estimate;
  if (count.withLaunchSizes) out["withLaunchSizes"] = *count.withLaunchSizes;
  return out;
}

SpaceCount countFromJson(const Json& in) {
  SpaceCount count;
  count.points = in.at("points").get<uint64_t>();
  count.exact = in.at("exact").get<bool>();
  count.nodesVisited = in.at("nodesVisited").get<uint64_t>();
  count.method = in.at("method").get<std::string>();
  count.launchSizesNotCounted = in.at("launchSizesNotCounted").get<bool>();
  if (in.contains("upperBound")) count.upperBound = in["upperBound"].get<double>();
  if (in.contains("estimate")) count.estimate = in["estimate"].get<double>();
  if (in.contains("withLaunchSizes")) count.withLaunchSizes = in["withLaunchSizes"].get<uint64_t>();
  return count;
}

Json sampleToJson(const SampleSet& set) {
  Json out = {{"points", set.points},
              {"method", set.method},
              {"smaller", set.spaceSmallerThanRequested},
              {"duplicateLimit", set.duplicateLimitReached},
              {"draws", set.draws},
              {"valuesTried", set.valuesTried},
              {"solverChecks", set.solverChecks},
              {"seconds", set.seconds}};
  if (set.spaceSize) out["spaceSize"] = *set.spaceSize;
  if (set.spaceUpperBound) out["spaceUpperBound"] = *set.spaceUpperBound;
  if (set.spaceEstimate) out["spaceEstimate"] = *set.spaceEstimate;
  return out;
}

SampleSet sampleFromJson(const Json& in) {
  SampleSet set;
  set.points = in.at("points").get<std::vector<std::vector<int64_t>>>();
  set.method = in.at("method").get<std::string>();
  set.spaceSmallerThanRequested = in.at("smaller").get<bool>();
  set.duplicateLimitReached = in.at("duplicateLimit").get<bool>();
  set.draws = in.at("draws").get<uint64_t>();
  set.valuesTried = in.at("valuesTried").get<uint64_t>();
  set.solverChecks = in.at("solverChecks").get<uint64_t>();
  set.seconds = in.at("seconds").get<double>();
  if (in.contains("spaceSize")) set.spaceSize = in["spaceSize"].get<uint64_t>();
  if (in.contains("spaceUpperBound")) set.spaceUpperBound = in["spaceUpperBound"].get<double>();
  if (in.contains("spaceEstimate")) set.spaceEstimate = in["spaceEstimate"].get<double>();
  return set;
}

// Reads lines from a worker until one holds `marker` (returned) or the worker is gone.
std::optional<Json> readUntil(int fd, std::string& pending, const std::string& marker,
                              std::vector<Json>& lines) {
  std::string line;
  while (process::readLine(fd, pending, line)) {
    Json message = Json::parse(line, nullptr, false);
    if (message.is_discarded() || message.value("event", "") == "error") return std::nullopt;
    if (message.contains(marker)) return message;
    lines.push_back(std::move(message));
  }
  return std::nullopt;
}

}  // namespace

size_t samplingWorkers(size_t spaces) {
  const size_t cores = std::max<size_t>(std::thread::hardware_concurrency(), 1);
  if (spaces < 8) return 1;
  return std::min<size_t>({cores, 16, spaces / 4});
}

StructureSampling::StructureSampling(std::vector<const ParameterSpace*> spaces,
                                     SamplerOptions options, size_t workers)
    : spaces_(std::move(spaces)),
      options_(std::move(options)),
      workers_(std::max<size_t>(workers, 1)) {
  std::map<std::string, size_t> keys;
  for (size_t i = 0; i < spaces_.size(); ++i) {
    auto [found, added] = keys.emplace(spaces_[i]->samplingKey(), spacesOfKey_.size());
    if (added) spacesOfKey_.emplace_back();
    keyOf_.push_back(found->second);
    spacesOfKey_[found->second].push_back(i);
  }
  samplers_.resize(spacesOfKey_.size());
  counts_.resize(spacesOfKey_.size());
}

StructureSampling::~StructureSampling() { stopWorkers(); }

std::vector<size_t> StructureSampling::keysOf(size_t worker) const {
  std::vector<size_t> keys;
  for (size_t k = worker; k < spacesOfKey_.size(); k += workers_) keys.push_back(k);
  return keys;
}

Sampler& StructureSampling::samplerOf(size_t keyIndex) {
  if (!samplers_[keyIndex]) {
    // Counted at once: sampling draws from what the count found, as it always has.
    auto sampler = std::make_unique<Sampler>(*spaces_[spacesOfKey_[keyIndex].front()], options_);
    counts_[keyIndex] = sampler->count(UINT64_MAX);
    samplers_[keyIndex] = std::move(sampler);
  }
  return *samplers_[keyIndex];
}

CountedSpace StructureSampling::countOne(size_t keyIndex) {
  CountedSpace one;
  try {
    samplerOf(keyIndex);
    one.count = counts_[keyIndex];
  } catch (const std::exception& error) {
    one.error = error.what();
  }
  return one;
}

// A worker: counts every W-th distinct space, sending each count as it is found, then
// "counted"; waits for the points wanted of its spaces, draws them with the samplers that
// counted, sends them and "done".
void StructureSampling::runWorker(size_t w, int toParent, int fromParent) {
  const std::vector<size_t> mine = keysOf(w);
  for (size_t key : mine) {
    const CountedSpace counted = countOne(key);
    Json line = {{"key", key}};
    if (counted.count) {
      line["count"] = countToJson(*counted.count);
    } else {
      line["failure"] = counted.error;
    }
    process::sendLine(toParent, line);
  }
  process::sendLine(toParent, Json{{"counted", true}});
  std::string pending, request;
  if (!process::readLine(fromParent, pending, request)) return;  // no sampling wanted
  const Json wanted = Json::parse(request);
  std::vector<size_t> wantedOf(spaces_.size(), 0);
  std::vector<uint64_t> seedOf(spaces_.size(), 0);
  for (const Json& entry : wanted.at("wanted")) {
    const size_t i = entry.at(0).get<size_t>();
    wantedOf.at(i) = entry.at(1).get<size_t>();
    seedOf.at(i) = entry.at(2).get<uint64_t>();
  }
  for (auto& [i, set] : sampleIn(mine, wantedOf, seedOf)) {
    process::sendLine(toParent, Json{{"space", i}, {"set", sampleToJson(set)}});
  }
  process::sendLine(toParent, Json{{"done", true}});
}

void StructureSampling::stopWorkers() {
  for (Worker& worker : running_) {
    if (worker.toWorker >= 0) ::close(worker.toWorker);
    if (worker.fromWorker >= 0) ::close(worker.fromWorker);
    ::kill(worker.pid, SIGKILL);
    int status = 0;
    ::waitpid(worker.pid, &status, 0);
  }
  running_.clear();
}

bool StructureSampling::startWorkers(std::vector<CountedSpace>& byKey) {
  for (size_t w = 0; w < workers_; ++w) {
    // A socket, not a pipe: a request sent to a worker that died fails (MSG_NOSIGNAL) instead
    // of raising SIGPIPE in a caller that has not ignored it.
    int toWorker[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, toWorker) != 0) {
      stopWorkers();
      return false;
    }
    try {
      const process::SpawnedChild child = process::spawnChild(
          [this, w, readEnd = toWorker[0]](int fd) { runWorker(w, fd, readEnd); }, toWorker[1]);
      ::close(toWorker[0]);
      running_.push_back({child.pid, child.fd, toWorker[1], ""});
    } catch (const std::exception&) {
      ::close(toWorker[0]);
      ::close(toWorker[1]);
      stopWorkers();
      return false;
    }
  }
  // The counts as they come, from whichever worker sends one, until every worker has said
  // "counted".
  size_t received = 0;
  std::vector<bool> finished(running_.size(), false);
  size_t workersLeft = running_.size();
  // One message from worker i (a complete line: what it has sent may hold more); false when
  // the worker is gone or sent something else.
  auto takeLine = [&](size_t i) {
    Worker& worker = running_[i];
    std::string text;
    if (!process::readLine(worker.fromWorker, worker.pending, text)) return false;
    Json line = Json::parse(text, nullptr, false);
    if (line.is_discarded() || line.value("event", "") == "error") return false;
    if (line.contains("counted")) {
      finished[i] = true;
      --workersLeft;
      return true;
    }
    if (!line.contains("key")) return false;
    CountedSpace& one = byKey.at(line.at("key").get<size_t>());
    if (line.contains("count")) {
      one.count = countFromJson(line["count"]);
    } else {
      one.error = line.at("failure").get<std::string>();
    }
    ++received;
    if (options_.onSpaceCounted) options_.onSpaceCounted(received, spacesOfKey_.size());
    return true;
  };
  while (workersLeft > 0) {
    std::vector<pollfd> polled;
    std::vector<size_t> polledWorker;
    for (size_t i = 0; i < running_.size(); ++i) {
      if (finished[i]) continue;
      polled.push_back({running_[i].fromWorker, POLLIN, 0});
      polledWorker.push_back(i);
    }
    if (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      stopWorkers();
      return false;
    }
    for (size_t j = 0; j < polled.size(); ++j) {
      if (polled[j].revents == 0) continue;
      const size_t i = polledWorker[j];
      // A readable worker sends whole lines; the ones already read come out of `pending`.
      bool ok = takeLine(i);
      while (ok && !finished[i] && running_[i].pending.find('\n') != std::string::npos) {
        ok = takeLine(i);
      }
      if (!ok) {
        stopWorkers();
        return false;
      }
    }
  }
  if (received != spacesOfKey_.size()) {
    stopWorkers();
    return false;
  }
  workersThatCounted_ = running_.size();
  return true;
}

std::vector<CountedSpace> StructureSampling::count() {
  const size_t keys = spacesOfKey_.size();
  std::vector<CountedSpace> byKey(keys);
  if (workers_ <= 1 || keys <= 1 || !startWorkers(byKey)) {
    for (size_t k = 0; k < keys; ++k) {
      byKey[k] = countOne(k);
      if (options_.onSpaceCounted) options_.onSpaceCounted(k + 1, keys);
    }
  }
  std::vector<CountedSpace> out;
  for (size_t i = 0; i < spaces_.size(); ++i) out.push_back(byKey[keyOf_[i]]);
  return out;
}

std::vector<std::pair<size_t, SampleSet>> StructureSampling::sampleIn(
    const std::vector<size_t>& keyIndices, const std::vector<size_t>& wanted,
    const std::vector<uint64_t>& seeds) {
  std::vector<std::pair<size_t, SampleSet>> drawn;
  for (size_t k : keyIndices) {
    for (size_t i : spacesOfKey_[k]) {
      if (wanted[i] == 0) continue;
      drawn.push_back({i, samplerOf(k).sample(wanted[i], seeds[i])});
    }
  }
  return drawn;
}

std::vector<SampleSet> StructureSampling::sample(const std::vector<size_t>& wanted,
                                                 const std::vector<uint64_t>& seeds) {
  std::vector<SampleSet> out(spaces_.size());
  size_t expected = 0;
  for (size_t i = 0; i < spaces_.size(); ++i) expected += wanted[i] > 0 ? 1 : 0;
  if (!running_.empty()) {
    bool complete = true;
    size_t received = 0;
    for (size_t w = 0; w < running_.size(); ++w) {
      Json request = {{"wanted", Json::array()}};
      for (size_t k : keysOf(w)) {
        for (size_t i : spacesOfKey_[k]) {
          if (wanted[i] > 0) request["wanted"].push_back({i, wanted[i], seeds[i]});
        }
      }
      const std::string text = request.dump() + "\n";
      for (size_t sent = 0; sent < text.size();) {
        const ssize_t n =
            ::send(running_[w].toWorker, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // the worker is gone: reading its points fails below
        sent += static_cast<size_t>(n);
      }
    }
    for (Worker& worker : running_) {
      std::vector<Json> lines;
      if (!readUntil(worker.fromWorker, worker.pending, "done", lines)) {
        complete = false;
        break;
      }
      for (const Json& line : lines) {
        out.at(line.at("space").get<size_t>()) = sampleFromJson(line.at("set"));
        ++received;
      }
    }
    stopWorkers();
    if (complete && received == expected) return out;
    out.assign(spaces_.size(), SampleSet{});
  }
  std::vector<size_t> all(spacesOfKey_.size());
  for (size_t k = 0; k < all.size(); ++k) all[k] = k;
  for (auto& [i, set] : sampleIn(all, wanted, seeds)) out[i] = std::move(set);
  return out;
}

}  // namespace weft::explore
