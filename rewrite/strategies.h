// Named strategies: recipes built only from library rules (rewrite/library.h) with the
// combinators of rewrite/strategy.h, listed by `weft rules` and run by
// `weft rewrite FILE --strategy NAME[:factor=value,...]`.
//
// stencil-tiled-local — a 2D stencil (a map2D over slide2D) computed in overlapped tiles staged in
// local memory; conv-direct — the direct convolution of paper section 4.2 with the tuning
// parameters θ, ρ, κ, σ, ω, coalesce (symbolic unless given) and the structural v and unroll;
// conv-register-blocked — each work-item keeps a κ × σ block of accumulators in private memory
// over one pass of the whole window (scalar accumulators; κ, σ, unroll given);
// conv-register-blocked-vector — the same blocking with vectors, from the rules: σ float<κ>
// accumulators per work-item, weights re-laid out once by a first kernel, R output rows per
// work-group (κ, σ numbers; R a number or a tuning variable), the same OpenCL as
// convRegisterBlockedVectorDefinition below; pad_in_loads = 1 (a number, default 0) leaves the
// padding as a view read by the convolution (no pad kernel, no padded buffer);
// conv-winograd (strategy_conv_winograd.h) and conv-workgroup-tiled
// (strategy_conv_workgroup_tiled.h: work-group tiles staged in local memory, register tiles).
// strategies.cpp lists their steps.
#pragma once

#include <string>
#include <vector>

#include "rewrite/rule.h"
#include "rewrite/strategy.h"

namespace weft::rewrite {

struct NamedStrategy {
  std::string name;
  std::string description;
  std::vector<std::string> factors;  // factors it accepts (theta1, theta2, ...)
  // The strategy for the given factor values (absent factors become tuning variables).
  std::function<Strategy(const RuleArguments&)> make;
};

// Every named strategy.
const std::vector<NamedStrategy>& strategyLibrary();
// The strategy named `name`, or nullptr.
const NamedStrategy* findStrategy(const std::string& name);

// The conv-register-blocked-vector shape built directly as a low-level definition over Listing 3's
// parameters (`listing3`: examples/conv.weft or workloads/conv/conv_layer.h convListing3Definition, whose
// params and declared sizes P, S it reuses) — the target the conv-register-blocked-vector
// strategy produces from the rules (its kernels are the same up to two unused kernel arguments
// and the re-laid-out weights' shape, [M/κ][K][K][C][κ] there: the same memory order). Three kernels, each a let-bound stage:
//   k0  the weights re-laid out once, [M][K][K][C] -> [M/κ][K·K][C·κ] (κ output channels
//       innermost): mapGlb 1/0 over kernel groups and window positions, mapSeq over C·κ;
//   k1  the input zero-padded (mapGlb 1/0 over rows and pixels, mapSeq over channels);
//   k2  the convolution: mapWrg 2 over kernel groups, mapWrg 1 over groups of `rows` output
//       rows, mapLcl 1 over those rows, mapLcl 0 over blocks of σ consecutive output pixels
//       (an explicit local size outW/σ × rows). Each work-item keeps σ accumulators of type
//       float<κ> (initialised with one vector load of the κ biases) and, for each of the
//       K·K·C window positions, multiplies the σ input values (broadcast) by one float<κ> of
//       weights (asVector over the re-laid-out row: one vload): acc[s] = acc[s] + x[s] * w,
//       which code generation emits as fma on vectors; the σ × κ results are written through
//       views, lane by lane, to [M][outH][outW].
// Needs κ | M, σ | outW and rows | outH (typecheck records them as constraints). κ and σ are
// numbers (a vector width, unrolled accumulators); rows may be a tuning variable.
// padInLoads: no k1 — k2 reads the unpadded input through the pad view (code generation's
// guarded loads), two kernels and no padded buffer (the strategy's pad_in_loads = 1).
Definition convRegisterBlockedVectorDefinition(const Definition& listing3, int64_t kappa,
                                               int64_t sigma, const Arith& rows,
                                               bool padInLoads = false);

}  // namespace weft::rewrite
