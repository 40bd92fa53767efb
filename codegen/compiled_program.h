// What code generation produces for one definition: OpenCL C source holding one or more
// kernels, the buffers they use (program inputs, the output, temporaries between kernels and
// inside kernels), and for each kernel its argument list and launch configuration.
//
// Sizes are symbolic (`Arith`) so that one compiled program runs for any binding of the size
// variables that code generation left open; the host evaluates them with the binding
// (`evaluate(size, binding)`). Size variables that remain open are passed to the kernels as
// `int` arguments. Every buffer holds scalars (float or int) in row-major order; arrays of
// vectors are stored lane by lane.
//
// serialiseCompiledProgram/deserialiseCompiledProgram turn a program into bytes and back, so
// that a process other than the one that generated it (the explorer's measuring child)
// can build and run it; sizes and types travel in the weft text format.
#pragma once

#include <array>
#include <set>
#include <string>
#include <vector>

#include "ir/arith.h"
#include "ir/type.h"

namespace weft {

enum class AddressSpace { Global, Local, Private };
const char* addressSpaceName(AddressSpace space);  // "global", "local", "private"

struct BufferPlan {
  enum class Role { Input, Output, Temporary };
  std::string name;      // the kernel parameter name, e.g. "in_weights", "out", "tmp1"
  Role role = Role::Temporary;
  int inputIndex = -1;   // Role::Input: the index of the definition parameter it holds
  ScalarKind element = ScalarKind::Float;  // float or int (bool is stored as int)
  Arith elementCount;    // number of scalars
  Type type;             // the weft type of the data it holds (per enclosing iteration for
                         // temporaries written inside loops: then elementCount is larger)
};

struct KernelArg {
  enum class Kind { Buffer, Size, LocalBuffer };
  Kind kind = Kind::Buffer;
  int buffer = -1;        // Kind::Buffer: index into CompiledProgram::buffers
  bool written = false;   // Kind::Buffer: the kernel writes it (otherwise only reads it)
  std::string sizeName;   // Kind::Size: the size variable passed as int
  Arith localBytes;       // Kind::LocalBuffer: bytes of local memory to reserve
};

// One read or write of a global buffer in a kernel's text, with the loops around it
// (analysis only, not serialised): how often it runs and how far apart in memory consecutive
// iterations of each loop take it, for cost models.
struct AccessLoop {
  bool parallel = false;  // a work-item index (mapGlb, mapWrg, mapLcl) rather than a loop
  bool groupIndex = false;  // parallel: the work-group's index (mapWrg), shared by its items
  bool localIndex = false;  // parallel: the work-item's index within its group (mapLcl)
  bool unrolled = false;  // one copy of an unrolled loop's body (index a constant)
  // A loop the kernel proper unrolls, generated as a loop for analysis
  // (CodegenOptions::unrolledAsLoops).
  bool rolled = false;
  // A reduction's loop: each iteration updates the accumulator the previous one left.
  bool reduction = false;
  int dimension = 0;      // parallel: the launch dimension
  Arith index;            // the variable the access's offset uses (a constant when unrolled)
  Arith tripCount;        // iterations (parallel: items of the map over all work-items)
};
struct GlobalAccess {
  std::string buffer;  // the kernel parameter name (BufferPlan::name)
  bool written = false;
  Arith offset;                   // in scalars
  int vectorWidth = 0;            // a vector of this width (0: a scalar)
  std::vector<AccessLoop> loops;  // outermost first
};

struct KernelPlan {
  std::string name;                 // the OpenCL kernel function name
  std::vector<KernelArg> args;      // in parameter order
  int dimensions = 1;               // 1, 2 or 3
  std::array<Arith, 3> globalSize{Arith(1), Arith(1), Arith(1)};
  bool hasLocalSize = false;        // false: let the OpenCL implementation choose (NULL)
  std::array<Arith, 3> localSize{Arith(1), Arith(1), Arith(1)};
  // Whether the kernel may be launched in parts (codegen/launch_parts.h): it learns where it
  // is only from get_global_id and shares nothing within a work-group (no work-group functions,
  // barriers or local memory), so whole work-groups of a local size that does not divide the
  // global size, then the rest with a global offset, compute what one launch would.
  bool launchableInParts = false;
  // An estimate of the 32-bit values a work-item keeps in private memory (registers): private
  // arrays, the accumulators of reductions live at once, and twice the widest vector
  // temporary. Loop counters and addresses are not counted.
  int64_t privateScalars = 0;
  // The same with private arrays of symbolic size (CodegenOptions::symbolicPrivateArrays)
  // added; equal to privateScalars otherwise.
  Arith privateScalarsExpr = Arith(0);
  // Bytes of the local arrays the kernel declares with a constant size (`local float l[n];`);
  // with its LocalBuffer arguments, the local memory a work-group needs. Analysis only: not
  // serialised.
  int64_t staticLocalBytes = 0;
  // The scalars of each private array of constant size the kernel declares (counted in
  // privateScalars), one entry per array, so that a parameter space can tell an array no
  // register file holds (a line buffer's ring of whole rows) from a tile that is unrolled into
  // registers. Analysis only: not serialised.
  std::vector<int64_t> privateArrayScalars;
  // Every distinct access of a global buffer the kernel's text makes, one per place in the
  // program and offset; of the copies of a body that loop unswitching emits, a launch runs one,
  // and the first copy's are listed. Analysis only: not serialised.
  std::vector<GlobalAccess> globalAccesses;
  // The `for` loops a work-item runs (sequential loops, and parallel maps striding over more
  // items than the launch has), unrolled ones not counted, nor the second copies loop
  // unswitching emits. A CPU implementation that runs a work-group's work-items in a loop
  // around the kernel body (PoCL) can vectorise that loop only when the body has none.
  // Analysis only: not serialised.
  int workItemLoops = 0;
};

struct CompiledProgram {
  std::string definitionName;
  std::string source;                 // OpenCL C: helper functions then every kernel
  std::vector<BufferPlan> buffers;    // inputs first (in parameter order), then the rest
  std::vector<KernelPlan> kernels;    // in launch order
  int outputBuffer = -1;
  Type outputType;                    // the definition's result type
  std::vector<Arith> openSizes;       // size variables passed as kernel arguments
  // Vector stores to global memory at offsets that are multiples of their width, counted
  // whether or not CodegenOptions::streamingStores is on (the explorer offers that choice only
  // where there are such stores; not serialised).
  int alignedVectorStoreSites = 0;
  // The widest contiguous vector read of a global buffer that CodegenOptions::alignedVectorReads
  // would read as aligned vectors, in bytes, whether or not that option is on (0: none; the
  // explorer offers the choice only where there is one; not serialised).
  int widestRealignableReadBytes = 0;

  // The kernels that depend only on the inputs `inputIndices` (definition parameter indices,
  // e.g. the weights): every buffer they read is one of those inputs or is written only by
  // such kernels, and they do not write the output. Their results stay valid while those
  // inputs do not change, so a drop-in or a measurement runs them once ("preparation", e.g.
  // the weight re-layout of the register-blocked vector family) and times them apart from
  // the per-inference kernels. One flag per kernel, in launch order.
  std::vector<bool> preparationKernels(const std::set<int>& inputIndices) const;

  // Bytes of global memory all buffers take under a binding (inputs, output, temporaries).
  int64_t globalBytes(const ArithBinding& sizes) const;
  // The buffers that must stay allocated to run the per-inference kernels once the preparation
  // kernels of `constantInputs` (preparationKernels above) have run, one flag per buffer: all
  // of them except the constant inputs that no per-inference kernel takes as an argument (only
  // preparation kernels read them, or none does), which an application may release after
  // preparation. Prepared buffers (temporaries the preparation wrote), the other inputs,
  // padded copies and other temporaries, and the output stay. Empty `constantInputs`: all.
  std::vector<bool> inferenceBuffers(const std::set<int>& constantInputs) const;
  // Bytes of global memory of inferenceBuffers under a binding: the memory a variant holds at
  // inference time (what exploration records as a layer variant's space). Empty
  // `constantInputs`: globalBytes.
  int64_t inferenceBytes(const ArithBinding& sizes, const std::set<int>& constantInputs) const;
  // A human-readable summary: kernels with launch sizes, buffers with sizes.
  std::string describe(const ArithBinding& sizes = {}) const;
};

// The program as bytes (length-prefixed fields; `Arith` and `Type` as weft text). Variables in
// sizes come back as size variables of the same names without their ranges: enough to
// evaluate them with a binding, which is all a process running the program does.
std::string serialiseCompiledProgram(const CompiledProgram& program);
// The inverse; throws std::runtime_error on malformed or truncated bytes.
CompiledProgram deserialiseCompiledProgram(const std::string& bytes);

}  // namespace weft
