// Measuring one variant (see explore/measurement.h): instantiate, generate, build, warm up,
// verify, then time until enough runs and enough measured time.
#include "explore/measurement.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <sstream>

#include "codegen/compile_pipeline.h"
#include "host/program_runner.h"
#include "host/register_report.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "ir/type.h"

namespace weft::explore {

namespace {

// One random scalar of `kind`: floats as `values` says, ints in [-5, 5], bools 0/1.
Value randomScalar(ScalarKind kind, std::mt19937_64& rng, InputValues values) {
  switch (kind) {
    case ScalarKind::Float:
      if (values == InputValues::SmallIntegers) {
        return Value::ofFloat(static_cast<float>(std::uniform_int_distribution<int>(-2, 2)(rng)));
      }
      return Value::ofFloat(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng));
    case ScalarKind::Int:
      return Value::ofInt(std::uniform_int_distribution<int>(-5, 5)(rng));
    case ScalarKind::Bool:
      return Value::ofBool(std::uniform_int_distribution<int>(0, 1)(rng) == 1);
  }
  return Value::ofInt(0);
}

Value randomValue(const Type& type, const ArithBinding& sizes, std::mt19937_64& rng,
                  InputValues values) {
  auto scalar = [&](ScalarKind kind) { return randomScalar(kind, rng, values); };
  switch (type.kind()) {
    case TypeKind::Scalar:
      return scalar(type.scalarKind());
    case TypeKind::Vector: {
      std::vector<Value> lanes;
      for (int64_t lane = 0; lane < type.vectorWidth(); ++lane) {
        lanes.push_back(scalar(type.scalarKind()));
      }
      return Value::vector(std::move(lanes));
    }
    case TypeKind::Tuple: {
      std::vector<Value> components;
      for (const Type& element : type.tupleElements()) {
        components.push_back(randomValue(element, sizes, rng, values));
      }
      return Value::tuple(std::move(components));
    }
    case TypeKind::Array: {
      int64_t length = evaluate(type.arrayLength(), sizes);
      std::vector<Value> elements;
      elements.reserve(static_cast<size_t>(std::max<int64_t>(length, 0)));
      for (int64_t i = 0; i < length; ++i) {
        elements.push_back(randomValue(type.arrayElement(), sizes, rng, values));
      }
      return Value::array(std::move(elements));
    }
  }
  return Value::ofInt(0);
}

// randomValue's numbers, in its order (row-major, vector lanes in order), appended to `out`.
void appendRandomFlat(const Type& type, const ArithBinding& sizes, std::mt19937_64& rng,
                      InputValues values, host::FlatInput& out) {
  switch (type.kind()) {
    case TypeKind::Scalar:
    case TypeKind::Vector: {
      const int64_t lanes = type.kind() == TypeKind::Vector ? type.vectorWidth() : 1;
      for (int64_t lane = 0; lane < lanes; ++lane) {
        const Value v = randomScalar(type.scalarKind(), rng, values);
        if (out.ints) {
          out.intValues.push_back(v.kind == Value::Kind::Bool ? (v.b ? 1 : 0) : v.i);
        } else {
          out.floats.push_back(v.f);
        }
      }
      return;
    }
    case TypeKind::Tuple:
      throw std::invalid_argument("a tuple input has no flat form: " + type.toString());
    case TypeKind::Array: {
      const int64_t length = evaluate(type.arrayLength(), sizes);
      for (int64_t i = 0; i < length; ++i) {
        appendRandomFlat(type.arrayElement(), sizes, rng, values, out);
      }
      return;
    }
  }
}

// The scalar kind at the bottom of nested arrays and vectors (Float for a tuple: it throws later).
ScalarKind innermostScalar(const Type& type) {
  Type at = type;
  while (at.kind() == TypeKind::Array) at = at.arrayElement();
  return at.kind() == TypeKind::Scalar || at.kind() == TypeKind::Vector ? at.scalarKind()
                                                                        : ScalarKind::Float;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

void emit(const MeasurementEvents& events, const std::string& phase, uint64_t nanoseconds = 0) {
  if (events.phase) events.phase(phase, nanoseconds);
}

// The inputs as device runs read them: data.flat, or made into `made` from data.inputs when the
// caller gave only those.
const std::vector<host::FlatInput>& flatInputs(const MeasurementInputs& data,
                                               std::vector<host::FlatInput>& made) {
  if (!data.flat.empty() || data.inputs.empty()) return data.flat;
  made = host::flatInputsOf(data.inputs);
  return made;
}

// The timed runs after the warm-up; fills samples, kernel times and the median. A variant
// timed once takes the warm-up run (`warmUp`) as its one run: its kernels'
// cl_event times are a run's like any other (what an implementation compiles at a first
// launch happens before them), and a run more would cost as long again on the slowest
// variants. Throws OpenCLError.
void timeRuns(host::Context& context, const CompiledProgram& program,
              const std::vector<host::FlatInput>& inputs, const ArithBinding& sizes,
              const MeasurementOptions& options, host::ProgramCache& cache,
              Measurement& measurement, const host::RunResult& warmUp) {
  host::RunOptions run;
  run.buildOptions = options.buildOptions;
  run.cache = &cache;
  run.output = host::RunOptions::Output::None;  // the warm-up run's output was verified
  measurement.timedOnce =
      options.timeOnceAboveNs > 0 && measurement.warmUpNs > options.timeOnceAboveNs;
  const int maxRepeats = measurement.timedOnce ? 1 : std::max(options.maxRepeats, 1);
  const int minRepeats = std::clamp(options.minRepeats, 1, maxRepeats);
  const uint64_t minMeasuredNs = measurement.timedOnce ? 0 : options.minMeasuredNs;
  if (!options.constantInputs.empty()) {
    measurement.preparationKernels = program.preparationKernels(options.constantInputs);
  }
  const std::vector<bool>& preparation = measurement.preparationKernels;
  std::vector<uint64_t> preparationSamples;
  uint64_t measured = 0;
  auto record = [&](const host::RunResult& result) {
    for (const std::vector<uint64_t>& kernels : result.repeatKernelNanoseconds) {
      uint64_t perInference = 0, prepared = 0;
      for (size_t k = 0; k < kernels.size(); ++k) {
        (k < preparation.size() && preparation[k] ? prepared : perInference) += kernels[k];
      }
      measurement.samplesNs.push_back(perInference);
      preparationSamples.push_back(prepared);
      measured += perInference + prepared;
    }
    if (measurement.kernelNs.empty()) {
      for (const host::KernelTime& kernel : result.kernels) {
        measurement.kernelNs.emplace_back(kernel.name, kernel.nanoseconds);
      }
    } else {
      for (size_t k = 0; k < result.kernels.size() && k < measurement.kernelNs.size(); ++k) {
        measurement.kernelNs[k].second =
            std::min(measurement.kernelNs[k].second, result.kernels[k].nanoseconds);
      }
    }
  };
  if (measurement.timedOnce) record(warmUp);
  while (static_cast<int>(measurement.samplesNs.size()) < maxRepeats) {
    const int done = static_cast<int>(measurement.samplesNs.size());
    if (done >= minRepeats && measured >= minMeasuredNs) break;
    uint64_t estimate = done == 0 ? measurement.warmUpNs : medianOf(measurement.samplesNs);
    estimate = std::max<uint64_t>(estimate, 1000);
    int64_t wanted = std::max<int64_t>(minRepeats - done, 0);
    if (measured < minMeasuredNs) {
      wanted = std::max<int64_t>(
          wanted, static_cast<int64_t>((minMeasuredNs - measured + estimate - 1) / estimate));
    }
    run.repeats = static_cast<int>(std::clamp<int64_t>(wanted, 1, maxRepeats - done));
    record(runProgram(context, program, inputs, sizes, run));
  }
  measurement.medianNs = medianOf(measurement.samplesNs);
  if (std::find(preparation.begin(), preparation.end(), true) != preparation.end()) {
    measurement.preparationNs = medianOf(preparationSamples);
  }
}

}  // namespace

std::string sourceHash(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a 64-bit offset basis and prime
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = digits[hash & 15];
    hash >>= 4;
  }
  return out;
}

std::vector<Value> randomInputs(const Definition& definition, const ArithBinding& sizes,
                                uint64_t seed, InputValues values) {
  std::mt19937_64 rng(seed);
  std::vector<Value> inputs;
  for (const Expr& param : definition.function.params()) {
    inputs.push_back(randomValue(param.paramType(), sizes, rng, values));
  }
  return inputs;
}

std::vector<host::FlatInput> randomFlatInputs(const Definition& definition,
                                              const ArithBinding& sizes, uint64_t seed,
                                              InputValues values) {
  std::mt19937_64 rng(seed);
  std::vector<host::FlatInput> inputs;
  for (const Expr& param : definition.function.params()) {
    host::FlatInput flat;
    flat.ints = innermostScalar(param.paramType()) != ScalarKind::Float;
    appendRandomFlat(param.paramType(), sizes, rng, values, flat);
    inputs.push_back(std::move(flat));
  }
  return inputs;
}

Comparison compareOutputs(const std::vector<float>& actual, const std::vector<float>& expected,
                          double tolerance) {
  Comparison comparison;
  if (actual.size() != expected.size()) {
    comparison.message = "the output has " + std::to_string(actual.size()) +
                         " values, the reference " + std::to_string(expected.size());
    return comparison;
  }
  double largest = 0;
  for (float value : expected) largest = std::max(largest, std::fabs(static_cast<double>(value)));
  comparison.allowed = tolerance * std::max(largest, 1.0);
  for (size_t i = 0; i < actual.size(); ++i) {
    double error = std::fabs(static_cast<double>(actual[i]) - static_cast<double>(expected[i]));
    if (std::isnan(error)) error = INFINITY;
    if (error > comparison.maxError) comparison.maxError = error;
    if (error > comparison.allowed && comparison.message.empty()) {
      std::ostringstream text;
      text << "output[" << i << "] = " << actual[i] << ", expected " << expected[i]
           << " (allowed difference " << comparison.allowed << ")";
      comparison.message = text.str();
    }
  }
  comparison.ok = comparison.message.empty();
  return comparison;
}

std::string guardViolationsText(const std::vector<host::GuardViolation>& violations) {
  std::string text;
  for (const host::GuardViolation& violation : violations) {
    text += (text.empty() ? "" : "; ") + violation.describe();
  }
  return text;
}

uint64_t medianOf(std::vector<uint64_t> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  size_t middle = samples.size() / 2;
  if (samples.size() % 2 == 1) return samples[middle];
  return (samples[middle - 1] + samples[middle]) / 2;
}

std::string deviceMemoryProblem(const CompiledProgram& program, const ArithBinding& sizes,
                                const MeasurementOptions& options) {
  auto gigabytes = [](int64_t bytes) { return fmt::format("{:.2f} GB", bytes / 1e9); };
  int64_t total = 0;
  for (const BufferPlan& buffer : program.buffers) {
    const int64_t bytes = evaluate(buffer.elementCount, sizes) * 4;
    total += bytes;
    if (options.maxBufferBytes > 0 && bytes > options.maxBufferBytes) {
      return fmt::format("buffer {} needs {}, more than the device's largest buffer ({})",
                         buffer.name, gigabytes(bytes), gigabytes(options.maxBufferBytes));
    }
  }
  if (options.deviceMemoryBytes > 0 && total > options.deviceMemoryBytes) {
    return fmt::format("its buffers need {} together, more than the device's memory ({})",
                       gigabytes(total), gigabytes(options.deviceMemoryBytes));
  }
  return "";
}

GeneratedVariant generateVariant(const Definition& parametric, const ArithBinding& binding,
                                 const MeasurementInputs& data, const MeasurementOptions& options,
                                 InterpretedOutput* lastInterpreted) {
  GeneratedVariant variant;
  Measurement& measurement = variant.measurement;
  // The tuning parameters only: the sizes stay variables of the definition (bound by the
  // inputs' binding when it runs) and are specialised by code generation.
  ArithBinding point;
  for (const auto& [name, value] : binding) {
    if (!data.sizes.count(name)) point[name] = value;
  }
  ArithBinding& full = variant.binding;
  full = data.sizes;
  for (const auto& [name, value] : point) full[name] = value;

  std::optional<CompiledProgram>& program = variant.program;
  try {
    const auto generationStart = std::chrono::steady_clock::now();
    CompilePipelineOptions compile;
    compile.codegen.specialize = full;
    program = compileToOpenCL(parametric, point, compile);
    measurement.sourceHash = sourceHash(program->source);
    measurement.spaceBytes = program->inferenceBytes(full, options.constantInputs);
    measurement.allBuffersBytes = program->globalBytes(full);
    measurement.generateMs = millisecondsSince(generationStart);
    if (const std::string problem = deviceMemoryProblem(*program, full, options);
        !problem.empty()) {
      measurement.status = VariantStatus::Invalid;
      measurement.message = "does not fit the device: " + problem;
      program.reset();
      return variant;
    }
    if (data.expected) {
      variant.expected = *data.expected;
    } else {
      const Definition instance = instantiate(parametric, point);
      std::string printed = lastInterpreted ? printDefinition(instance) : std::string();
      if (lastInterpreted && lastInterpreted->program == printed) {
        variant.expected = lastInterpreted->output;
      } else {
        variant.expected = flattenToFloats(interpret(instance, data.inputs, full));
        if (lastInterpreted) *lastInterpreted = {std::move(printed), variant.expected};
      }
    }
  } catch (const std::exception& e) {
    measurement.status = VariantStatus::Invalid;
    measurement.message = std::string(program ? "reference: " : "generation: ") + e.what();
    program.reset();
  }
  return variant;
}

Measurement measureGenerated(host::Context& context, GeneratedVariant& variant,
                             const MeasurementInputs& data, const MeasurementOptions& given,
                             const MeasurementEvents& events) {
  // Built with the option that makes the platform's compiler report registers, if it has one.
  MeasurementOptions options = given;
  const std::string report = host::registerReportOption(context.device().platformName,
                                                        context.device().platformVendor);
  if (options.rejectSpills && !report.empty()) {
    options.buildOptions += (options.buildOptions.empty() ? "" : " ") + report;
  }
  Measurement measurement = variant.measurement;
  if (!variant.program) return measurement;  // generation failed: status invalid
  CompiledProgram& program = *variant.program;
  const ArithBinding& full = variant.binding;
  if (events.tamperProgram) {
    events.tamperProgram(program);
    measurement.sourceHash = sourceHash(program.source);
  }

  host::ProgramCache cache;
  try {
    auto start = std::chrono::steady_clock::now();
    const host::Program built = cache.get(context, program.source, options.buildOptions);
    measurement.buildMs = millisecondsSince(start);
    measurement.buildLog = built.buildLog().substr(0, 4000);
    if (options.rejectSpills) {
      for (const host::KernelRegisterUse& kernel : host::parseRegisterReport(built.buildLog())) {
        if (!kernel.spills()) continue;
        measurement.status = VariantStatus::Invalid;
        measurement.message = "spills registers: " + kernel.kernel + " uses " +
                              std::to_string(kernel.registers) + " registers per work-item and " +
                              std::to_string(kernel.spillStoreBytes) + " bytes of spill stores, " +
                              std::to_string(kernel.spillLoadBytes) +
                              " of spill loads (the compiler's report): not timed";
        return measurement;
      }
    }
  } catch (const std::exception& e) {
    measurement.status = VariantStatus::BuildError;
    measurement.message = e.what();
    return measurement;
  }
  emit(events, "built", static_cast<uint64_t>(measurement.buildMs.value_or(0.0) * 1e6));
  if (options.stopAfterBuild) {
    measurement.status = VariantStatus::Ok;
    measurement.message = "built (not run: stopAfterBuild)";
    if (options.compileFirstLaunch) {
      try {
        std::vector<host::FlatInput> made;
        host::RunOptions firstLaunch;
        firstLaunch.buildOptions = options.buildOptions;
        firstLaunch.cache = &cache;
        firstLaunch.output = host::RunOptions::Output::None;
        firstLaunch.firstWorkGroupOnly = true;
        runProgram(context, program, flatInputs(data, made), full, firstLaunch);
        measurement.message =
            "built and launched over one work-group per kernel (not run: "
            "stopAfterBuild)";
      } catch (const std::exception& e) {
        measurement.message += std::string("; its first launches failed: ") + e.what();
      }
    }
    return measurement;
  }

  std::vector<float> output;
  std::vector<host::GuardViolation> violations;
  std::vector<host::FlatInput> made;
  const std::vector<host::FlatInput>* inputs = nullptr;
  host::RunResult warm;
  try {
    inputs = &flatInputs(data, made);
    host::RunOptions run;
    run.buildOptions = options.buildOptions;
    run.cache = &cache;
    run.guards = options.guards;  // the warm-up run only: the timed runs do not pay for it
    run.output = host::RunOptions::Output::Floats;
    warm = runProgram(context, program, *inputs, full, run);
    measurement.warmUpNs = warm.totalNanoseconds;
    output = std::move(warm.outputFloats);
    violations = std::move(warm.guardViolations);
  } catch (const std::exception& e) {
    measurement.status = VariantStatus::LaunchError;
    measurement.message = e.what();
    return measurement;
  }
  if (events.tamperOutput) events.tamperOutput(output);
  emit(events, "warm", measurement.warmUpNs);
  if (!violations.empty()) {
    measurement.status = VariantStatus::WrongAnswer;
    measurement.message = guardViolationsText(violations);
    return measurement;
  }

  Comparison comparison = compareOutputs(output, variant.expected, options.tolerance);
  measurement.maxError = comparison.maxError;
  measurement.allowedError = comparison.allowed;
  if (!comparison.ok) {
    measurement.status = VariantStatus::WrongAnswer;
    measurement.message = comparison.message;
    return measurement;
  }
  emit(events, "verified");

  try {
    timeRuns(context, program, *inputs, full, options, cache, measurement, warm);
  } catch (const std::exception& e) {
    measurement.status = VariantStatus::LaunchError;
    measurement.message = std::string("timed runs: ") + e.what();
    return measurement;
  }
  measurement.status = VariantStatus::Ok;
  return measurement;
}

Measurement measureVariant(host::Context& context, const Definition& parametric,
                           const ArithBinding& binding, const MeasurementInputs& data,
                           const MeasurementOptions& options, const MeasurementEvents& events) {
  GeneratedVariant variant = generateVariant(parametric, binding, data, options);
  if (!variant.program) return variant.measurement;
  emit(events, "generated");
  return measureGenerated(context, variant, data, options, events);
}

Measurement measureCompiled(host::Context& context, const CompiledProgram& program,
                            const MeasurementInputs& data, const MeasurementOptions& options,
                            std::vector<float>* output) {
  Measurement measurement;
  measurement.sourceHash = sourceHash(program.source);
  measurement.spaceBytes = program.inferenceBytes(data.sizes, options.constantInputs);
  measurement.allBuffersBytes = program.globalBytes(data.sizes);
  host::ProgramCache cache;
  auto start = std::chrono::steady_clock::now();
  cache.get(context, program.source, options.buildOptions);
  measurement.buildMs = millisecondsSince(start);
  host::RunOptions run;
  run.buildOptions = options.buildOptions;
  run.cache = &cache;
  run.guards = options.guards;
  run.output = host::RunOptions::Output::Floats;
  std::vector<host::FlatInput> made;
  const std::vector<host::FlatInput>& inputs = flatInputs(data, made);
  host::RunResult warm = runProgram(context, program, inputs, data.sizes, run);
  measurement.warmUpNs = warm.totalNanoseconds;
  if (output) *output = std::move(warm.outputFloats);
  if (!warm.guardViolations.empty()) {
    measurement.status = VariantStatus::WrongAnswer;
    measurement.message = guardViolationsText(warm.guardViolations);
    return measurement;
  }
  timeRuns(context, program, inputs, data.sizes, options, cache, measurement, warm);
  measurement.status = VariantStatus::Ok;
  return measurement;
}

}  // namespace weft::explore
