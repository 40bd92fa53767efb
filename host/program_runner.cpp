// Runs a CompiledProgram on an OpenCL context (see host/program_runner.h): evaluates the
// symbolic sizes, moves data, sets arguments, launches the kernels in order and reads back
// the output. All checks that need no device happen before the first OpenCL call that would
// fail obscurely (a wrong buffer size shows up as garbage, not as an error). With guards, the
// outputs and temporaries are sub-buffers between canary regions checked after each kernel of
// the first repeat.
#include "host/program_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

namespace weft::host {

namespace {

// The value of `size` under the binding, or an OpenCLError saying which variable is unbound.
int64_t evaluateSize(const Arith& size, const ArithBinding& sizes, const std::string& what) {
  for (const Arith& variable : size.vars()) {
    if (!sizes.count(variable.varName())) {
      throw OpenCLError(
          fmt::format("{} is {}: size variable {} is not bound (bind it, e.g. "
                      "--size {}=...)",
                      what, size.toString(), variable.varName(), variable.varName()));
    }
  }
  try {
    return evaluate(size, sizes);
  } catch (const ArithError& error) {
    throw OpenCLError(fmt::format("{} is {}: {}", what, size.toString(), error.what()));
  }
}

size_t positiveSize(const Arith& size, const ArithBinding& sizes, const std::string& what) {
  int64_t value = evaluateSize(size, sizes, what);
  if (value <= 0) {
    throw OpenCLError(fmt::format("{} is {} = {}, not positive", what, size.toString(), value));
  }
  return static_cast<size_t>(value);
}

NDRange ndRange(const std::array<size_t, 3>& sizes, int dimensions) {
  switch (dimensions) {
    case 1:
      return NDRange(sizes[0]);
    case 2:
      return NDRange(sizes[0], sizes[1]);
    default:
      return NDRange(sizes[0], sizes[1], sizes[2]);
  }
}

// The local size of a one-dimensional kernel launchable in parts that leaves it to the OpenCL
// implementation, where the implementation can only choose a divisor of the global size, and
// none fills the kernel's preferred multiple (a prime length: groups of one work-item, which ran
// a saxpy 27x slower on PoCL): the largest power of two within the kernel's work-group limit
// that still gives every compute unit a whole group, launched in parts. Nothing where a divisor
// serves (the implementation chooses, as before).
std::optional<size_t> localSizeForParts(const Context& context, const Kernel& kernel,
                                        size_t global) {
  const Device& device = context.device();
  const size_t limit = std::min(kernel.maxWorkGroupSize(device), context.maxWorkGroupSize());
  const size_t multiple = std::max<size_t>(kernel.preferredWorkGroupSizeMultiple(device), 2);
  if (global < multiple) return std::nullopt;  // no group fills it: one of all is as good
  if (hasDivisorBetween(static_cast<int64_t>(global), static_cast<int64_t>(multiple),
                        static_cast<int64_t>(limit))) {
    return std::nullopt;
  }
  const size_t units =
      std::max<cl_uint>(deviceInfo<cl_uint>(device.id, CL_DEVICE_MAX_COMPUTE_UNITS), 1);
  size_t local = 1;
  while (local * 2 <= limit && local * 2 * units <= global) local *= 2;
  return local;
}

// One kernel with its arguments set and its launch sizes evaluated.
struct PreparedKernel {
  Kernel kernel;
  NDRange global;
  std::optional<NDRange> local;
  bool launchableInParts = false;  // KernelPlan::launchableInParts
};

// An output or temporary allocated with guard regions: `whole` is guard + data + guard bytes.
struct GuardedAllocation {
  size_t buffer;  // index into CompiledProgram::buffers
  Buffer whole;
  size_t dataBytes;
};

// The data part of `whole`, [offset, offset + bytes), as a buffer of its own.
Buffer subBuffer(const Buffer& whole, size_t offset, size_t bytes, const std::string& name) {
  cl_buffer_region region{offset, bytes};
  cl_int error = CL_SUCCESS;
  cl_mem sub = clCreateSubBuffer(whole.get(), CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                 &region, &error);
  checkCL(error, fmt::format("clCreateSubBuffer(buffer {} between guard regions of {} bytes)",
                             name, offset));
  return Buffer(MemHandle(sub), bytes);
}

size_t changedWords(const std::vector<uint32_t>& words) {
  return static_cast<size_t>(std::count_if(words.begin(), words.end(),
                                           [](uint32_t word) { return word != kGuardPattern; }));
}

// Reads every guard region back; a buffer whose guards changed gets a violation naming
// `kernel` the first time it is seen, and its counts updated every time.
void checkGuards(Context& context, const CompiledProgram& program,
                 const std::vector<GuardedAllocation>& guarded, size_t guardBytes,
                 const std::string& kernel, std::vector<GuardViolation>& violations) {
  std::vector<uint32_t> words(guardBytes / 4);
  for (const GuardedAllocation& allocation : guarded) {
    context.read(allocation.whole, words.data(), guardBytes, 0);
    const size_t before = changedWords(words);
    context.read(allocation.whole, words.data(), guardBytes, guardBytes + allocation.dataBytes);
    const size_t after = changedWords(words);
    if (before == 0 && after == 0) continue;
    const std::string& name = program.buffers[allocation.buffer].name;
    auto known = std::find_if(violations.begin(), violations.end(),
                              [&](const GuardViolation& v) { return v.buffer == name; });
    if (known == violations.end()) {
      violations.push_back({name, kernel, before, after});
    } else {
      known->wordsBefore = before;
      known->wordsAfter = after;
    }
  }
}

}  // namespace

std::string GuardViolation::describe() const {
  auto values = [](size_t n) { return std::to_string(n) + (n == 1 ? " value" : " values"); };
  std::string text = "kernel " + kernel + " wrote ";
  if (wordsAfter > 0) text += values(wordsAfter) + " past the end";
  if (wordsAfter > 0 && wordsBefore > 0) text += " and ";
  if (wordsBefore > 0) text += values(wordsBefore) + " before the start";
  return text + " of buffer " + buffer;
}

Program ProgramCache::get(Context& context, const std::string& source, const std::string& options) {
  Key key{context.get(), options, source};
  auto found = programs_.find(key);
  if (found != programs_.end()) return found->second;
  Program program = context.build(source, options);
  ++builds_;
  programs_.emplace(std::move(key), program);
  return program;
}

namespace {

// The first scalar of a value (nullptr for an empty array), whose kind decides a flat input's.
const Value* firstScalar(const Value& value) {
  const Value* at = &value;
  while (at->kind == Value::Kind::Array || at->kind == Value::Kind::Vector) {
    if (at->elements.empty()) return nullptr;
    at = &at->elements.front();
  }
  return at;
}

}  // namespace

FlatInput flatInputOf(const Value& value) {
  FlatInput flat;
  const Value* scalar = firstScalar(value);
  flat.ints = scalar && (scalar->kind == Value::Kind::Int || scalar->kind == Value::Kind::Bool);
  if (flat.ints) {
    flat.intValues = flattenToInts(value);
  } else {
    flat.floats = flattenToFloats(value);
  }
  return flat;
}

std::vector<FlatInput> flatInputsOf(const std::vector<Value>& values) {
  std::vector<FlatInput> flat;
  flat.reserve(values.size());
  for (const Value& value : values) flat.push_back(flatInputOf(value));
  return flat;
}

RunResult runProgram(Context& context, const CompiledProgram& program,
                     const std::vector<Value>& inputs, const ArithBinding& sizes,
                     const RunOptions& options) {
  std::vector<FlatInput> flat;
  flat.reserve(inputs.size());
  for (size_t index = 0; index < inputs.size(); ++index) {
    try {
      flat.push_back(flatInputOf(inputs[index]));
    } catch (const std::invalid_argument& error) {
      throw OpenCLError(fmt::format("input {}: {}", index, error.what()));
    }
  }
  return runProgram(context, program, flat, sizes, options);
}

RunResult runProgram(Context& context, const CompiledProgram& program,
                     const std::vector<FlatInput>& inputs, const ArithBinding& sizes,
                     const RunOptions& options) {
  if (options.repeats < 1) {
    throw OpenCLError(
        fmt::format("runProgram: repeats must be at least 1, not {}", options.repeats));
  }
  if (program.outputBuffer < 0 ||
      program.outputBuffer >= static_cast<int>(program.buffers.size())) {
    throw OpenCLError("runProgram: the compiled program '" + program.definitionName +
                      "' has no output buffer");
  }

  // Sizes of every buffer and the data of the inputs, checked before anything is allocated.
  std::vector<size_t> elementCounts;
  for (const BufferPlan& plan : program.buffers) {
    int64_t count = evaluateSize(plan.elementCount, sizes, "the size of buffer " + plan.name);
    if (count < 0) {
      throw OpenCLError(fmt::format("the size of buffer {} is {} = {}, negative", plan.name,
                                    plan.elementCount.toString(), count));
    }
    elementCounts.push_back(static_cast<size_t>(count));
  }
  // Each input buffer's data: the input's own when its kind is the buffer's, else a converted
  // copy (ints to floats, floats truncated to ints).
  struct InputData {
    const void* bytes = nullptr;
    std::vector<float> convertedFloats;
    std::vector<int32_t> convertedInts;
  };
  std::vector<InputData> inputData(program.buffers.size());
  for (size_t index = 0; index < program.buffers.size(); ++index) {
    const BufferPlan& plan = program.buffers[index];
    if (plan.role != BufferPlan::Role::Input) continue;
    if (plan.inputIndex < 0 || plan.inputIndex >= static_cast<int>(inputs.size())) {
      throw OpenCLError(fmt::format("buffer {} holds input {}, but {} input(s) were given",
                                    plan.name, plan.inputIndex, inputs.size()));
    }
    const FlatInput& input = inputs[static_cast<size_t>(plan.inputIndex)];
    InputData& data = inputData[index];
    if (plan.element == ScalarKind::Float) {
      if (input.ints) {
        data.convertedFloats.assign(input.intValues.begin(), input.intValues.end());
        data.bytes = data.convertedFloats.data();
      } else {
        data.bytes = input.floats.data();
      }
    } else if (input.ints) {
      data.bytes = input.intValues.data();
    } else {
      data.convertedInts.reserve(input.floats.size());
      for (float f : input.floats) data.convertedInts.push_back(static_cast<int32_t>(f));
      data.bytes = data.convertedInts.data();
    }
    const size_t count = input.size();
    if (count != elementCounts[index]) {
      throw OpenCLError(fmt::format(
          "input {} (buffer {}, type {}) has {} elements, but the compiled program expects "
          "{} = {} under the size binding",
          plan.inputIndex, plan.name, plan.type ? plan.type.toString() : std::string("?"), count,
          plan.elementCount.toString(), elementCounts[index]));
    }
  }

  // Launch sizes and kernel arguments, evaluated before the build so that binding mistakes
  // are reported without a compiler run.
  struct LaunchSizes {
    std::array<size_t, 3> global{1, 1, 1}, local{1, 1, 1};
  };
  std::vector<LaunchSizes> launchSizes;
  for (const KernelPlan& plan : program.kernels) {
    if (plan.dimensions < 1 || plan.dimensions > 3) {
      throw OpenCLError(fmt::format("kernel {} has {} dimensions; OpenCL allows 1 to 3", plan.name,
                                    plan.dimensions));
    }
    LaunchSizes launch;
    for (int d = 0; d < plan.dimensions; ++d) {
      launch.global[d] =
          positiveSize(plan.globalSize[d], sizes,
                       fmt::format("the global size of kernel {} in dimension {}", plan.name, d));
      if (plan.hasLocalSize) {
        launch.local[d] =
            positiveSize(plan.localSize[d], sizes,
                         fmt::format("the local size of kernel {} in dimension {}", plan.name, d));
      }
    }
    for (size_t a = 0; a < plan.args.size(); ++a) {
      const KernelArg& arg = plan.args[a];
      std::string what = fmt::format("argument {} of kernel {}", a, plan.name);
      switch (arg.kind) {
        case KernelArg::Kind::Buffer:
          if (arg.buffer < 0 || arg.buffer >= static_cast<int>(program.buffers.size())) {
            throw OpenCLError(what + " names buffer " + std::to_string(arg.buffer) +
                              ", which the compiled program does not have");
          }
          break;
        case KernelArg::Kind::Size: {
          if (!sizes.count(arg.sizeName)) {
            throw OpenCLError(
                fmt::format("{} is size variable {}, which is not bound (bind it, "
                            "e.g. --size {}=...)",
                            what, arg.sizeName, arg.sizeName));
          }
          int64_t value = sizes.at(arg.sizeName);
          if (value < std::numeric_limits<int32_t>::min() ||
              value > std::numeric_limits<int32_t>::max()) {
            throw OpenCLError(
                fmt::format("{}: size {} = {} does not fit an int", what, arg.sizeName, value));
          }
          break;
        }
        case KernelArg::Kind::LocalBuffer:
          positiveSize(arg.localBytes, sizes, "the local memory of " + what);
          break;
      }
    }
    launchSizes.push_back(launch);
  }

  Program built = options.cache ? options.cache->get(context, program.source, options.buildOptions)
                                : context.build(program.source, options.buildOptions);

  // Every buffer the kernels see; with guards, the outputs and temporaries are sub-buffers of
  // a larger allocation whose guard regions (guardBytes each side) hold the canary pattern.
  std::vector<Buffer> buffers;
  std::vector<GuardedAllocation> guarded;
  size_t guardBytes = 0;
  if (options.guards) {
    const size_t alignBytes = std::max<size_t>(
        deviceInfo<cl_uint>(context.device().id, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8, 4);
    guardBytes = (std::max<size_t>(options.guardBytes, 4) + alignBytes - 1) / alignBytes *
                 alignBytes;
  }
  const std::vector<uint32_t> pattern(guardBytes / 4, kGuardPattern);
  for (size_t index = 0; index < program.buffers.size(); ++index) {
    // OpenCL forbids empty buffers: an empty array still gets one element.
    size_t bytes = std::max<size_t>(elementCounts[index], 1) * 4;
    if (options.guards && program.buffers[index].role != BufferPlan::Role::Input) {
      GuardedAllocation allocation{index, context.createBuffer(guardBytes + bytes + guardBytes),
                                   bytes};
      context.write(allocation.whole, pattern.data(), guardBytes, 0);
      context.write(allocation.whole, pattern.data(), guardBytes, guardBytes + bytes);
      buffers.push_back(subBuffer(allocation.whole, guardBytes, bytes, program.buffers[index].name));
      guarded.push_back(std::move(allocation));
      continue;
    }
    buffers.push_back(context.createBuffer(bytes));
    const InputData& data = inputData[index];
    if (program.buffers[index].role != BufferPlan::Role::Input || elementCounts[index] == 0) {
      continue;
    }
    // float32 and int32 alike: 4 bytes per element.
    context.write(buffers.back(), data.bytes, elementCounts[index] * 4);
  }

  std::vector<PreparedKernel> kernels;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const KernelPlan& plan = program.kernels[k];
    Kernel kernel(built, plan.name);
    for (size_t a = 0; a < plan.args.size(); ++a) {
      const KernelArg& arg = plan.args[a];
      cl_uint index = static_cast<cl_uint>(a);
      switch (arg.kind) {
        case KernelArg::Kind::Buffer:
          kernel.setArg(index, buffers[static_cast<size_t>(arg.buffer)]);
          break;
        case KernelArg::Kind::Size:
          kernel.setArg(index, static_cast<int32_t>(sizes.at(arg.sizeName)));
          break;
        case KernelArg::Kind::LocalBuffer:
          kernel.setArg(index, LocalMemory{static_cast<size_t>(evaluate(arg.localBytes, sizes))});
          break;
      }
    }
    std::optional<NDRange> local;
    if (plan.hasLocalSize) local = ndRange(launchSizes[k].local, plan.dimensions);
    if (!plan.hasLocalSize && plan.launchableInParts && plan.dimensions == 1) {
      if (std::optional<size_t> chosen =
              localSizeForParts(context, kernel, launchSizes[k].global[0])) {
        local = NDRange(*chosen);
      }
    }
    kernels.push_back({std::move(kernel), ndRange(launchSizes[k].global, plan.dimensions), local,
                       plan.launchableInParts});
  }

  RunResult result;
  for (const KernelPlan& plan : program.kernels) result.kernels.push_back({plan.name, 0});
  if (options.firstWorkGroupOnly) {
    // One work-group of every shape a launch will use (PoCL compiles one per local size): a
    // kernel launched in parts has a second shape, its remainder's.
    for (const PreparedKernel& prepared : kernels) {
      if (!prepared.local) continue;
      if (!prepared.launchableInParts) {
        context.enqueue(prepared.kernel, *prepared.local, prepared.local);
        continue;
      }
      std::vector<NDRange> shapes;
      for (const LaunchRange& part : launchRanges(prepared.global, *prepared.local)) {
        const NDRange& shape = part.local;
        const bool seen = std::any_of(shapes.begin(), shapes.end(),
                                      [&](const NDRange& s) { return s.sizes == shape.sizes; });
        if (seen) continue;
        shapes.push_back(shape);
        context.enqueue(prepared.kernel, shape, shape);
      }
    }
    context.finish();
    return result;
  }
  for (int repeat = 0; repeat < options.repeats; ++repeat) {
    for (size_t index = 0; index < buffers.size(); ++index) {
      if (program.buffers[index].role != BufferPlan::Role::Input) context.fillZero(buffers[index]);
    }
    // Per kernel, the events of its launches: one, or its parts (codegen/launch_parts.h).
    std::vector<std::vector<Event>> events;
    for (size_t k = 0; k < kernels.size(); ++k) {
      const PreparedKernel& prepared = kernels[k];
      if (prepared.local && prepared.launchableInParts) {
        events.push_back(context.enqueueInParts(prepared.kernel, prepared.global, *prepared.local));
      } else {
        events.emplace_back().push_back(
            context.enqueue(prepared.kernel, prepared.global, prepared.local));
      }
      if (repeat == 0 && !guarded.empty()) {
        context.finish();
        checkGuards(context, program, guarded, guardBytes, program.kernels[k].name,
                    result.guardViolations);
      }
    }
    context.finish();
    uint64_t total = 0;
    std::vector<uint64_t>& perKernel = result.repeatKernelNanoseconds.emplace_back();
    for (size_t k = 0; k < events.size(); ++k) {
      uint64_t time = 0;
      for (const Event& part : events[k]) time += part.durationNs();
      perKernel.push_back(time);
      total += time;
      if (repeat == 0 || time < result.kernels[k].nanoseconds) result.kernels[k].nanoseconds = time;
    }
    result.repeatNanoseconds.push_back(total);
  }
  result.totalNanoseconds =
      *std::min_element(result.repeatNanoseconds.begin(), result.repeatNanoseconds.end());

  const size_t output = static_cast<size_t>(program.outputBuffer);
  const size_t outputCount = elementCounts[output];
  if (options.output == RunOptions::Output::None) return result;
  if (options.output == RunOptions::Output::Floats) {
    result.outputFloats.resize(outputCount);
    if (program.buffers[output].element == ScalarKind::Float) {
      if (outputCount > 0) {
        context.read(buffers[output], result.outputFloats.data(), outputCount * sizeof(float));
      }
    } else {
      std::vector<int32_t> data(outputCount);
      if (outputCount > 0) {
        context.read(buffers[output], data.data(), outputCount * sizeof(int32_t));
      }
      std::copy(data.begin(), data.end(), result.outputFloats.begin());
    }
    return result;
  }
  try {
    if (program.buffers[output].element == ScalarKind::Float) {
      std::vector<float> data(outputCount);
      if (outputCount > 0) context.read(buffers[output], data.data(), outputCount * sizeof(float));
      result.output = valueFromFlat(program.outputType, sizes, data);
    } else {
      std::vector<int32_t> data(outputCount);
      if (outputCount > 0) {
        context.read(buffers[output], data.data(), outputCount * sizeof(int32_t));
      }
      result.output = valueFromFlatInts(program.outputType, sizes, data);
    }
  } catch (const std::invalid_argument& error) {
    throw OpenCLError(fmt::format("reading the output of '{}' (buffer {}, type {}): {}",
                                  program.definitionName, program.buffers[output].name,
                                  program.outputType.toString(), error.what()));
  }
  return result;
}

}  // namespace weft::host
