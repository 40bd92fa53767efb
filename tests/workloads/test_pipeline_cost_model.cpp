// Tests of the pipeline cost model (workloads/pipeline/pipeline_cost_model.h) on the pocl-cpu
// profile (16 lanes, 384 registers per work-item, 2 compute units): overlapped tiles that
// recompute more of their halo count more operations; tiles narrower than the vector lose
// lanes; a private tile beyond the registers spills, a sliding window's rows do not; the unfused
// program moves its intermediate images through memory, the fused one does not; on a CPU a
// written image moves twice unless its stores stream, and streaming_stores is a switch of the
// structures that store vectors; a walk by column blocks whose strip has more output rows than
// the profile's conflict-free store streams loses the probe's cycles per store; a CPU whose
// first-level cache is known spills only past a lane's share of it; the profile's measured
// bandwidth replaces the nominal one; every sampled point of Harris's structures gets a
// prediction and pipelineTarget installs the model. And on a map's structures (named by their
// rewrite hash): work-groups of two cost a CPU 256 times what groups of 512 cost (the profile's
// measured cost per group, else the nominal one; none on a GPU), a walk through a stride moves a
// cache line per value, and accesses every work-item of a group repeats run at the first-level
// cache's rate. On a CPU the reads run in vectors where the compiler vectorises the loop around
// them: the work-items' loop of a kernel whose work-item runs no loop, or a body loop that walks
// memory contiguously; not a reduction's loop. Lines that no first-level cache keeps come back
// at the second-level cache's rate where it keeps them, at memory's where a walk takes each from
// a page of its own.
#include <doctest/doctest.h>

#include <cstdlib>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "explore/parameter_space.h"
#include "host/device_profile.h"
#include "ir/parser.h"
#include "workloads/pipeline/pipeline_cost_model.h"
#include "workloads/pipeline/pipeline_target.h"

using namespace weft;
using namespace weft::explore;

namespace {

Definition loadExample(const std::string& relative) {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  return parseFile(std::string(root ? root : ".") + "/examples/" + relative).definitions.back();
}

using Parameters = std::map<std::string, int64_t>;

const ArithBinding kBlurSizes = {{"W", 4096}, {"H", 4096}};

// Blur at 4096² as written and row-inlined (fusion=12) with float16 vectors.
ExploreTarget rowInlinedBlur() {
  PipelineTargetOptions options;
  options.vectorWidth = 16;
  options.strategies = {"pipeline-inlined-rows"};
  return pipelineTarget(loadExample("pipelines/blur.weft"), kBlurSizes, options);
}

}  // namespace

TEST_CASE("blur: halo recomputation, lanes and the unfused program's memory traffic") {
  const Definition blur = loadExample("pipelines/blur.weft");
  const ArithBinding sizes = {{"W", 4096}, {"H", 4096}};
  const ExploreTarget target = pipelineTarget(blur, sizes, {});
  const host::DeviceProfile device = host::loadProfile("pocl-cpu");
  const auto predict = pipelineCostPredictor(target.structures, sizes);

  // fusion=1 (pipeline-fused-private): theta1 - 2 output rows per theta1 rows of the producer.
  const auto short3 = predict({{"fusion", 1}, {"theta1", 3}, {"theta2", 32},
                               {"local_k0_d0", 8}, {"local_k0_d1", 2}}, device);
  const auto tall18 = predict({{"fusion", 1}, {"theta1", 18}, {"theta2", 32},
                               {"local_k0_d0", 8}, {"local_k0_d1", 2}}, device);
  const auto narrow = predict({{"fusion", 1}, {"theta1", 18}, {"theta2", 2},
                               {"local_k0_d0", 8}, {"local_k0_d1", 2}}, device);
  REQUIRE(short3);
  REQUIRE(tall18);
  REQUIRE(narrow);
  // The producer's three rows per output row against 18/16 of a row.
  CHECK(short3->flops > 1.5 * static_cast<double>(tall18->flops));
  CHECK(short3->computeSeconds > tall18->computeSeconds);
  CHECK(tall18->laneUse == 1.0);
  CHECK(narrow->laneUse == doctest::Approx(2.0 / 16));
  CHECK(narrow->computeSeconds > 4 * tall18->computeSeconds);
  CHECK(narrow->seconds > 1.5 * tall18->seconds);
  CHECK(tall18->kernels == 1);

  // The program as written: two kernels and the intermediate image written and read back.
  const auto unfused = predict({{"fusion", 0}, {"local_k0_d0", 16}, {"local_k0_d1", 1},
                                {"local_k1_d0", 16}, {"local_k1_d1", 1}}, device);
  REQUIRE(unfused);
  CHECK(unfused->kernels == 2);
  CHECK(unfused->bytes > 1.5 * tall18->bytes);
  CHECK(unfused->memorySeconds > tall18->memorySeconds);

  // A structure the target does not have is not predicted.
  CHECK_FALSE(predict({{"fusion", 5}, {"theta1", 10}, {"theta2", 16}}, device));
  // pipelineTarget installs the model.
  REQUIRE(target.predictSeconds);
  CHECK(target.predictSeconds({{"fusion", 1}, {"theta1", 18}, {"theta2", 32},
                               {"local_k0_d0", 8}, {"local_k0_d1", 2}},
                              device) == doctest::Approx(tall18->seconds));
}

TEST_CASE("blur along whole rows: strips that leave cores idle stream at their share") {
  const ArithBinding sizes = kBlurSizes;
  const ExploreTarget target = rowInlinedBlur();
  host::DeviceProfile device = host::loadProfile("pocl-cpu");
  device.computeUnits = 2;
  const auto predict = pipelineCostPredictor(target.structures, sizes);
  // One strip of all 4096 rows runs on one of the two units; 512 strips of 8 keep both busy.
  const auto oneStrip =
      predict({{"fusion", 12}, {"vector_width", 16}, {"chunk", 4096}, {"local_k0_d0", 1}}, device);
  const auto strips =
      predict({{"fusion", 12}, {"vector_width", 16}, {"chunk", 8}, {"local_k0_d0", 4}}, device);
  REQUIRE(oneStrip);
  REQUIRE(strips);
  CHECK(oneStrip->balanceFactor == doctest::Approx(2.0));
  CHECK(strips->balanceFactor == doctest::Approx(1.0));
  CHECK(oneStrip->bytes == doctest::Approx(strips->bytes));
  CHECK(oneStrip->memorySeconds == doctest::Approx(2 * strips->memorySeconds));
  CHECK(oneStrip->seconds > 1.5 * strips->seconds);
  CHECK(strips->laneUse == 1.0);
}

TEST_CASE("blur by column blocks: strips of more output rows than store streams conflict") {
  PipelineTargetOptions options;
  options.vectorWidth = 16;
  options.strategies = {"pipeline-column-walk"};
  const ExploreTarget target =
      pipelineTarget(loadExample("pipelines/blur.weft"), kBlurSizes, options);
  REQUIRE(target.structures.size() == 2);  // as written, column walk
  host::DeviceProfile device = host::loadProfile("pocl-cpu");
  device.conflictFreeStoreStreams = 12;
  device.conflictingStoreCycles = 8;
  const auto predict = pipelineCostPredictor(target.structures, kBlurSizes);
  auto point = [&](int64_t theta) {
    return predict({{"fusion", 14}, {"vector_width", 16}, {"theta", theta}, {"local_k0_d0", 4}},
                   device);
  };
  // Strips of 8 output rows store into 8 rows 16 KiB apart: no conflicts; of 32, past 12.
  const auto shortStrips = point(10), tallStrips = point(34);
  REQUIRE(shortStrips);
  REQUIRE(tallStrips);
  CHECK(shortStrips->storeConflictSeconds == 0);
  // 4096 x 4096 / 16 vector stores of 8 cycles over 2 units.
  const double clock = device.maxClockMHz * 1e6;
  CHECK(tallStrips->storeConflictSeconds ==
        doctest::Approx(4096.0 * 4096 / 16 * 8 / device.computeUnits / clock));
  CHECK(tallStrips->seconds > shortStrips->seconds);
  // Strips of 3 rows read every input row three times (1 output row each), of 10 rows 10/8
  // times; the output moves twice (ordinary stores: read for ownership).
  const auto thinStrips = point(3);
  REQUIRE(thinStrips);
  const double image = 4096.0 * 4096 * 4;
  CHECK(shortStrips->bytes == doctest::Approx(image * 10 / 8 + 2 * image));
  CHECK(thinStrips->bytes == doctest::Approx(image * 3 + 2 * image));
  CHECK(thinStrips->seconds > shortStrips->seconds);
  // Without the probe's figures, no conflicts are counted.
  device.conflictingStoreCycles = 0;
  CHECK(point(34)->storeConflictSeconds == 0);
}

TEST_CASE("Harris: a private tile beyond the registers spills, the sliding window's rows do not") {
  const Definition harris = loadExample("pipelines/harris.weft");
  const ArithBinding sizes = {{"W", 4256}, {"H", 2832}};
  PipelineTargetOptions options;
  options.strategies = {"pipeline-fused-private-tuples", "pipeline-fused-sliding-window-tuples"};
  const ExploreTarget target = pipelineTarget(harris, sizes, options);
  const host::DeviceProfile device = host::loadProfile("pocl-cpu");
  const auto predict = pipelineCostPredictor(target.structures, sizes);

  const Parameters wide = {{"theta1", 10}, {"theta2", 58}, {"local_k0_d0", 1},
                           {"local_k0_d1", 1}};
  Parameters privateWide = wide, slidingWide = wide;
  privateWide["fusion"] = 5;
  slidingWide["fusion"] = 7;
  const auto privateTile = predict(privateWide, device);
  const auto sliding = predict(slidingWide, device);
  const auto privateNarrow = predict({{"fusion", 5}, {"theta1", 10}, {"theta2", 16},
                                      {"local_k0_d0", 16}, {"local_k0_d1", 1}}, device);
  REQUIRE(privateTile);
  REQUIRE(sliding);
  REQUIRE(privateNarrow);
  // 10 x 58 triples (1740 values) against 384 registers; 10 x 16 triples (480) spill less; the
  // window keeps three rows of 58 triples (522).
  CHECK(privateTile->spillFactor > 1.5);
  CHECK(privateNarrow->spillFactor < privateTile->spillFactor);
  CHECK(sliding->spillFactor < privateNarrow->spillFactor + 0.1);
  CHECK(sliding->seconds < privateTile->seconds);
  // Both compute each row of triples once per tile: the same operations.
  CHECK(sliding->flops <= privateTile->flops);
  // One kernel each: the whole pipeline fused.
  CHECK(privateTile->kernels == 1);
  CHECK(sliding->kernels == 1);

  // A CPU whose first-level cache the profile knows keeps a lane's share of it (32 KiB / 4 /
  // 16 = 512 values) without slowdown, as its space allows: the narrow tile no longer spills.
  host::DeviceProfile withCache = device;
  withCache.firstLevelCacheBytes = 32 << 10;
  const auto narrowWithCache = predict(
      {{"fusion", 5}, {"theta1", 10}, {"theta2", 16}, {"local_k0_d0", 16}, {"local_k0_d1", 1}},
      withCache);
  const auto wideWithCache = predict(privateWide, withCache);
  REQUIRE(narrowWithCache);
  REQUIRE(wideWithCache);
  CHECK(privateNarrow->spillFactor > 1);
  CHECK(narrowWithCache->spillFactor == 1);
  CHECK(wideWithCache->spillFactor > 1.5);
  CHECK(wideWithCache->spillFactor < privateTile->spillFactor);
}

TEST_CASE("the profile's measured memory bandwidth replaces the nominal one") {
  const ExploreTarget target = pipelineTarget(loadExample("pipelines/blur.weft"), kBlurSizes, {});
  const auto predict = pipelineCostPredictor(target.structures, kBlurSizes);
  host::DeviceProfile nominal = host::loadProfile("pocl-cpu");
  nominal.memoryBytesPerCycle = 0;
  host::DeviceProfile measured = nominal;
  measured.memoryBytesPerCycle = 3;
  host::DeviceProfile faster = nominal;
  faster.memoryBytesPerCycle = 12;
  const Parameters unfused = {{"fusion", 0},
                              {"local_k0_d0", 16},
                              {"local_k0_d1", 1},
                              {"local_k1_d0", 16},
                              {"local_k1_d1", 1}};
  const auto atNominal = predict(unfused, nominal);
  const auto atMeasured = predict(unfused, measured);
  const auto atFaster = predict(unfused, faster);
  REQUIRE(atNominal);
  REQUIRE(atMeasured);
  REQUIRE(atFaster);
  CHECK(atMeasured->bytes == doctest::Approx(atNominal->bytes));
  CHECK(atMeasured->memorySeconds == doctest::Approx(4 * atFaster->memorySeconds));
  // The nominal CPU figure lies between the two.
  CHECK(atNominal->memorySeconds < atMeasured->memorySeconds);
  CHECK(atNominal->memorySeconds > atFaster->memorySeconds);
}

TEST_CASE("every sampled point of Harris's structures gets a finite prediction") {
  const Definition harris = loadExample("pipelines/harris.weft");
  const ArithBinding sizes = {{"W", 4256}, {"H", 2832}};
  const ExploreTarget target = pipelineTarget(harris, sizes, {});
  const host::DeviceProfile device = host::loadProfile("pocl-cpu");
  const SampledTarget sampled = sampleTarget(target, device, 40, 7);
  REQUIRE(sampled.points.size() >= 20);
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const size_t space = sampled.pointSpace.at(j);
    const ExploreTarget::Structure& structure =
        target.structures.at(sampled.spaceStructure.at(space));
    const std::string parameters = parametersJson(sampled.spaces.at(space), sampled.points[j],
                                                  structure.fixedParameters);
    CAPTURE(parameters);
    const std::optional<double> seconds =
        target.predictSeconds(parseRecordedParameters(parameters), device);
    REQUIRE(seconds);
    CHECK(std::isfinite(*seconds));
    CHECK(*seconds > 0);
  }
}

TEST_CASE("streaming stores: on a CPU the written image moves once instead of twice") {
  const ArithBinding sizes = kBlurSizes;
  const ExploreTarget target = rowInlinedBlur();
  const auto predict = pipelineCostPredictor(target.structures, sizes);
  const Parameters point = {{"fusion", 12}, {"vector_width", 16}, {"chunk", 8}, {"local_k0_d0", 4}};
  Parameters streamingPoint = point;
  streamingPoint["streaming_stores"] = 1;
  const double image = 4096.0 * 4096 * 4;
  host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  const auto ordinary = predict(point, cpu);
  const auto streaming = predict(streamingPoint, cpu);
  REQUIRE(ordinary);
  REQUIRE(streaming);
  // The input read and the output written: read for ownership first, or streamed.
  CHECK(ordinary->bytes == doctest::Approx(3 * image));
  CHECK(streaming->bytes == doctest::Approx(2 * image));
  CHECK(ordinary->memorySeconds == doctest::Approx(1.5 * streaming->memorySeconds));
  // A GPU writes whole lines without reading them: no difference.
  const host::DeviceProfile gpu = host::loadProfile("mali-g72");
  const auto gpuOrdinary = predict(point, gpu);
  const auto gpuStreaming = predict(streamingPoint, gpu);
  REQUIRE(gpuOrdinary);
  REQUIRE(gpuStreaming);
  CHECK(gpuOrdinary->bytes == doctest::Approx(2 * image));
  CHECK(gpuStreaming->bytes == doctest::Approx(gpuOrdinary->bytes));
}

TEST_CASE(
    "streaming stores are a switch of the structures that store vectors, where the device "
    "takes them") {
  const ArithBinding sizes = kBlurSizes;
  const ExploreTarget target = rowInlinedBlur();
  REQUIRE(target.codegenChoices);
  REQUIRE(target.structures.size() == 2);  // as written, row-inlined
  host::DeviceProfile device = host::loadProfile("pocl-cpu");
  REQUIRE(device.nontemporalStores);
  auto spaceOf = [&](const ExploreTarget::Structure& structure, bool choices) {
    SpaceOptions space;
    space.switches = structure.switches;
    space.device = device;
    space.codegenChoices = choices;
    return buildParameterSpace(structure.parametric, sizes, space);
  };
  const ParameterSpace unfused = spaceOf(target.structures[0], true);
  const ParameterSpace rows = spaceOf(target.structures[1], true);
  // The program as written stores scalars: nothing to stream.
  CHECK(unfused.indexOf(kStreamingStoresParameter) < 0);
  REQUIRE(rows.indexOf(kStreamingStoresParameter) >= 0);
  const Parameter& streaming =
      rows.parameters[static_cast<size_t>(rows.indexOf(kStreamingStoresParameter))];
  CHECK(streaming.kind == DomainKind::Switch);
  CHECK(streaming.values() == std::vector<int64_t>{0, 1});
  // Not without the option, nor on a device whose compiler does not take the builtin.
  CHECK(spaceOf(target.structures[1], false).indexOf(kStreamingStoresParameter) < 0);
  device.nontemporalStores = false;
  CHECK(spaceOf(target.structures[1], true).indexOf(kStreamingStoresParameter) < 0);

  // Aligned reads: the row-inlined blur's taps are float16 reads (64 bytes); pocl-cpu's cache
  // line is 64 bytes, so each misaligned one spans two lines: always on. With the line unknown,
  // a switch; nothing in the program as written (scalar reads) or without the option.
  CHECK(unfused.indexOf(kAlignedReadsParameter) < 0);
  REQUIRE(rows.indexOf(kAlignedReadsParameter) >= 0);
  const Parameter& aligned =
      rows.parameters[static_cast<size_t>(rows.indexOf(kAlignedReadsParameter))];
  CHECK(aligned.values() == std::vector<int64_t>{1});
  CHECK(spaceOf(target.structures[1], false).indexOf(kAlignedReadsParameter) < 0);
  device.cacheLineBytes = 0;
  const ParameterSpace unknownLine = spaceOf(target.structures[1], true);
  REQUIRE(unknownLine.indexOf(kAlignedReadsParameter) >= 0);
  CHECK(unknownLine.parameters[static_cast<size_t>(unknownLine.indexOf(kAlignedReadsParameter))]
            .values() == std::vector<int64_t>{0, 1});
}

namespace {

Definition parsedDefinition(const std::string& text) {
  return parseProgram(text).definitions.back();
}

// The programs `texts` as structures of the rewrite search, named by their "rewrite" parameter
// 1, 2, ... in order.
std::vector<ExploreTarget::Structure> rewriteStructures(std::initializer_list<const char*> texts) {
  std::vector<ExploreTarget::Structure> structures;
  int64_t hash = 1;
  for (const char* text : texts) {
    ExploreTarget::Structure s;
    s.parametric = parsedDefinition(text);
    s.fixedParameters = {{"rewrite", hash++}};
    structures.push_back(std::move(s));
  }
  return structures;
}

// Structures of `map(a -> a * 2.0f, x)` as the rewrite search names them (by their "rewrite"
// parameter): 1 one work-item per element, 2 the same reading through a stride of 4096
// (consecutive work-items read 4096 floats apart), 3 work-groups that copy 4096 floats to local
// memory and in which every work-item then maps all of them (the map is not divided among the
// work-items).
std::vector<ExploreTarget::Structure> mapStructures() {
  const char* plain = "def f(x: [float]N) = mapGlb(0, a -> a * 2.0f, x)";
  const char* strided = "def f(x: [float]N) = mapGlb(0, a -> a * 2.0f, reorder(stride(4096), x))";
  const char* repeated =
      "def f(x: [float]N) =\n"
      "  join(join(mapWrg(0, chunk -> mapSeq(chunk_1 -> map(a -> a * 2.0f, chunk_1),\n"
      "    toLocal(copy -> mapLcl(1, copy_1 -> mapLcl(0, copy_2 -> id(copy_2), copy_1), copy),\n"
      "      chunk)), split(64, split(64, x)))))";
  return rewriteStructures({plain, strided, repeated});
}

}  // namespace

TEST_CASE("a map: small work-groups cost a CPU per group, strided and repeated accesses count") {
  const ArithBinding sizes = {{"N", 1 << 24}};
  const auto predict = pipelineCostPredictor(mapStructures(), sizes);
  host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  cpu.workGroupCycles = 0;  // the nominal figure
  const auto pairs = predict({{"rewrite", 1}, {"local_k0_d0", 2}}, cpu);
  const auto wide = predict({{"rewrite", 1}, {"local_k0_d0", 512}}, cpu);
  REQUIRE(pairs);
  REQUIRE(wide);
  // 2^23 work-groups against 2^15: the same bytes, 256 times the groups' cost.
  CHECK(pairs->bytes == doctest::Approx(wide->bytes));
  CHECK(pairs->workGroupSeconds == doctest::Approx(256 * wide->workGroupSeconds));
  CHECK(pairs->seconds > 5 * wide->seconds);
  // The profile's measured cost replaces the nominal one.
  host::DeviceProfile costly = cpu;
  costly.workGroupCycles = 88;
  const auto costlyPairs = predict({{"rewrite", 1}, {"local_k0_d0", 2}}, costly);
  REQUIRE(costlyPairs);
  CHECK(costlyPairs->workGroupSeconds == doctest::Approx(4 * pairs->workGroupSeconds));
  // A GPU schedules blocks in hardware.
  const auto onGpu =
      predict({{"rewrite", 1}, {"local_k0_d0", 2}}, host::loadProfile("nvidia-hopper"));
  REQUIRE(onGpu);
  CHECK(onGpu->workGroupSeconds == 0);

  // Consecutive work-items 4096 floats apart use 4 bytes of each 64-byte line they load: the
  // input (read through the stride) moves 16 times, the output (written in order) once.
  const auto strided = predict({{"rewrite", 2}, {"local_k0_d0", 512}}, cpu);
  REQUIRE(strided);
  const double image = 4.0 * (1 << 24);
  // Written with ordinary stores: the output moves twice (read for ownership).
  CHECK(wide->bytes == doctest::Approx(3 * image));
  CHECK(strided->bytes == doctest::Approx(16 * image + 2 * image));
  CHECK(strided->memorySeconds > 5 * wide->memorySeconds);
  // On a GPU the lanes of a warp are what must be contiguous: the same.
  const auto stridedOnGpu =
      predict({{"rewrite", 2}, {"local_k0_d0", 512}}, host::loadProfile("nvidia-hopper"));
  const auto wideOnGpu =
      predict({{"rewrite", 1}, {"local_k0_d0", 512}}, host::loadProfile("nvidia-hopper"));
  REQUIRE(stridedOnGpu);
  REQUIRE(wideOnGpu);
  CHECK(stridedOnGpu->bytes > 5 * wideOnGpu->bytes);

  // Every one of a work-group's 4096 work-items maps the group's 4096 floats: the accesses run
  // 4096 times as often as the data needs, at the first-level cache's rate.
  const auto repeated = predict({{"rewrite", 3}}, cpu);
  REQUIRE(repeated);
  CHECK(repeated->accessSeconds > 1000 * wide->accessSeconds);
  CHECK(repeated->seconds > 50 * wide->seconds);
}

TEST_CASE("a CPU vectorises a loop-free work-item's loop, or a body loop that walks memory") {
  // A 3-tap sum over a clamped row: 1 with its taps unrolled (no loop in the work-item, whose
  // loop PoCL vectorises), 2 with them in a reduction's loop (which hides that loop and is not
  // vectorised itself); 3 a work-item that doubles a row of 64 in a loop, contiguously; 4 a
  // loop-free work-item reading a transposed matrix by its index divided and taken modulo
  // (gathered lane by lane).
  const char* unrolled =
      "def f(x: [float]N): [float]N = join(mapGlb(0, w -> toGlobal(r -> mapSeq(y -> id(y), r),\n"
      "  reduceSeqUnroll(toPrivate(z -> id(z), 0.0f), (acc, p) -> acc + p, w)),\n"
      "  slide(3, 1, pad(1, 1, clamp, x))))";
  const char* looped =
      "def f(x: [float]N): [float]N = join(mapGlb(0, w -> toGlobal(r -> mapSeq(y -> id(y), r),\n"
      "  reduceSeq(toPrivate(z -> id(z), 0.0f), (acc, p) -> acc + p, w)),\n"
      "  slide(3, 1, pad(1, 1, clamp, x))))";
  const char* rows =
      "def f(x: [float]N): [float]N = join(mapGlb(0, row -> mapSeq(a -> a * 2.0f, row),\n"
      "  split(64, x)))";
  const char* transposed =
      "def f(x: [float]N) = mapGlb(0, a -> a * 2.0f, join(transpose(split(64, x))))";
  // 5: the unrolled taps of 1 under mapWrg and mapLcl, whose reads clamp the local index (no
  // interior copy: gathered).
  const char* grouped =
      "def f(x: [float]N): [float]N = join(mapWrg(0, ws -> join(mapLcl(0, w -> toGlobal(\n"
      "  r -> mapSeq(y -> id(y), r), reduceSeqUnroll(toPrivate(z -> id(z), 0.0f),\n"
      "  (acc, p) -> acc + p, w)), ws)), split(64, slide(3, 1, pad(1, 1, clamp, x)))))";
  const auto predict = pipelineCostPredictor(
      rewriteStructures({unrolled, looped, rows, transposed, grouped}), {{"N", 1 << 20}});
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  auto perRead = [&](const std::map<std::string, int64_t>& point, const host::DeviceProfile& on) {
    const auto prediction = predict(point, on);
    REQUIRE(prediction);
    return prediction->readOperationsPerRead;
  };
  CHECK(perRead({{"rewrite", 1}, {"local_k0_d0", 64}}, cpu) == doctest::Approx(1.0 / 16));
  CHECK(perRead({{"rewrite", 1}, {"local_k0_d0", 4}}, cpu) == doctest::Approx(1.0 / 4));
  CHECK(perRead({{"rewrite", 2}, {"local_k0_d0", 64}}, cpu) == doctest::Approx(1.0));
  CHECK(perRead({{"rewrite", 3}, {"local_k0_d0", 64}}, cpu) == doctest::Approx(1.0 / 16));
  CHECK(perRead({{"rewrite", 4}, {"local_k0_d0", 64}}, cpu) == doctest::Approx(1.0));
  CHECK(perRead({{"rewrite", 5}}, cpu) == doctest::Approx(1.0));
  // A GPU's lanes are its work-items: nothing to scale.
  CHECK(perRead({{"rewrite", 1}, {"local_k0_d0", 64}}, host::loadProfile("nvidia-hopper")) == 1.0);
}

TEST_CASE("lines the second-level cache keeps come back at its rate, a page walk's at memory's") {
  // An untiled product: a work-item walks a column of B (1024 lines, more than a 32 KiB cache
  // holds), so the next one loads it again. With rows of 64 floats the column's lines share
  // pages and all of B (256 KiB) stays in a 1 MiB second-level cache; with rows of 1024 every
  // line of the column is on a page of its own.
  const char* product =
      "def mm(a: [[float]K]M, b: [[float]N]K) =\n"
      "  mapGlb(1, row -> mapGlb(0, col -> reduceSeq(0.0f, (acc, p) -> acc + p._0 * p._1,\n"
      "                                             zip(row, col)), transpose(b)), a)";
  const auto structures = rewriteStructures({product});
  host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  cpu.firstLevelCacheBytes = 32 << 10;
  cpu.memoryBytesPerCycle = 8;
  host::DeviceProfile withSecondLevel = cpu;
  withSecondLevel.secondLevelCacheBytes = 1 << 20;
  withSecondLevel.secondLevelBytesPerCycle = 40;
  const std::map<std::string, int64_t> point = {
      {"rewrite", 1}, {"local_k0_d0", 16}, {"local_k0_d1", 1}};
  for (const int64_t n : {64, 1024}) {
    CAPTURE(n);
    const auto predict = pipelineCostPredictor(
        structures, {{"M", 16}, {"N", n}, {"K", 1024}}, /*withCacheTraffic=*/true);
    const auto memoryOnly = predict(point, cpu);
    const auto twoLevels = predict(point, withSecondLevel);
    REQUIRE(memoryOnly);
    REQUIRE(twoLevels);
    CHECK(twoLevels->cacheBytes == doctest::Approx(memoryOnly->cacheBytes));
    CHECK(memoryOnly->cacheSeconds > 0);
    if (n == 64) {
      // Nearly every line comes back from the second level, five times as fast.
      CHECK(twoLevels->cacheSeconds < 0.25 * memoryOnly->cacheSeconds);
      CHECK(twoLevels->cacheSeconds > 0.15 * memoryOnly->cacheSeconds);
    } else {
      // B's lines cost what memory's do; only the few others come back faster.
      CHECK(twoLevels->cacheSeconds > 0.9 * memoryOnly->cacheSeconds);
    }
  }
}
