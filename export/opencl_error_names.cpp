// The lookup over the table of OpenCL error names (export/opencl_error_names.h).
#include "export/opencl_error_names.h"

namespace weft::exporting {

const char* openclErrorName(int code) {
  for (const OpenclErrorName& entry : kOpenclErrorNames) {
    if (entry.code == code) return entry.name;
  }
  return nullptr;
}

}  // namespace weft::exporting
