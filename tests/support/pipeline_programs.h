// The image pipelines of examples/pipelines/ as the tests use them without a device: a
// pipeline's definition loaded by name, the size binding of an image, a definition run by the
// reference interpreter on an image, and how many nodes of a primitive a program holds. Shared
// by tests/pipelines/ (interpreter tests directly, OpenCL tests through
// pipeline_opencl_fixture.h) so that every test loads and feeds the pipelines the same way.
//
// Header-only (tests/support has no library).
#pragma once

#include <cstdlib>
#include <string>

#include "ir/expr.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "tests/support/pipeline_reference.h"

namespace weft::testing::pipelines {

// examples/pipelines/NAME.weft ($WEFT_SOURCE_DIR, else the working directory).
inline std::string pipelinePath(const std::string& name) {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  return std::string(root ? root : ".") + "/examples/pipelines/" + name + ".weft";
}

// That file's definition (the last in the file).
inline Definition loadPipeline(const std::string& name) {
  return parseFile(pipelinePath(name)).definitions.back();
}

// W and H of the image, and C (its planes) where the pipeline has planes.
inline ArithBinding imageSizes(const Image& image, bool planes) {
  ArithBinding sizes{{"W", image.width}, {"H", image.height}};
  if (planes) sizes["C"] = image.channels;
  return sizes;
}

// `definition` (its one parameter an image, [[float]W]H or [[[float]W]H]C) run by the reference
// interpreter on `image`; `extra` binds sizes the input does not determine (tuning variables).
inline Value interpretOnImage(const Definition& definition, const Image& image,
                              const ArithBinding& extra = {}) {
  const Type inputType = definition.function.params()[0].paramType();
  const Value input = valueFromFlat(inputType, imageSizes(image, true), image.data);
  return interpret(definition, {input}, bindSizes(definition, {input}, extra));
}

// How many nodes of `e` are the primitive `op`.
inline int countPrims(const Expr& e, Op op) {
  int n = 0;
  forEachNode(e, [&](const Expr& node) { n += node.isPrim(op) ? 1 : 0; });
  return n;
}

}  // namespace weft::testing::pipelines
