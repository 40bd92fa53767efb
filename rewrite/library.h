// The rule library: every rewrite rule weft knows, by name.
//
// rules_basic.cpp provides fusion/fission, split-join, the layout identities and the lowering
// rules; rules_algorithmic_2.cpp adds the further algorithmic rules (partial reduction,
// map/reduce interchange, slide tiling, pad-for-tiling, vectorization, reorder-with-stride)
// through addAlgorithmicRules2. Names are unique (ruleLibrary checks it once).
#pragma once

#include <string>
#include <vector>

#include "rewrite/rule.h"

namespace weft::rewrite {

// Every rule, in a fixed order (basic rules first). Built once; the references stay valid.
const std::vector<Rule>& ruleLibrary();
// The rule named `name`, or nullptr.
const Rule* findRule(const std::string& name);

// True for a primitive that only selects or rearranges elements, computing nothing of its own
// (pad adds its boundary's values): the primitive table's layout primitives (isLayoutPrimitive)
// and get, the tuple projection. Rules and strategies look through such views.
inline bool isViewPrimitive(Op op) { return isLayoutPrimitive(op) || op == Op::Get; }

// True when `f` is a one-parameter lambda whose body is a chain of one-argument view primitives
// (isViewPrimitive) and maps of such functions over its parameter: a view that computes nothing
// (rules_blocking.cpp).
bool isLayoutFunction(const Expr& f);

// The rule groups the library is made of.
void addBasicRules(std::vector<Rule>& rules);         // rules_basic.cpp
void addAlgorithmicRules2(std::vector<Rule>& rules);  // rules_algorithmic_2.cpp
void addAddressSpaceRules(std::vector<Rule>& rules);  // rules_address_space.cpp
void addInterchangeRules(std::vector<Rule>& rules);   // rules_interchange.cpp
void addConvolutionRules(std::vector<Rule>& rules);   // rules_convolution.cpp
void addBlockingRules(std::vector<Rule>& rules);      // rules_blocking.cpp
void addVectorBlockingRules(std::vector<Rule>& rules);  // rules_vector_blocking.cpp
void addReduceLevelRules(std::vector<Rule>& rules);    // rules_reduce_levels.cpp
void addStencilFusionRules(std::vector<Rule>& rules);  // rules_stencil_fusion.cpp
void addStencilChainRules(std::vector<Rule>& rules);   // rules_stencil_chain.cpp
void addStencilTupleRules(std::vector<Rule>& rules);   // rules_stencil_tuples.cpp
void addWinogradRules(std::vector<Rule>& rules);       // rules_winograd.cpp
void addWorkgroupTilingRules(std::vector<Rule>& rules);  // rules_workgroup_tiling.cpp
void addSlidingWindowRules(std::vector<Rule>& rules);    // rules_sliding_window.cpp
void addStencilRowRules(std::vector<Rule>& rules);       // rules_stencil_rows.cpp
void addColumnWalkRules(std::vector<Rule>& rules);       // rules_column_walk.cpp

}  // namespace weft::rewrite
