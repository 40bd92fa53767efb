// The built-in workloads' registration (see workloads/builtin_workloads.h).
#include "workloads/builtin_workloads.h"

#include <mutex>

#include "explore/workload.h"
#include "workloads/conv/conv_workload.h"
#include "workloads/pipeline/pipeline_workload.h"

namespace weft::workloads {

void registerBuiltinWorkloads() {
  static std::once_flag once;
  std::call_once(once, [] {
    explore::registerWorkload(explore::convWorkload());
    explore::registerWorkload(explore::pipelineWorkload());
  });
}

}  // namespace weft::workloads
