// The register-blocked vector family's menus (workloads/conv/conv_targets.h) derived from the
// layer and the device profile: κ from the native vector width, σ = ⌈outW / b⌉ for every number
// of blocks b within the registers (a σ that does not divide outW leaves a partial last block),
// interleaved blocks on GPUs only. Checked on the built-in profiles (AVX-512 PoCL, Mali-G72,
// NVIDIA) and an AVX2-like one, on VGG-16 layers and on layers whose output width has no small
// power-of-two divisor (AlexNet's 55, 27 and 13), which the hand-written menus of before left
// without a vector structure.
#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "host/device_profile.h"
#include "ir/printer.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"

using namespace weft;
using namespace weft::explore;

namespace {

host::DeviceProfile avx2Like() {
  host::DeviceProfile profile = host::loadProfile("pocl-cpu");
  profile.nativeFloatVectorWidth = 8;
  profile.preferredFloatVectorWidth = 8;
  profile.registersPerWorkItem = 16 * 8;  // 16 ymm registers of 8 floats
  return profile;
}

// ⌈n / b⌉ for b = 1 … n, at most `limit`, ascending: the fewest pixels per block for each
// number of blocks.
std::vector<int> blockSizesUpTo(int64_t n, int64_t limit) {
  std::set<int> sizes;
  for (int64_t b = 1; b <= n; ++b) {
    const int64_t sigma = (n + b - 1) / b;
    if (sigma <= limit) sizes.insert(static_cast<int>(sigma));
  }
  return {sizes.begin(), sizes.end()};
}

}  // namespace

TEST_CASE("kappa follows the native vector width") {
  const ConvLayer conv1_2 = vgg16Layers()[1];
  CHECK(vectorFamilyKappas(conv1_2, host::loadProfile("pocl-cpu")) == std::vector<int>{8, 16});
  CHECK(vectorFamilyKappas(conv1_2, avx2Like()) == std::vector<int>{4, 8, 16});
  CHECK(vectorFamilyKappas(conv1_2, host::loadProfile("mali-g72")) ==
        std::vector<int>{2, 4, 8, 16});
  CHECK(vectorFamilyKappas(conv1_2, host::loadProfile("nvidia-generic")) ==
        std::vector<int>{2, 4, 8, 16});
  // κ divides M: 3 only where M is a multiple of 3.
  const ConvLayer threes = parseConvLayer("4,8,8,48,3,1,1");
  CHECK(vectorFamilyKappas(threes, host::loadProfile("nvidia-generic")) ==
        std::vector<int>{2, 3, 4, 8, 16});
}

TEST_CASE("sigma is the fewest pixels per block for each block count, within the registers") {
  for (const host::DeviceProfile& device :
       {host::loadProfile("pocl-cpu"), avx2Like(), host::loadProfile("mali-g72"),
        host::loadProfile("nvidia-generic")}) {
    CAPTURE(device.name);
    CAPTURE(device.registersPerWorkItem);
    for (const ConvLayer& layer :
         {vgg16Layers()[1], vgg16Layers()[4], vgg16Layers()[10],
          parseConvLayer("3,227,227,64,11,4,0"), parseConvLayer("64,27,27,192,5,1,2"),
          parseConvLayer("192,13,13,384,3,1,1")}) {
      CAPTURE(layer.describe());
      for (int kappa : vectorFamilyKappas(layer, device)) {
        CAPTURE(kappa);
        const std::vector<int> sigmas = vectorFamilySigmas(layer, kappa, device);
        const int64_t limit = device.registersPerWorkItem / kappa - 2;
        CHECK(sigmas == blockSizesUpTo(layer.outW(), limit));
        for (int sigma : sigmas) {
          CHECK(sigma * kappa + 2 * kappa <= device.registersPerWorkItem);
          CHECK(isVectorFamilyStructure(layer, kappa, sigma));
        }
      }
    }
  }
  // The AVX-512 profile (384 values: 24 registers of 16 floats) on conv1_2: up to 22 pixels
  // of 16 channels; the AVX2-like one (128 values) up to 6 (oneDNN's AVX2 kernels' 6 pixels ×
  // 2 vectors of 8 channels is κ 16, σ 6).
  CHECK(vectorFamilySigmas(vgg16Layers()[1], 16, host::loadProfile("pocl-cpu")) ==
        std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 21});
  CHECK(vectorFamilySigmas(vgg16Layers()[1], 16, avx2Like()) ==
        std::vector<int>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("layers with odd output widths get vector structures") {
  // AlexNet's first layer: 55 output columns (5 x 11), stride 4, 11x11 kernels.
  const ConvLayer alexnet1 = parseConvLayer("3,227,227,64,11,4,0");
  REQUIRE(alexnet1.outW() == 55);
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  // 55 pixels: 28 would be 2 blocks, 19 three, 14 four, 11 five, 10 six, 8 seven, 7 eight.
  CHECK(vectorFamilySigmas(alexnet1, 16, cpu) ==
        std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 14, 19});
  const std::vector<ExploreTarget::Structure> structures = layerVectorStructures(alexnet1, cpu);
  std::set<std::pair<int64_t, int64_t>> blocks;
  for (const ExploreTarget::Structure& s : structures) {
    blocks.insert({s.fixedParameters.at("vector_kappa"), s.fixedParameters.at("vector_sigma")});
    // (κ, σ) imply the partial last block; nothing more is recorded.
    CHECK(s.fixedParameters.count("vector_partial_blocks") == 0);
  }
  CHECK(blocks.count({16, 11}) == 1);
  CHECK(blocks.count({8, 5}) == 1);
  // 55 = 4·14 - 1: blocks of 14 leave a partial last one (13 of 14 pixels kept); 13 would
  // need as many blocks and compute more surplus.
  CHECK(blocks.count({16, 14}) == 1);
  CHECK(blocks.count({16, 13}) == 0);
  CHECK(isVectorFamilyStructure(alexnet1, 16, 14));
  CHECK_FALSE(isVectorFamilyStructure(alexnet1, 16, 56));
  // The partial structure's program pads the windows to whole blocks and crops the surplus.
  const ExploreTarget partial = layerVectorTarget(alexnet1, 16, 14, 1);
  CHECK(printDefinition(partial.parametric).find("crop") != std::string::npos);
  const ExploreTarget whole = layerVectorTarget(alexnet1, 16, 11, 1);
  CHECK(printDefinition(whole.parametric).find("crop") == std::string::npos);
}

TEST_CASE("interleaved blocks are offered on GPUs only") {
  const ConvLayer layer = parseConvLayer("16,16,16,16,3,1,1");
  auto interleaved = [&](const host::DeviceProfile& device) {
    size_t count = 0;
    for (const ExploreTarget::Structure& s : layerVectorStructures(layer, device)) {
      if (s.fixedParameters.count("vector_interleave")) {
        ++count;
        CHECK(s.fixedParameters.at("vector_sigma") > 1);
      }
    }
    return count;
  };
  CHECK(interleaved(host::loadProfile("pocl-cpu")) == 0);
  CHECK(interleaved(avx2Like()) == 0);
  CHECK(interleaved(host::loadProfile("nvidia-generic")) > 0);
  CHECK(interleaved(host::loadProfile("mali-g72")) > 0);
}

TEST_CASE("splits over the channels are offered on GPUs where the blocks leave them under-filled") {
  const host::DeviceProfile hopper = host::loadProfile("nvidia-hopper");
  const ConvLayer conv5_1 = vgg16Layers()[10];
  const ConvLayer conv1_2 = vgg16Layers()[1];
  // conv5_1: 512 x 14 x 14 outputs; κ 4 × σ 2 blocks make 12544 work-items, a twentieth of
  // what 132 SMs hold (2048 each: 65536 registers over 16): splits up to 32.
  CHECK(vectorFamilySplits(conv5_1, 4, 2, hopper) == std::vector<int>{1, 2, 4, 8, 16, 32});
  // conv1_2's κ 4 × σ 7 blocks (114688 work-items, 36 registers each: 1820 per SM) fill half
  // of it: 2 and 4.
  CHECK(vectorFamilySplits(conv1_2, 4, 7, hopper) == std::vector<int>{1, 2, 4});
  CHECK(vectorFamilySplits(conv5_1, 4, 2, host::loadProfile("pocl-cpu")) == std::vector<int>{1});
  CHECK(vectorFamilySplits(conv5_1, 4, 2, avx2Like()) == std::vector<int>{1});
  // The structures: splits only on the interleaved, channels-first blocks, each recorded.
  const ConvLayer small = parseConvLayer("64,8,8,16,3,1,1");
  size_t splitStructures = 0;
  for (const ExploreTarget::Structure& s : layerVectorStructures(small, hopper)) {
    if (!s.fixedParameters.count("vector_split")) continue;
    ++splitStructures;
    CHECK(s.fixedParameters.at("vector_channels_first") == 1);
    CHECK(s.fixedParameters.at("vector_split") > 1);
    CHECK(64 % s.fixedParameters.at("vector_split") == 0);
  }
  CHECK(splitStructures > 0);
  for (const ExploreTarget::Structure& s :
       layerVectorStructures(small, host::loadProfile("pocl-cpu"))) {
    CHECK(s.fixedParameters.count("vector_split") == 0);
  }
}
