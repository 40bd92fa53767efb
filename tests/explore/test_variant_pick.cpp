// Tests of explore/variant_pick: pick specs; picking the fastest, smallest, knee and
// within-budget variant from a results database written in a temporary folder (checked against
// brute force over the rows), with every error naming what the database holds; and rebuilding
// a layer variant from its recorded parameters (the interpreter on the rebuilt program equals
// the interpreter on Listing 3) — conv-direct's and the register-blocked vector family's, with
// vector_pad_in_loads 0 and 1 and, as in records made before it existed, without it (0) —
// the Table 4 layout of its parameters.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "explore/explorer.h"
#include "explore/parameter_space.h"
#include "explore/pareto.h"
#include "explore/sampler.h"
#include "explore/variant_pick.h"
#include "workloads/conv/conv_layer.h"
#include "ir/interp.h"
#include "tests/support/random_values.h"
#include "tests/support/run_weft.h"
#include "typecheck/typecheck.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/builtin_workloads.h"
#include "workloads/conv/conv_workload.h"

using namespace weft;
using namespace weft::explore;

// Picking by a layer spec ("vgg16:2") and laying records out asks the registry.
static const bool kWorkloadsRegistered = (workloads::registerBuiltinWorkloads(), true);

namespace {

// A fresh folder under the system's temporary folder, removed at the end of the test.
struct TempFolder : testing::TempDir {
  TempFolder() : TempDir("weft_variant_pick") {}
};

VariantRecord row(const std::string& program, const std::string& device, int id,
                  std::optional<uint64_t> ns, int64_t bytes,
                  VariantStatus status = VariantStatus::Ok) {
  VariantRecord v;
  v.key = {program, device, compilerVersion(), "{\"id\":" + std::to_string(id) + "}"};
  v.status = status;
  if (status == VariantStatus::Ok) v.medianNs = ns;
  v.spaceBytes = bytes;
  if (ns) v.samplesNs = {*ns};
  return v;
}

std::string messageOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const PickError& error) {
    return error.what();
  }
  return "(no PickError)";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("pick specs") {
  CHECK(parsePickSpec("fastest").kind == PickSpec::Kind::Fastest);
  CHECK(parsePickSpec("Smallest").kind == PickSpec::Kind::Smallest);
  CHECK(parsePickSpec("knee").kind == PickSpec::Kind::Knee);
  PickSpec budget = parsePickSpec("budget=25MB");
  CHECK(budget.kind == PickSpec::Kind::Budget);
  CHECK(budget.budgetBytes == 25'000'000);
  CHECK(parsePickSpec("budget=2KiB").budgetBytes == 2048);
  CHECK(parsePickSpec("sample=27").kind == PickSpec::Kind::Sample);
  CHECK(parsePickSpec("sample=27").sample == 27);
  CHECK(parsePickSpec("sample=27").describe() == "sample=27");
  CHECK(has(messageOf([] { parsePickSpec("quickest"); }), "fastest, smallest, knee, budget="));
  CHECK(has(messageOf([] { parsePickSpec("sample=0"); }), "N >= 1"));
  CHECK(has(messageOf([] { parsePickSpec("sample=x"); }), "N >= 1"));
  CHECK(has(messageOf([] { parsePickSpec("budget=lots"); }), "not a memory size"));
  CHECK(has(messageOf([] { parsePickSpec("budget="); }), "not a memory size"));
}

TEST_CASE("picking agrees with brute force over the database's rows") {
  TempFolder folder;
  const auto db = folder.path / "results.db";
  std::mt19937_64 rng(17);
  std::vector<VariantRecord> rows;
  {
    ResultsDb writer(db);
    for (int i = 0; i < 40; ++i) {
      VariantStatus status = i % 7 == 3 ? VariantStatus::Timeout : VariantStatus::Ok;
      VariantRecord r = row("conv_4_8_8_4_3_1_1", "dev1", i,
                            std::uniform_int_distribution<uint64_t>(1000, 90000)(rng),
                            std::uniform_int_distribution<int64_t>(1000, 90000)(rng), status);
      writer.record(r);
      rows.push_back(r);
    }
    writer.record(row("conv1_2", "dev1", 0, 5, 5));
  }
  ResultsSnapshot snapshot = readResultsSnapshot(db);
  std::optional<VariantRecord> fastest, smallest;
  size_t ok = 0;
  for (const VariantRecord& r : rows) {
    if (r.status != VariantStatus::Ok) continue;
    ++ok;
    if (!fastest || *r.medianNs < *fastest->medianNs) fastest = r;
    if (!smallest || *r.spaceBytes < *smallest->spaceBytes) smallest = r;
  }
  PickedVariant f = pickVariant(snapshot, "conv_4_8_8_4_3_1_1", "", parsePickSpec("fastest"));
  CHECK(*f.record.medianNs == *fastest->medianNs);
  CHECK(f.why == "fastest of " + std::to_string(ok) + " ok variants");
  // A layer spec names the same program; the path overload reads the file itself.
  PickedVariant s = pickVariant(db, "4,8,8,4,3,1,1", "dev1", parsePickSpec("smallest"));
  CHECK(*s.record.spaceBytes == *smallest->spaceBytes);
  CHECK(has(s.why, "smallest of"));

  // sample=N: the N-th row of the program in measuring order (failed rows count, not pickable).
  for (size_t i = 0; i < rows.size(); ++i) {
    PickSpec spec;
    spec.kind = PickSpec::Kind::Sample;
    spec.sample = static_cast<int64_t>(i + 1);
    if (rows[i].status == VariantStatus::Ok) {
      CHECK(pickVariant(snapshot, "conv_4_8_8_4_3_1_1", "", spec).record.key == rows[i].key);
    } else {
      CHECK(has(messageOf([&] { pickVariant(snapshot, "conv_4_8_8_4_3_1_1", "", spec); }),
                "is timeout; only an ok variant can be picked"));
    }
  }
  CHECK(has(messageOf([&] {
              pickVariant(snapshot, "conv_4_8_8_4_3_1_1", "", parsePickSpec("sample=41"));
            }),
            "no sample 41 of conv_4_8_8_4_3_1_1 on device dev1"));

  PickedVariant knee = pickVariant(snapshot, "conv_4_8_8_4_3_1_1", "", parsePickSpec("knee"));
  std::vector<VariantRecord> front = paretoFront(rows);
  CHECK(knee.record.key == front[kneeIndex(front)].key);

  // Budgets: the fastest at or under the budget, for budgets around every row's size.
  for (const VariantRecord& r : rows) {
    if (r.status != VariantStatus::Ok) continue;
    PickSpec spec;
    spec.kind = PickSpec::Kind::Budget;
    spec.budgetBytes = *r.spaceBytes;
    PickedVariant b = pickVariant(snapshot, "conv_4_8_8_4_3_1_1", "", spec);
    CHECK(*b.record.spaceBytes <= spec.budgetBytes);
    for (const VariantRecord& other : rows) {
      if (other.status == VariantStatus::Ok && *other.spaceBytes <= spec.budgetBytes) {
        CHECK(*b.record.medianNs <= *other.medianNs);
      }
    }
  }
}

TEST_CASE("pick errors say what the database holds") {
  TempFolder folder;
  const auto db = folder.path / "results.db";
  { ResultsDb create(db); }
  CHECK(has(messageOf([&] { pickVariant(db, "conv1_2", "", PickSpec{}); }), "holds no variants"));
  {
    ResultsDb writer(db);
    writer.record(row("conv1_2", "devA", 0, 100, 5'000'000));
    writer.record(row("conv1_2", "devB", 0, 90, 6'000'000));
    writer.record(row("conv_4_8_8_4_3_1_1", "devA", 0, 100, 30'000'000));
    writer.record(row("conv_4_8_8_4_3_1_1", "devA", 1, 80, 40'000'000));
    writer.record(row("broken", "devA", 0, std::nullopt, 10, VariantStatus::BuildError));
    writer.record(row("broken", "devA", 1, std::nullopt, 10, VariantStatus::BuildError));
    writer.record(row("broken", "devA", 2, std::nullopt, 10, VariantStatus::Timeout));
  }
  ResultsSnapshot snapshot = readResultsSnapshot(db);
  std::string unknown = messageOf([&] { pickVariant(snapshot, "vgg16:10", "", PickSpec{}); });
  CHECK(has(unknown, "no variants of 'vgg16:10' (recorded as 'conv3_1')"));
  CHECK(has(unknown, "3 programs: broken, conv1_2, conv_4_8_8_4_3_1_1"));

  std::string ambiguous = messageOf([&] { pickVariant(snapshot, "conv1_2", "", PickSpec{}); });
  CHECK(has(ambiguous, "explored on 2 devices"));
  CHECK(has(ambiguous, "devA (1 variant), devB (1 variant)"));
  CHECK(*pickVariant(snapshot, "vgg16:2", "devB", PickSpec{}).record.medianNs == 90);
  CHECK(has(messageOf([&] { pickVariant(snapshot, "conv1_2", "devC", PickSpec{}); }),
            "no variants of conv1_2 on device devC"));

  std::string none = messageOf([&] { pickVariant(snapshot, "broken", "", PickSpec{}); });
  CHECK(has(none, "no ok variants of broken"));
  CHECK(has(none, "3 recorded: 2 build_error, 1 timeout"));

  PickSpec budget = parsePickSpec("budget=25MB");
  std::string tight =
      messageOf([&] { pickVariant(snapshot, "conv_4_8_8_4_3_1_1", "", budget); });
  CHECK(has(tight, "no ok variant of conv_4_8_8_4_3_1_1 fits in a budget of 25.000 MB"));
  CHECK(has(tight, "the smallest of 2 ok variants takes 30.000 MB (30000000 bytes)"));
  CHECK(has(tight, "{\"id\":0}"));
  CHECK(*pickVariant(snapshot, "conv_4_8_8_4_3_1_1", "", parsePickSpec("budget=35MB"))
              .record.medianNs == 100);
}

TEST_CASE("a recorded layer variant is rebuilt into a program that computes the layer") {
  const ConvLayer layer{2, 6, 6, 4, 3, 1, 1, ""};
  const ArithBinding sizes = convListing3Sizes(layer);
  const Definition listing3 = convListing3Definition();
  std::mt19937_64 rng(5);
  std::vector<Value> inputs;
  for (const Expr& param : listing3.function.params()) {
    inputs.push_back(testing::randomValue(param.paramType(), sizes, rng));
  }
  const Value expected = interpret(listing3, inputs, sizes);
  int checked = 0;
  for (int v : {1, 2}) {
    for (int unroll : {0, 1}) {
      ExploreTarget target = layerTarget(layer, v, unroll);
      SpaceOptions options;
      options.switches = target.switches;
      ParameterSpace space = buildParameterSpace(target.parametric, target.sizes, options);
      Sampler sampler(space);
      SampleSet samples = sampler.sample(3, 7);
      for (const std::vector<int64_t>& point : samples.points) {
        VariantRecord record;
        record.key = {"conv_2_6_6_4_3_1_1", "dev", compilerVersion(),
                      parametersJson(space, point, target.fixedParameters)};
        CAPTURE(record.key.parameters);
        Definition rebuilt = variantDefinition(layer, record);
        CHECK_NOTHROW(typecheck(rebuilt));
        Value actual = interpret(rebuilt, inputs, sizes);
        CHECK(approximatelyEqual(expected, actual, 1e-4, 1e-4));
        ++checked;
      }
    }
  }
  CHECK(checked >= 8);
}

TEST_CASE("recorded register-blocked vector variants rebuild, with and without pad_in_loads") {
  // 8 kernels (κ = 4 divides them), a 4×4 output (σ = 2 divides its width).
  const ConvLayer layer{2, 4, 4, 8, 3, 1, 1, ""};
  const ArithBinding sizes = convListing3Sizes(layer);
  const Definition listing3 = convListing3Definition();
  std::mt19937_64 rng(9);
  std::vector<Value> inputs;
  for (const Expr& param : listing3.function.params()) {
    inputs.push_back(testing::randomValue(param.paramType(), sizes, rng));
  }
  const Value expected = interpret(listing3, inputs, sizes);
  auto lets = [](const Definition& d) {
    int n = 0;
    forEachNode(d.function.body(), [&](const Expr& e) { n += e.isPrim(Op::Let) ? 1 : 0; });
    return n;
  };
  int checked = 0;
  for (int padInLoads : {0, 1}) {
    CAPTURE(padInLoads);
    ExploreTarget target = layerVectorTarget(layer, 4, 2, padInLoads);
    CHECK(target.fixedParameters.at("vector_pad_in_loads") == padInLoads);
    ParameterSpace space = buildParameterSpace(target.parametric, target.sizes, SpaceOptions{});
    Sampler sampler(space);
    SampleSet samples = sampler.sample(2, 3);
    REQUIRE(!samples.points.empty());
    for (const std::vector<int64_t>& point : samples.points) {
      const std::string recorded = parametersJson(space, point, target.fixedParameters);
      CAPTURE(recorded);
      CHECK(has(recorded, "\"vector_pad_in_loads\":" + std::to_string(padInLoads)));
      std::vector<std::string> forms = {recorded};
      if (padInLoads == 0) {
        // A record written before pad_in_loads existed: no such key, meaning 0.
        nlohmann::json old = nlohmann::json::parse(recorded);
        old.erase("vector_pad_in_loads");
        forms.push_back(old.dump());
      }
      for (const std::string& parameters : forms) {
        CAPTURE(parameters);
        VariantRecord record;
        record.key = {"conv_2_4_4_8_3_1_1", "dev", compilerVersion(), parameters};
        Definition rebuilt = variantDefinition(layer, record);
        // The padded copy is a let-bound stage of its own only without pad_in_loads.
        CHECK(lets(rebuilt) == (padInLoads ? 1 : 2));
        Value actual = interpret(rebuilt, inputs, sizes);
        CHECK(approximatelyEqual(expected, actual, 1e-4, 1e-4));
        ++checked;
      }
    }
  }
  CHECK(checked >= 3);
  // Any other value of the switch is no structure of the family.
  VariantRecord bad;
  bad.key = {"conv_2_4_4_8_3_1_1", "dev", compilerVersion(),
             "{\"rows\":1,\"vector_kappa\":4,\"vector_pad_in_loads\":2,\"vector_sigma\":2}"};
  CHECK(has(messageOf([&] { variantDefinition(layer, bad); }), "fails"));
}

TEST_CASE("records that are no variant of the layer are refused") {
  const ConvLayer layer{2, 6, 6, 4, 3, 1, 1, ""};
  auto record = [](const std::string& parameters) {
    VariantRecord r;
    r.key = {"conv_2_6_6_4_3_1_1", "dev", compilerVersion(), parameters};
    return r;
  };
  CHECK(has(messageOf([&] { variantDefinition(layer, record("{\"N\":4}")); }),
            "is not a conv variant"));
  CHECK(has(messageOf([&] { variantDefinition(layer, record("{\"v\":1,\"unroll\":0}")); }),
            "is missing"));
  const std::string good =
      "{\"coalesce\":1,\"kappa\":1,\"omega\":2,\"rho\":0,\"sigma\":1,\"theta\":4,\"unroll\":0,"
      "\"v\":1}";
  CHECK_NOTHROW(variantDefinition(layer, record(good)));
  std::string extra = good;
  extra.insert(1, "\"bogus\":3,");
  CHECK(has(messageOf([&] { variantDefinition(layer, record(extra)); }),
            "bogus is no parameter"));
  std::string invalid = good;
  invalid.replace(invalid.find("\"omega\":2"), 9, "\"omega\":5");  // 5 does not divide 18
  CHECK(has(messageOf([&] { variantDefinition(layer, record(invalid)); }), "is not valid for"));
}

TEST_CASE("parameters laid out like the paper's Table 4, raw for other programs") {
  CHECK(layerOfProgram("conv1_2").has_value());
  CHECK(layerOfProgram("conv1_2")->C == 64);
  CHECK(layerOfProgram("conv_2_6_6_4_3_1_1")->M == 4);
  CHECK(!layerOfProgram("dot[N=1024]").has_value());
  CHECK(!layerOfProgram("conv_2_6").has_value());

  VariantRecord layerRecord;
  layerRecord.key = {"conv_2_6_6_4_3_1_1", "dev", compilerVersion(),
                     "{\"coalesce\":1,\"kappa\":2,\"omega\":6,\"rho\":0,\"sigma\":1,\"theta\":4,"
                     "\"unroll\":0,\"v\":2}"};
  std::vector<ParameterRow> rows = parameterTable(layerRecord);
  REQUIRE(rows.size() >= 9);
  CHECK(rows[0].name == "Input tile size (θ×θ)");
  CHECK(rows[0].value == "4×4");
  CHECK(rows[1].value == "2");  // κ
  CHECK(rows[3].value == "6");  // ω
  CHECK(rows[5].value == "2");  // v
  CHECK(rows[6].value == "no");
  CHECK(rows[7].value == "yes");
  bool localSizes = false;
  for (const ParameterRow& r : rows) localSizes = localSizes || has(r.name, "Local size of");
  CHECK(localSizes);

  VariantRecord program;
  program.key = {"dot[N=1024]", "dev", compilerVersion(), "{\"b\":2,\"a\":16}"};
  std::vector<ParameterRow> raw = parameterTable(program);
  REQUIRE(raw.size() == 2);
  CHECK(raw[0].name == "a");
  CHECK(raw[0].value == "16");
}
