// The space of conv-direct variants of a convolution layer, structural choices included.
//
// The conv-direct strategy (rewrite/strategies.h) leaves θ, ρ, κ, σ, ω and the coalesce switch
// symbolic, but the vector width v and the unroll switch choose the program's structure (vector
// types have constant widths), so each (v, unroll) pair gives its own parametric program and
// its own parameter space. The layer's space is the union of those spaces: a point is a
// structure plus values for its parameters. Sampling is uniform over the union: each sample
// picks a structure with probability proportional to its exact valid count, then a point of it
// (the samplers of explore/sampler.h are uniform within one structure), so every valid variant
// is equally likely. Structures whose space is empty (e.g. v = 16 when no ω is a multiple of 16)
// are listed with the reason and left out.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "explore/parameter_space.h"
#include "explore/sampler.h"
#include "workloads/conv/conv_layer.h"
#include "ir/expr.h"

namespace weft::explore {

struct ConvDirectStructure {
  int vectorWidth = 1;  // v: 1 = scalar
  int unroll = 0;       // 1: reductions unrolled
  std::string describe() const;  // "v=4 unroll=0"
};

struct ConvDirectSubspace {
  ConvDirectStructure structure;
  Definition parametric;                  // conv-direct's output for this structure
  std::unique_ptr<ParameterSpace> space;  // owned here; the sampler refers to it
  std::unique_ptr<Sampler> sampler;
  SpaceCount count;                       // exact for every VGG-16 layer (bench/space_sampling)
};

struct ConvDirectSpace {
  ConvLayer layer;
  ArithBinding sizes;  // C, H, W, M, K, P, S of Listing 3
  std::vector<ConvDirectSubspace> subspaces;  // the non-empty structures
  std::vector<std::string> emptyStructures;   // "v=16 unroll=1: <why>"
  uint64_t validPoints() const;  // the sum of the subspaces' counts
  bool exact() const;            // every count exact
};

// Builds the space for the given structures (default: v in {1, 2, 4, 8, 16}, unroll in {0, 1}).
ConvDirectSpace buildConvDirectSpace(const ConvLayer& layer, const SpaceOptions& options,
                                     const std::vector<ConvDirectStructure>& structures = {});

struct ConvDirectPoint {
  size_t subspace = 0;          // index into ConvDirectSpace::subspaces
  ArithBinding parameters;      // tuning parameter name -> value
  std::string describe(const ConvDirectSpace& space) const;  // "v=4 unroll=0 theta1=8 ..."
};

// `count` unique points, uniform over the union, reproducible from `seed` (fewer when the space
// is smaller). Throws std::runtime_error when no structure has a valid point.
std::vector<ConvDirectPoint> sampleConvDirect(ConvDirectSpace& space, size_t count, uint64_t seed);

// The parametric program of the point's structure with the point's values substituted: a
// concrete low-level definition (sizes still symbolic; bind them with space.sizes).
Definition instantiate(const ConvDirectSpace& space, const ConvDirectPoint& point);

}  // namespace weft::explore
