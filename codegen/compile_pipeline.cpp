// The pass order from a point to OpenCL (see codegen/compile_pipeline.h).
#include "codegen/compile_pipeline.h"

#include <array>

#include "codegen/lowering.h"

namespace weft {

Definition instantiate(const Definition& parametric, const ArithBinding& point) {
  ArithSubstitution substitution;
  for (const auto& [name, value] : point) substitution[name] = Arith(value);
  return withSizesSubstituted(parametric, substitution);
}

CompiledProgram compileToOpenCL(const Definition& definition, const ArithBinding& point,
                                const CompilePipelineOptions& options) {
  // A program without a point is generated as it stands (no substitution pass over it).
  const Definition instance = point.empty() ? definition : instantiate(definition, point);
  CodegenOptions codegen = options.codegen;
  applyCodegenParameters(codegen, point);
  CompiledProgram program =
      generateOpenCL(options.lower ? lowerDefault(instance) : instance, codegen);
  if (!point.empty()) applyLocalSizeParameters(program, point);
  return program;
}

CompiledProgram compileToOpenCL(const Definition& definition, const CodegenOptions& codegen) {
  CompilePipelineOptions options;
  options.codegen = codegen;
  return compileToOpenCL(definition, {}, options);
}

CompiledProgram compileVariant(const Definition& parametric, const ArithBinding& binding) {
  CompilePipelineOptions options;
  options.codegen.specialize = binding;
  return compileToOpenCL(parametric, binding, options);
}

void applyCodegenParameters(CodegenOptions& codegen, const ArithBinding& point) {
  auto on = [&point](const char* name) {
    auto found = point.find(name);
    return found != point.end() && found->second != 0;
  };
  if (on(kStreamingStoresParameter)) codegen.streamingStores = true;
  if (on(kAlignedReadsParameter)) codegen.alignedVectorReads = true;
}

bool isCodegenChoiceParameter(const std::string& name) {
  return name == kStreamingStoresParameter || name == kAlignedReadsParameter;
}

std::string localSizeParameterName(int kernelIndex, int dimension) {
  return "local_k" + std::to_string(kernelIndex) + "_d" + std::to_string(dimension);
}

int applyLocalSizeParameters(CompiledProgram& program, const ArithBinding& binding) {
  int set = 0;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    KernelPlan& kernel = program.kernels[k];
    if (kernel.hasLocalSize) continue;
    std::array<Arith, 3> local{Arith(1), Arith(1), Arith(1)};
    // Dimensions without a parameter had only 1 to choose (the explorer makes no parameter
    // there); a kernel none of whose dimensions is bound keeps the implementation's choice.
    bool any = false;
    for (int d = 0; d < kernel.dimensions; ++d) {
      auto found = binding.find(localSizeParameterName(static_cast<int>(k), d));
      if (found != binding.end()) {
        local[static_cast<size_t>(d)] = Arith(found->second);
        any = true;
      }
    }
    if (!any) continue;
    kernel.hasLocalSize = true;
    kernel.localSize = local;
    ++set;
  }
  return set;
}

}  // namespace weft
