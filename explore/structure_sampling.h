// Counting and sampling the spaces of many structures at once (sampleTarget, explorer.h).
//
// A layer offers hundreds of structures, each a space whose valid points are counted (a walk
// over every relaxed point where constraints are relaxed) and then sampled. Counting is most of
// an exploration's preparation: on a GPU profile, seconds per layer before the first variant
// runs. The spaces are independent, so with several cores they are counted in forked workers,
// each taking every W-th distinct space. A worker sends each count back as a JSON line as soon
// as it has it (SamplerOptions::onSpaceCounted reports them as they come), then waits:
// once the caller has shared the samples out, it draws those of its spaces with the samplers
// that counted them (a fresh sampler would count again) and sends the points. Spaces that are the
// same to a sampler (the same sampling key) are counted once and sampled by one sampler, in the
// order of their indices, whatever the number of workers: the points are the same as those of one
// process.
//
// A worker that fails (a crash, an exception) makes the whole step run again in this process:
// workers save time, they never change what is sampled.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "explore/parameter_space.h"
#include "explore/sampler.h"

namespace weft::explore {

// A space's count, or why it could not be counted.
struct CountedSpace {
  std::optional<SpaceCount> count;
  std::string error;
};

class StructureSampling {
 public:
  // `spaces` stay owned by the caller and must outlive this object. `workers`: the processes to
  // use (1: none forked).
  StructureSampling(std::vector<const ParameterSpace*> spaces, SamplerOptions options,
                    size_t workers);
  ~StructureSampling();

  // Each space's count of valid points (Sampler::count without a cap).
  std::vector<CountedSpace> count();
  // sample(wanted[i], seeds[i]) of each space with wanted[i] > 0, in index order per sampling
  // key; spaces with wanted[i] == 0 get an empty set. Call count() first.
  std::vector<SampleSet> sample(const std::vector<size_t>& wanted,
                                const std::vector<uint64_t>& seeds);
  // The workers that counted (0: this process did).
  size_t workersThatCounted() const { return workersThatCounted_; }

 private:
  CountedSpace countOne(size_t keyIndex);
  struct Worker {
    pid_t pid;
    int fromWorker;
    int toWorker;
    std::string pending;  // read past the last line
  };
  std::vector<size_t> keysOf(size_t worker) const;  // every W-th distinct space from `worker`
  void runWorker(size_t w, int toParent, int fromParent);
  bool startWorkers(std::vector<CountedSpace>& byKey);
  void stopWorkers();
  std::vector<std::pair<size_t, SampleSet>> sampleIn(const std::vector<size_t>& keyIndices,
                                                     const std::vector<size_t>& wanted,
                                                     const std::vector<uint64_t>& seeds);
  Sampler& samplerOf(size_t keyIndex);

  std::vector<const ParameterSpace*> spaces_;
  SamplerOptions options_;
  size_t workers_;
  std::vector<size_t> keyOf_;                       // space -> index of its distinct key
  std::vector<std::vector<size_t>> spacesOfKey_;    // key -> its spaces, ascending
  std::vector<std::unique_ptr<Sampler>> samplers_;  // key -> its sampler, made on first use
  std::vector<SpaceCount> counts_;                  // key -> its sampler's count
  std::vector<Worker> running_;                     // between count() and sample()
  size_t workersThatCounted_ = 0;
};

// The workers worth forking on this machine for `spaces` distinct spaces: the cores, at most
// 16, and none for a few spaces.
size_t samplingWorkers(size_t spaces);

}  // namespace weft::explore
