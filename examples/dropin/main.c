/* main.c: a small application that uses the files `weft emit` wrote, with nothing from weft
 * linked in: only the emitted host code and OpenCL. It reads one float32 .npy file per input of
 * the emitted program (in the order of its run function), runs the kernels on an OpenCL device
 * and writes the output as .npy.
 *
 *   dropin [--device TEXT] [--repeat N] [--no-prepare] [--release-prepared]
 *          input1.npy ... inputN.npy output.npy
 *
 * --device picks the first device whose name or platform name contains TEXT (default: the
 * first device of the first platform); --repeat runs the program N times on the same buffers
 * (the output is the last run's). The one-off part (PREFIX_prepare: the kernels that depend
 * only on the constant inputs, e.g. a weight re-layout) runs once before the runs; the program
 * prints its kernel time and the last run's, both from the events
 * ("prepare X ms, run Y ms"). --no-prepare leaves PREFIX_prepare out, to see the run refuse
 * an unprepared handle (PREFIX_ERROR_NOT_PREPARED) where the program has preparation kernels.
 * --release-prepared releases, once PREFIX_prepare has returned, the inputs the runs never read
 * (PREFIX_run_reads: e.g. the original weights of a re-laid-out layer) and passes NULL for them,
 * as an application does to keep only the inference memory.
 * The shapes of the .npy files must be the emitted buffers' shapes (the README next to the
 * emitted files lists them).
 *
 * The program is generic over the emitted prefix: CMakeLists.txt passes WEFT_DROPIN_HEADER
 * ("weft_conv3_1.h"), WEFT_DROPIN_PREFIX (weft_conv3_1) and WEFT_DROPIN_PREFIX_UPPER
 * (WEFT_CONV3_1), and the names are pasted together below. The .npy reader and writer handle
 * exactly what this needs: little-endian float32, C order, format versions 1 to 3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include WEFT_DROPIN_HEADER

#define DROPIN_PASTE(a, b) a##_##b
#define DROPIN_NAME(a, b) DROPIN_PASTE(a, b)
#define DROPIN(name) DROPIN_NAME(WEFT_DROPIN_PREFIX, name)
#define DROPIN_UPPER(name) DROPIN_NAME(WEFT_DROPIN_PREFIX_UPPER, name)

typedef DROPIN(t) dropin_handle;
typedef DROPIN(buffer) dropin_buffer;

#define MAX_DIMS 8

typedef struct {
  int rank;
  size_t dims[MAX_DIMS];
  size_t count;
  float* data;
} npy_array;

static int little_endian(void) {
  const unsigned int one = 1;
  return *(const unsigned char*)&one == 1;
}

/* Reads a float32 C-order .npy file; prints why and returns 0 when it cannot. */
static int npy_read(const char* path, npy_array* out) {
  unsigned char magic[8];
  unsigned char length_bytes[4];
  size_t header_length;
  char* header = NULL;
  const char* at;
  FILE* file = fopen(path, "rb");
  memset(out, 0, sizeof *out);
  if (file == NULL) {
    fprintf(stderr, "%s: cannot open\n", path);
    return 0;
  }
  if (fread(magic, 1, 8, file) != 8 || memcmp(magic, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "%s: not a .npy file\n", path);
    goto fail;
  }
  if (magic[6] == 1) {
    if (fread(length_bytes, 1, 2, file) != 2) goto truncated;
    header_length = (size_t)length_bytes[0] | ((size_t)length_bytes[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    if (fread(length_bytes, 1, 4, file) != 4) goto truncated;
    header_length = (size_t)length_bytes[0] | ((size_t)length_bytes[1] << 8) |
                    ((size_t)length_bytes[2] << 16) | ((size_t)length_bytes[3] << 24);
  } else {
    fprintf(stderr, "%s: .npy format version %d is not supported\n", path, magic[6]);
    goto fail;
  }
  header = (char*)malloc(header_length + 1);
  if (header == NULL || fread(header, 1, header_length, file) != header_length) goto truncated;
  header[header_length] = '\0';
  if (strstr(header, "'<f4'") == NULL) {
    fprintf(stderr, "%s: expected little-endian float32 data ('<f4'), header %s\n", path, header);
    goto fail;
  }
  if (strstr(header, "'fortran_order': False") == NULL) {
    fprintf(stderr, "%s: expected C order (fortran_order False)\n", path);
    goto fail;
  }
  at = strstr(header, "'shape':");
  at = at != NULL ? strchr(at, '(') : NULL;
  if (at == NULL) {
    fprintf(stderr, "%s: no shape in the header\n", path);
    goto fail;
  }
  ++at;
  out->count = 1;
  for (;;) {
    char* end;
    unsigned long value;
    while (*at == ' ' || *at == ',') ++at;
    if (*at == ')') break;
    value = strtoul(at, &end, 10);
    if (end == at || out->rank == MAX_DIMS) {
      fprintf(stderr, "%s: cannot read the shape\n", path);
      goto fail;
    }
    out->dims[out->rank++] = (size_t)value;
    out->count *= (size_t)value;
    at = end;
  }
  out->data = (float*)malloc((out->count > 0 ? out->count : 1) * sizeof(float));
  if (out->data == NULL) goto truncated;
  if (fread(out->data, sizeof(float), out->count, file) != out->count) goto truncated;
  free(header);
  fclose(file);
  return 1;
truncated:
  fprintf(stderr, "%s: truncated (or out of memory)\n", path);
fail:
  free(header);
  free(out->data);
  out->data = NULL;
  fclose(file);
  return 0;
}

/* Writes float32 data of the given shape as a version 1.0 .npy file. */
static int npy_write(const char* path, const float* data, const size_t* dims, int rank) {
  char header[256];
  char shape[160] = "";
  size_t count = 1;
  size_t length;
  size_t total;
  int d;
  unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  FILE* file;
  for (d = 0; d < rank; ++d) {
    char part[32];
    sprintf(part, "%lu%s", (unsigned long)dims[d], rank == 1 ? "," : (d + 1 < rank ? ", " : ""));
    strcat(shape, part);
    count *= dims[d];
  }
  length = (size_t)sprintf(header, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }",
                           shape);
  /* Pad with spaces so that the data starts at a multiple of 64 bytes; end with a newline. */
  total = 10 + length + 1;
  while (total % 64 != 0) {
    header[length++] = ' ';
    ++total;
  }
  header[length++] = '\n';
  prefix[8] = (unsigned char)(length & 0xff);
  prefix[9] = (unsigned char)(length >> 8);
  file = fopen(path, "wb");
  if (file == NULL) {
    fprintf(stderr, "%s: cannot write\n", path);
    return 0;
  }
  if (fwrite(prefix, 1, 10, file) != 10 || fwrite(header, 1, length, file) != length ||
      fwrite(data, sizeof(float), count, file) != count) {
    fprintf(stderr, "%s: write failed\n", path);
    fclose(file);
    return 0;
  }
  return fclose(file) == 0;
}

static void print_shape(FILE* out, const size_t* dims, int rank) {
  int d;
  fputc('(', out);
  for (d = 0; d < rank; ++d) fprintf(out, "%s%lu", d ? ", " : "", (unsigned long)dims[d]);
  fputs(rank == 1 ? ",)" : ")", out);
}

/* The summed kernel time of `count` finished events, in milliseconds; releases them. */
static double kernel_ms(cl_event* events, int count) {
  cl_ulong total = 0;
  int k;
  for (k = 0; k < count; ++k) {
    cl_ulong start = 0, end = 0;
    clGetEventProfilingInfo(events[k], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    clGetEventProfilingInfo(events[k], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    total += end - start;
    clReleaseEvent(events[k]);
  }
  return (double)total / 1e6;
}

/* The first device whose name or platform name contains `wanted` (any device when NULL). */
static int pick_device(const char* wanted, cl_platform_id* platform_out, cl_device_id* device_out) {
  cl_platform_id platforms[16];
  cl_uint platform_count = 0;
  cl_uint p;
  if (clGetPlatformIDs(16, platforms, &platform_count) != CL_SUCCESS) return 0;
  for (p = 0; p < platform_count && p < 16; ++p) {
    cl_device_id devices[16];
    cl_uint device_count = 0;
    cl_uint d;
    char platform_name[256] = "";
    clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof platform_name, platform_name, NULL);
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, devices, &device_count) != CL_SUCCESS) {
      continue;
    }
    for (d = 0; d < device_count && d < 16; ++d) {
      char device_name[256] = "";
      clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof device_name, device_name, NULL);
      if (wanted == NULL || strstr(device_name, wanted) != NULL ||
          strstr(platform_name, wanted) != NULL) {
        *platform_out = platforms[p];
        *device_out = devices[d];
        fprintf(stderr, "device: %s (%s)\n", device_name, platform_name);
        return 1;
      }
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* wanted = NULL;
  const char* paths[DROPIN_UPPER(INPUT_COUNT) + 1];
  int path_count = 0;
  int repeat = 1;
  int prepare = 1;
  int release_prepared = 0;
  int i;
  int status = 1;
  cl_platform_id platform;
  cl_device_id device;
  cl_context context = NULL;
  cl_command_queue queue = NULL;
  dropin_handle* handle = NULL;
  cl_mem inputs[DROPIN_UPPER(INPUT_COUNT) + 1];
  cl_mem output = NULL;
  cl_event events[DROPIN_UPPER(KERNEL_COUNT) + 1];
  double prepare_ms = 0.0;
  double run_ms = 0.0;
  float* result = NULL;
  size_t out_dims[DROPIN_UPPER(MAX_RANK)];
  int out_rank;
  cl_int err;

  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      wanted = argv[++i];
    } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--no-prepare") == 0) {
      prepare = 0;
    } else if (strcmp(argv[i], "--release-prepared") == 0) {
      release_prepared = 1;
    } else if (path_count < DROPIN_UPPER(INPUT_COUNT) + 1) {
      paths[path_count++] = argv[i];
    } else {
      path_count = -1;
      break;
    }
  }
  if (path_count != DROPIN_UPPER(INPUT_COUNT) + 1 || repeat < 1) {
    fprintf(stderr, "usage: %s [--device TEXT] [--repeat N] [--no-prepare] [--release-prepared]", argv[0]);
    for (i = 0; i < DROPIN_UPPER(INPUT_COUNT); ++i) {
      fprintf(stderr, " %s.npy", DROPIN(buffer_name)((dropin_buffer)i));
    }
    fprintf(stderr, " output.npy\n");
    return 2;
  }
  if (!little_endian()) {
    fprintf(stderr, "this example reads and writes little-endian .npy files only\n");
    return 1;
  }
  for (i = 0; i < DROPIN_UPPER(INPUT_COUNT) + 1; ++i) inputs[i] = NULL;

  if (!pick_device(wanted, &platform, &device)) {
    fprintf(stderr, "no OpenCL device%s%s\n", wanted ? " matching " : "", wanted ? wanted : "");
    return 1;
  }
  {
    cl_context_properties properties[3];
    properties[0] = CL_CONTEXT_PLATFORM;
    properties[1] = (cl_context_properties)platform;
    properties[2] = 0;
    context = clCreateContext(properties, 1, &device, NULL, NULL, &err);
  }
  if (err != CL_SUCCESS) goto cl_error;
  queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) goto cl_error;

  err = DROPIN(create)(context, device, &handle);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "create: %s\n%s\n", DROPIN(error_name)(err), DROPIN(build_log)(handle));
    goto done;
  }

  for (i = 0; i < DROPIN_UPPER(INPUT_COUNT); ++i) {
    dropin_buffer which = (dropin_buffer)i;
    size_t dims[DROPIN_UPPER(MAX_RANK)];
    int rank = DROPIN(buffer_shape)(which, dims);
    int d, same;
    npy_array array;
    if (!npy_read(paths[i], &array)) goto done;
    same = array.rank == rank;
    for (d = 0; same && d < rank; ++d) same = array.dims[d] == dims[d];
    if (!same || array.count * sizeof(float) > DROPIN(buffer_bytes)(which)) {
      fprintf(stderr, "%s: input %s must have shape ", paths[i], DROPIN(buffer_name)(which));
      print_shape(stderr, dims, rank);
      fprintf(stderr, ", not ");
      print_shape(stderr, array.dims, array.rank);
      fprintf(stderr, "\n");
      free(array.data);
      goto done;
    }
    inputs[i] = clCreateBuffer(context, CL_MEM_READ_ONLY, DROPIN(buffer_bytes)(which), NULL, &err);
    if (err == CL_SUCCESS && array.count > 0) {
      err = clEnqueueWriteBuffer(queue, inputs[i], CL_TRUE, 0, array.count * sizeof(float),
                                 array.data, 0, NULL, NULL);
    }
    free(array.data);
    if (err != CL_SUCCESS) goto cl_error;
  }
  output = clCreateBuffer(context, CL_MEM_WRITE_ONLY,
                          DROPIN(buffer_bytes)(DROPIN_UPPER(OUTPUT_BUFFER)), NULL, &err);
  if (err != CL_SUCCESS) goto cl_error;

  /* Once: the kernels that depend only on the constant inputs (none: nothing is enqueued). */
  if (prepare) {
    err = DROPIN(prepare_buffers)(handle, queue, inputs, events);
    if (err != CL_SUCCESS) goto cl_error;
    err = clFinish(queue);
    if (err != CL_SUCCESS) goto cl_error;
    prepare_ms = kernel_ms(events, DROPIN_UPPER(PREPARE_KERNEL_COUNT));
  }
  if (release_prepared) {
    for (i = 0; i < DROPIN_UPPER(INPUT_COUNT); ++i) {
      if (!DROPIN(run_reads)((dropin_buffer)i)) {
        fprintf(stderr, "released %s (only the preparation reads it)\n",
                DROPIN(buffer_name)((dropin_buffer)i));
        clReleaseMemObject(inputs[i]);
        inputs[i] = NULL;
      }
    }
  }

  for (i = 0; i < repeat; ++i) {
    err = DROPIN(run_buffers)(handle, queue, inputs, output, events);
    if (err != CL_SUCCESS) goto cl_error;
    err = clFinish(queue);
    if (err != CL_SUCCESS) goto cl_error;
    run_ms = kernel_ms(events, DROPIN_UPPER(RUN_KERNEL_COUNT));
    if (i + 1 == repeat) {
      fprintf(stderr, "run %d of %d: %.3f ms kernel time (%d kernels)\n", i + 1, repeat, run_ms,
              DROPIN_UPPER(RUN_KERNEL_COUNT));
    }
  }
  fprintf(stderr, "prepare %.3f ms (%d kernels, once), run %.3f ms (%d kernels, last of %d)\n",
          prepare_ms, DROPIN_UPPER(PREPARE_KERNEL_COUNT), run_ms, DROPIN_UPPER(RUN_KERNEL_COUNT),
          repeat);

  out_rank = DROPIN(buffer_shape)(DROPIN_UPPER(OUTPUT_BUFFER), out_dims);
  result = (float*)malloc(DROPIN(buffer_bytes)(DROPIN_UPPER(OUTPUT_BUFFER)));
  if (result == NULL) {
    fprintf(stderr, "out of memory\n");
    goto done;
  }
  err = clEnqueueReadBuffer(queue, output, CL_TRUE, 0,
                            DROPIN(buffer_bytes)(DROPIN_UPPER(OUTPUT_BUFFER)), result, 0, NULL,
                            NULL);
  if (err != CL_SUCCESS) goto cl_error;
  if (!npy_write(paths[DROPIN_UPPER(INPUT_COUNT)], result, out_dims, out_rank)) goto done;
  fprintf(stderr, "wrote %s, shape ", paths[DROPIN_UPPER(INPUT_COUNT)]);
  print_shape(stderr, out_dims, out_rank);
  fprintf(stderr, "\n");
  status = 0;
  goto done;

cl_error:
  fprintf(stderr, "OpenCL error %d (%s)\n", (int)err, DROPIN(error_name)(err));
done:
  free(result);
  for (i = 0; i < DROPIN_UPPER(INPUT_COUNT); ++i) {
    if (inputs[i] != NULL) clReleaseMemObject(inputs[i]);
  }
  if (output != NULL) clReleaseMemObject(output);
  DROPIN(destroy)(handle);
  if (queue != NULL) clReleaseCommandQueue(queue);
  if (context != NULL) clReleaseContext(context);
  return status;
}
