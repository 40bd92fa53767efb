// The convolution-layer workload ("conv"): a layer in PyTorch's conventions
// (workloads/conv/conv_layer.h: a VGG-16 layer "vgg16:N", or "C,H,W,M,K,stride,pad"; "vgg16"
// asks for all 13 VGG-16 layers) explored over the structures of workloads/conv/conv_targets.h,
// verified against the naive direct convolution, weights and biases prepared once, ordered by
// the cost model of workloads/conv/cost_model.h. Its records are laid out like the LIFT paper's
// Table 4 in reports.
//
// Options (WorkloadRequest::options): "vector-width" (conv-direct's v: 1, 2, 4, 8 or 16) and
// "unroll" (0 or 1) restrict conv-direct to those structures (the register-blocked vector
// family is then left out, as the user chose conv-direct's shape).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiled_program.h"
#include "explore/workload.h"
#include "workloads/conv/conv_layer.h"

namespace weft::explore {

std::shared_ptr<const Workload> convWorkload();

// The request that names `layer` (a VGG-16 layer by its paper number, else its seven sizes).
WorkloadRequest convRequest(const ConvLayer& layer);

// The layer a recorded program name stands for: a VGG-16 layer ("conv1_2") or
// "conv_C_H_W_M_K_stride_pad" as parseConvLayer names a C,H,W,M,K,stride,pad spec; nullopt
// for other programs.
std::optional<ConvLayer> layerOfProgram(const std::string& program);

// A variant recorded for `layer` rebuilt (explore/variant_pick.h variantDefinition: the layer's
// sizes still symbolic, bind them with convListing3Sizes) and compiled as the explorer measured
// it. Throw PickError when the record is not one of the layer's variants.
Definition variantDefinition(const ConvLayer& layer, const VariantRecord& record);
CompiledProgram compileLayerVariant(const ConvLayer& layer, const VariantRecord& record);

// What a layer's drop-in says about its layouts.
std::vector<std::string> layerNotes(const ConvLayer& layer);

}  // namespace weft::explore
