// A convolution layer's exploration targets: the structures the conv workload offers (the
// paper's conv-direct strategy over its vector width and unrolling; the register-blocked vector
// family over κ output channels × σ pixels per work-item, padding in a kernel or in the loads,
// and the window's loop order; Winograd for 3×3 stride-1 layers; on GPUs the work-group-tiled
// family), each with the layer's sizes, its reference (the naive direct
// convolution of Listing 3, default-lowered), its constant inputs (weights and biases) and the
// cost model (workloads/conv/cost_model.h), and the structure a recorded variant names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "explore/explorer.h"
#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"

namespace weft::explore {

// conv-direct's structure menu (the LIFT paper's vector widths and unroll settings). Every
// command that lists or checks conv-direct structures reads it here.
inline const std::vector<int> kConvDirectVectorWidths = {1, 2, 4, 8, 16};
inline const std::vector<int> kConvDirectUnrolls = {0, 1};

// The register-blocked vector family's menus, derived from the layer and the device profile:
//  - κ (output channels per float<κ> accumulator): the accumulator widths 2, 3, 4, 8, 16 that
//    divide M, at least half the native float vector width (a narrower one leaves most lanes
//    idle), and past one register a multiple of it (whole registers);
//  - σ (pixels per work-item): the fewest pixels per block for each number of blocks b per
//    output row, ⌈outW / b⌉ (every divisor of outW among them), whose σ·κ accumulators, with a
//    vector of weights and a temporary, fit the profile's registers per work-item
//    (σκ + 2κ ≤ registersPerWorkItem: code generation's own estimate, which the explorer's
//    register constraint checks). A σ that does not divide the output width leaves a partial
//    last block: the strategy's partial_blocks (the windows padded to whole blocks, the
//    surplus outputs computed and dropped by guarded stores), which the cost model counts. A
//    larger σ with as many blocks only computes more surplus, so it is not offered.
std::vector<int> vectorFamilyKappas(const ConvLayer& layer, const host::DeviceProfile& device);
std::vector<int> vectorFamilySigmas(const ConvLayer& layer, int kappa,
                                    const host::DeviceProfile& device);
// The splits S of the window's sum over the channels (split-K) offered for κ × σ blocks: 1,
// and on a GPU the powers of two S ≥ 2 that divide C with at least 8 channels per part while
// the blocks' work-items times S/2 stay below what the device holds at once (so the smaller
// split left it under-filled). What the device holds: per compute unit, its registers per
// work-group over the block's register estimate (σκ + 2κ), at most two work-groups of the
// largest size, else one such work-group; times the compute units.
std::vector<int> vectorFamilySplits(const ConvLayer& layer, int kappa, int sigma,
                                    const host::DeviceProfile& device);

// conv-direct's structures with the vector width and unroll setting each restricted to one
// value (-1: the whole menu). Throws std::invalid_argument when the choice leaves none.
struct ConvDirectChoices {
  std::vector<int> widths;
  std::vector<int> unrolls;
};
ConvDirectChoices convDirectChoices(int vectorWidth, int unroll);

// Whether (κ, σ) can be a vector family structure of the layer on some device: κ an
// accumulator width dividing M, σ from 1 to the output width; `why` (when not null) says which
// rule fails.
bool isVectorFamilyStructure(const ConvLayer& layer, int64_t kappa, int64_t sigma,
                             std::string* why = nullptr);

// A convolution layer explored with the conv-direct strategy (v and unroll given).
ExploreTarget layerTarget(const ConvLayer& layer, int vectorWidth, int unroll);
// The same over several structures: every pair of the given vector widths and unroll settings
// (the union of their spaces; structures whose space is empty are dropped when sampling).
// With a device, the register-blocked vector family's structures for that device join them
// (layerVectorStructures).
ExploreTarget layerTargetStructures(const ConvLayer& layer, const std::vector<int>& vectorWidths,
                                    const std::vector<int>& unrolls,
                                    const host::DeviceProfile* vectorFamilyDevice = nullptr);
// The register-blocked vector family for a layer: the conv-register-blocked-vector
// strategy with κ output channels per float<κ> accumulator and σ pixels per work-item (numbers),
// rows per work-group a tuning parameter (dividing the output height); partial blocks when σ
// does not divide the output width (not recorded: (κ, σ) and the layer imply it); padInLoads 1: no pad kernel, the convolution reads
// the input through guarded loads (0: the padded copy by a kernel of its own); recorded with
// vector_kappa, vector_sigma and vector_pad_in_loads; rowUnroll 1: the window's loops ordered
// row, channel, tap with the taps unrolled (input values loaded once per row for its K taps),
// recorded as vector_row_unroll = 1 (absent for 0, so that records made before it existed are
// the same structure); interleave 1: block b of a row holds its windows b, b + outW/σ, … so that
// neighbouring work-items read neighbouring pixels (recorded as vector_interleave = 1, absent
// for 0); channelsFirst 1 (with padInLoads 0): the pad kernel stores the padded input
// [C][H'][W'] (recorded as vector_channels_first = 1, absent for 0); split S > 1: the window's
// sum in S parts of the channels added by a final kernel (recorded as vector_split = S, absent
// for 1).
ExploreTarget layerVectorTarget(const ConvLayer& layer, int kappa, int sigma, int padInLoads = 0,
                                int rowUnroll = 0, int interleave = 0, int channelsFirst = 0,
                                int split = 1);
// The structure a recorded variant's fixed parameters name: tiled_rk/tiled_rp/tiled_staged for
// the work-group-tiled family, winograd_m/winograd_kappa/winograd_sigma for the Winograd family, vector_kappa/vector_sigma (and
// vector_pad_in_loads, 0 when absent as in records made before it existed; the target's fixed
// parameters then lack it too, as recorded; vector_row_unroll, 0 when absent) for the vector
// family, v/unroll for conv-direct.
// Throws std::runtime_error when they name neither.
ExploreTarget layerStructureTarget(const ConvLayer& layer,
                                   const std::map<std::string, int64_t>& fixedParameters);
// The vector family's structures for a layer on a device: every κ and σ of the menus above,
// each with pad_in_loads 0 and 1, row_unroll 0 and 1, and each of the device's interleave
// settings (an interleaved structure with the pad kernel stores the padded input
// channels-first).
std::vector<ExploreTarget::Structure> layerVectorStructures(const ConvLayer& layer,
                                                            const host::DeviceProfile& device);
// The interleave settings a device's space offers: both on a GPU, whose work-items of a row
// then load neighbouring pixels together (coalesced); consecutive windows only elsewhere (a
// CPU's work-item reads its σ pixels as one contiguous run).
std::vector<int> vectorFamilyInterleaves(const host::DeviceProfile* device);

// The work-group-tiled family (the conv-workgroup-tiled strategy), on GPU profiles only: a
// work-group computes TK kernels × TH×TW pixels, staging the input tile (with its halo) and the
// weight tile in local memory each step of TC channels, and each work-item RK kernels × RP
// pixels in registers. Menus from the profile:
//  - register tiles (RK, RP): RK a power of two up to 8 dividing M, RP a power of two up to 8,
//    at least 4 accumulators (fewer cannot keep the FMA units busy against local memory's
//    bandwidth: an SM issues 128 FMAs but reads 32 local words per cycle, so RK·RP/(RK+RP)
//    bounds the FMAs per local load; gpu-conv.md §2.2), and code generation's register estimate
//    RK·RP + RK + RP within half the profile's registers per work-item (the rest for addresses
//    and the loop's values);
//  - staging: both operands in local memory where the profile's local memory is dedicated
//    (localMemoryType "local"), neither where it is ordinary memory (Mali: no gain, Arm's
//    OpenCL guide; ACL, TVM and CLBlast all skip it there).
// TK, TH, TW and TC are tuning parameters sampled within the constraints: TK | M, RK | TK,
// TC | C, RP | TH·TW, TH | outH, TW | outW, and from the profile the work-group size
// (TK/RK · TH·TW/RP), local memory and registers (explore/parameter_space.h).
std::vector<std::pair<int, int>> workgroupTiledRegisterTiles(const ConvLayer& layer,
                                                             const host::DeviceProfile& device);
int workgroupTiledStaging(const host::DeviceProfile& device);
// One structure: recorded with tiled_rk, tiled_rp and tiled_staged.
ExploreTarget layerWorkgroupTiledTarget(const ConvLayer& layer, int rk, int rp, int staged);
std::vector<ExploreTarget::Structure> layerWorkgroupTiledStructures(
    const ConvLayer& layer, const host::DeviceProfile& device);

// The Winograd family (the conv-winograd strategy, F(m×m, 3×3)) for 3×3 stride-1 layers: the
// tile sizes m ∈ {2, 4} no larger than the output's height and width; per m, κ from the vector
// family's menu and σ from the tile columns ⌈outW/m⌉ as the vector family's from the output
// width, within the same register budget (σκ + 2κ ≤ registersPerWorkItem). Empty for other layers. Where m does not
// divide the output, or σ the tile columns, the tiles are partial (winogradTilesPartial): the
// strategy's partial_tiles pads the output to whole blocks of σ tiles and drops the surplus.
std::vector<int> winogradTileSizes(const ConvLayer& layer);
std::vector<int> winogradSigmas(const ConvLayer& layer, int m, int kappa,
                                const host::DeviceProfile& device);
bool winogradTilesPartial(const ConvLayer& layer, int m, int sigma);
// One Winograd structure: recorded with winograd_m, winograd_kappa and winograd_sigma (the
// products' tile rows per work-group a tuning parameter; partial tiles implied, not recorded).
ExploreTarget layerWinogradTarget(const ConvLayer& layer, int m, int kappa, int sigma);
std::vector<ExploreTarget::Structure> layerWinogradStructures(const ConvLayer& layer,
                                                              const host::DeviceProfile& device);

}  // namespace weft::explore
