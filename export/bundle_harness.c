/* The generic measurement harness of a weft bundle (export/bundle_export.h): one C99 program,
 * with POSIX.1-2008 (fork, waitpid, poll, open_memstream), OpenCL 1.2 and libc only, so that
 * it builds on a board or phone weft does not run on. It reads the bundle's variants.txt,
 * generates the inputs from a fixed seed, runs the reference, then each variant in a child
 * process (build, warm-up, check against the reference, timed repeats with cl_event
 * profiling, a timeout) and rewrites results.json after every variant; a re-run skips the
 * variants already there.
 *
 * weft embeds this file at build time (export/embed_text.cmake) and writes it into every
 * bundle as harness.c: a comment naming the program and the compiler replaces this one, and
 * the cases of harness_error_name are generated at the marker below from weft's one table of
 * OpenCL error names (export/opencl_error_names.h). Everything else is written as it is here,
 * so this file compiles on its own too (tests/export/test_bundle_harness.cpp checks both).
 */
#define _POSIX_C_SOURCE 200809L
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifdef __APPLE__
#include <OpenCL/cl.h>
#else
#include <CL/cl.h>
#endif
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <time.h>
#include <unistd.h>

/* The name of an OpenCL error code. */
static const char* harness_error_name(cl_int code) {
  switch (code) {
    /* weft: a case for every OpenCL error name */
    default:
      return "an unknown OpenCL error";
  }
}


/* ---- the bundle description (variants.txt) ------------------------------------------------ */

#define HARNESS_MAX_REPEATS 10000
#define HARNESS_MESSAGE 8192

typedef struct {
  int kind; /* 0: buffer, 1: int, 2: local memory */
  long long value;
} harness_arg;

typedef struct {
  char name[256];
  cl_uint dims;
  size_t global[3];
  int has_local;
  size_t local[3];
  int nargs;
  harness_arg* args;
  /* A launch in parts (whole work-groups, then the rest with a global offset): nparts rows of
     offset, global and local sizes; 0 parts: one launch of global and local above. */
  int nparts;
  size_t (*parts)[3][3];
} harness_kernel;

typedef struct {
  int role; /* 0: input, 1: output, 2: temporary */
  int input;
  int is_float;
  size_t bytes;
  char name[256];
} harness_buffer;

typedef struct {
  char id[64];
  char file[512];
  char hash[64];
  long long space;
  char* key;     /* the recorded parameters (a JSON object), echoed into results.json */
  char* invalid; /* not NULL: code generation failed; the reason */
  int nbuffers;
  harness_buffer* buffers;
  int nkernels;
  harness_kernel* kernels;
  int output;
} harness_variant;

typedef struct {
  int is_float;
  size_t elements;
  char name[256];
  void* data;
} harness_input;

typedef struct {
  char* text; /* the file, split into lines in place */
  char* cursor;
  int line;
  char program[256];
  char* compiler;
  char* description;
  long long flops;
  double tolerance;
  unsigned long long data_seed;
  int min_repeats, max_repeats;
  double min_time_ms, timeout_s;
  char* build_options;
  int ninputs;
  harness_input* inputs;
  int output_is_float;
  size_t output_elements;
  harness_variant reference;
  int nvariants;
  harness_variant* variants;
} harness_bundle;

static void harness_die(const char* format, const char* text) {
  fprintf(stderr, "weft bundle harness: ");
  fprintf(stderr, format, text);
  fprintf(stderr, "\n");
  exit(1);
}

/* Copies `text` into `buffer` of `size` bytes, cut off when longer. */
static void harness_set(char* buffer, size_t size, const char* text) {
  size_t n = strlen(text);
  if (n >= size) n = size - 1;
  memcpy(buffer, text, n);
  buffer[n] = '\0';
}

static void* harness_alloc(size_t bytes) {
  void* memory = calloc(bytes > 0 ? bytes : 1, 1);
  if (memory == NULL) harness_die("%s", "out of memory");
  return memory;
}

static char* harness_copy(const char* text) {
  char* copy = (char*)harness_alloc(strlen(text) + 1);
  strcpy(copy, text);
  return copy;
}

/* A whole file as a NUL-terminated string (NULL when it cannot be read). */
static char* harness_read_file(const char* path, size_t* size_out) {
  FILE* file = fopen(path, "rb");
  char* text;
  size_t size = 0, capacity = 65536, got;
  if (file == NULL) return NULL;
  text = (char*)harness_alloc(capacity + 1);
  while ((got = fread(text + size, 1, capacity - size, file)) > 0) {
    size += got;
    if (size == capacity) {
      char* bigger;
      capacity *= 2;
      bigger = (char*)realloc(text, capacity + 1);
      if (bigger == NULL) harness_die("%s", "out of memory");
      text = bigger;
    }
  }
  fclose(file);
  text[size] = '\0';
  if (size_out != NULL) *size_out = size;
  return text;
}

/* The next line of the description (without its newline), NULL at the end. */
static char* harness_next_line(harness_bundle* b) {
  char* line = b->cursor;
  char* end;
  if (line == NULL || *line == '\0') return NULL;
  end = strchr(line, '\n');
  if (end != NULL) {
    *end = '\0';
    b->cursor = end + 1;
  } else {
    b->cursor = line + strlen(line);
  }
  if (end != line && line[strlen(line) - 1] == '\r') line[strlen(line) - 1] = '\0';
  b->line++;
  return line;
}

/* The next line, which must start with the word `word`; returns what follows it (after one
   space). */
static char* harness_expect(harness_bundle* b, const char* word) {
  char* line = harness_next_line(b);
  size_t n = strlen(word);
  static char where[512];
  if (line == NULL || strncmp(line, word, n) != 0 || (line[n] != ' ' && line[n] != '\0')) {
    snprintf(where, sizeof where, "variants.txt:%d: expected a line starting with '%s'",
             b->line, word);
    harness_die("%s", where);
  }
  return line[n] == ' ' ? line + n + 1 : line + n;
}

static void harness_bad(harness_bundle* b, const char* what) {
  char where[512];
  snprintf(where, sizeof where, "variants.txt:%d: %s", b->line, what);
  harness_die("%s", where);
}

static int harness_type(harness_bundle* b, const char* text) {
  if (strcmp(text, "float32") == 0) return 1;
  if (strcmp(text, "int32") == 0) return 0;
  harness_bad(b, "element type must be float32 or int32");
  return 0;
}

static void harness_read_variant(harness_bundle* b, harness_variant* v) {
  char* rest = harness_expect(b, "variant");
  char type[32], role[32];
  int i;
  if (sscanf(rest, "%63s %511s", v->id, v->file) != 2) harness_bad(b, "variant ID FILE");
  v->output = -1;
  if (sscanf(harness_expect(b, "hash"), "%63s", v->hash) != 1) v->hash[0] = '\0';
  if (sscanf(harness_expect(b, "space"), "%lld", &v->space) != 1) harness_bad(b, "space BYTES");
  v->key = harness_copy(harness_expect(b, "key"));
  if (b->cursor != NULL && strncmp(b->cursor, "invalid", 7) == 0) {
    v->invalid = harness_copy(harness_expect(b, "invalid"));
    harness_expect(b, "end");
    return;
  }
  if (sscanf(harness_expect(b, "buffers"), "%d", &v->nbuffers) != 1 || v->nbuffers < 1) {
    harness_bad(b, "buffers COUNT");
  }
  v->buffers = (harness_buffer*)harness_alloc(sizeof(harness_buffer) * (size_t)v->nbuffers);
  for (i = 0; i < v->nbuffers; ++i) {
    harness_buffer* buffer = &v->buffers[i];
    unsigned long long bytes = 0;
    if (sscanf(harness_expect(b, "buffer"), "%31s %d %31s %llu %255s", role, &buffer->input,
               type, &bytes, buffer->name) != 5) {
      harness_bad(b, "buffer ROLE INPUT TYPE BYTES NAME");
    }
    buffer->bytes = (size_t)bytes;
    buffer->is_float = harness_type(b, type);
    if (strcmp(role, "input") == 0) {
      buffer->role = 0;
      if (buffer->input < 0 || buffer->input >= b->ninputs) harness_bad(b, "no such input");
    } else if (strcmp(role, "output") == 0) {
      buffer->role = 1;
      v->output = i;
    } else if (strcmp(role, "temporary") == 0) {
      buffer->role = 2;
    } else {
      harness_bad(b, "buffer role must be input, output or temporary");
    }
  }
  if (v->output < 0) harness_bad(b, "the variant has no output buffer");
  if (sscanf(harness_expect(b, "kernels"), "%d", &v->nkernels) != 1 || v->nkernels < 1) {
    harness_bad(b, "kernels COUNT");
  }
  v->kernels = (harness_kernel*)harness_alloc(sizeof(harness_kernel) * (size_t)v->nkernels);
  for (i = 0; i < v->nkernels; ++i) {
    harness_kernel* k = &v->kernels[i];
    unsigned long long g[3], l[3];
    int j;
    if (sscanf(harness_expect(b, "kernel"), "%255s %u %llu %llu %llu %d %llu %llu %llu %d",
               k->name, &k->dims, &g[0], &g[1], &g[2], &k->has_local, &l[0], &l[1], &l[2],
               &k->nargs) != 10 ||
        k->dims < 1 || k->dims > 3 || k->nargs < 0) {
      harness_bad(b, "kernel NAME DIMS G0 G1 G2 HAS_LOCAL L0 L1 L2 NARGS");
    }
    for (j = 0; j < 3; ++j) {
      k->global[j] = (size_t)g[j];
      k->local[j] = (size_t)l[j];
    }
    if (sscanf(harness_expect(b, "parts"), "%d", &k->nparts) != 1 || k->nparts < 0 ||
        k->nparts > 8) {
      harness_bad(b, "parts COUNT (0 to 8)");
    }
    k->parts = (size_t(*)[3][3])harness_alloc(sizeof *k->parts * (size_t)(k->nparts + 1));
    for (j = 0; j < k->nparts; ++j) {
      unsigned long long p[9];
      int m;
      if (sscanf(harness_expect(b, "part"), "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &p[0],
                 &p[1], &p[2], &p[3], &p[4], &p[5], &p[6], &p[7], &p[8]) != 9) {
        harness_bad(b, "part O0 O1 O2 G0 G1 G2 L0 L1 L2");
      }
      for (m = 0; m < 9; ++m) k->parts[j][m / 3][m % 3] = (size_t)p[m];
    }
    k->args = (harness_arg*)harness_alloc(sizeof(harness_arg) * (size_t)(k->nargs + 1));
    for (j = 0; j < k->nargs; ++j) {
      char kind[32];
      if (sscanf(harness_expect(b, "arg"), "%31s %lld", kind, &k->args[j].value) != 2) {
        harness_bad(b, "arg KIND VALUE");
      }
      if (strcmp(kind, "buffer") == 0) {
        k->args[j].kind = 0;
        if (k->args[j].value < 0 || k->args[j].value >= v->nbuffers) harness_bad(b, "no such buffer");
      } else if (strcmp(kind, "int") == 0) {
        k->args[j].kind = 1;
      } else if (strcmp(kind, "local") == 0) {
        k->args[j].kind = 2;
      } else {
        harness_bad(b, "arg kind must be buffer, int or local");
      }
    }
  }
  harness_expect(b, "end");
}

static void harness_read_bundle(harness_bundle* b, const char* dir) {
  char path[4096];
  char type[32];
  int i, version = 0;
  memset(b, 0, sizeof *b);
  snprintf(path, sizeof path, "%s/variants.txt", dir);
  b->text = harness_read_file(path, NULL);
  if (b->text == NULL) {
    harness_die("cannot read %s (give the bundle folder as the first argument)", path);
  }
  b->cursor = b->text;
  if (sscanf(harness_expect(b, "weft-bundle"), "%d", &version) != 1 || version != 1) {
    harness_bad(b, "this harness reads version 1 of the bundle format");
  }
  if (sscanf(harness_expect(b, "program"), "%255s", b->program) != 1) harness_bad(b, "program NAME");
  b->compiler = harness_copy(harness_expect(b, "compiler"));
  b->description = harness_copy(harness_expect(b, "description"));
  if (sscanf(harness_expect(b, "flops"), "%lld", &b->flops) != 1) harness_bad(b, "flops N");
  if (sscanf(harness_expect(b, "tolerance"), "%lf", &b->tolerance) != 1) harness_bad(b, "tolerance X");
  if (sscanf(harness_expect(b, "data_seed"), "%llu", &b->data_seed) != 1) harness_bad(b, "data_seed N");
  if (sscanf(harness_expect(b, "min_repeats"), "%d", &b->min_repeats) != 1) harness_bad(b, "min_repeats N");
  if (sscanf(harness_expect(b, "max_repeats"), "%d", &b->max_repeats) != 1) harness_bad(b, "max_repeats N");
  if (sscanf(harness_expect(b, "min_time_ms"), "%lf", &b->min_time_ms) != 1) harness_bad(b, "min_time_ms X");
  if (sscanf(harness_expect(b, "timeout_s"), "%lf", &b->timeout_s) != 1) harness_bad(b, "timeout_s X");
  b->build_options = harness_copy(harness_expect(b, "build_options"));
  if (sscanf(harness_expect(b, "inputs"), "%d", &b->ninputs) != 1 || b->ninputs < 0) harness_bad(b, "inputs N");
  b->inputs = (harness_input*)harness_alloc(sizeof(harness_input) * (size_t)(b->ninputs + 1));
  for (i = 0; i < b->ninputs; ++i) {
    int index = -1;
    unsigned long long elements = 0;
    if (sscanf(harness_expect(b, "input"), "%d %31s %llu %255s", &index, type, &elements,
               b->inputs[i].name) != 4 || index != i) {
      harness_bad(b, "input INDEX TYPE ELEMENTS NAME (in order)");
    }
    b->inputs[i].is_float = harness_type(b, type);
    b->inputs[i].elements = (size_t)elements;
  }
  {
    unsigned long long elements = 0;
    if (sscanf(harness_expect(b, "output"), "%31s %llu", type, &elements) != 2) {
      harness_bad(b, "output TYPE ELEMENTS");
    }
    b->output_is_float = harness_type(b, type);
    b->output_elements = (size_t)elements;
  }
  if (sscanf(harness_expect(b, "variants"), "%d", &b->nvariants) != 1 || b->nvariants < 0) {
    harness_bad(b, "variants N");
  }
  harness_read_variant(b, &b->reference);
  if (b->reference.invalid != NULL) harness_die("%s", "the reference program is marked invalid");
  b->variants = (harness_variant*)harness_alloc(sizeof(harness_variant) * (size_t)(b->nvariants + 1));
  for (i = 0; i < b->nvariants; ++i) harness_read_variant(b, &b->variants[i]);
}

/* ---- inputs ----------------------------------------------------------------------------------- */

/* SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014). */
static unsigned long long harness_next_random(unsigned long long* state) {
  unsigned long long z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Floats uniform in [-1, 1), ints in [-5, 5], one stream per input from the data seed. */
static void harness_make_inputs(harness_bundle* b) {
  int i;
  for (i = 0; i < b->ninputs; ++i) {
    harness_input* input = &b->inputs[i];
    unsigned long long state = b->data_seed * 1000003ull + (unsigned long long)i;
    size_t e;
    input->data = harness_alloc(4 * (input->elements > 0 ? input->elements : 1));
    for (e = 0; e < input->elements; ++e) {
      unsigned long long r = harness_next_random(&state);
      if (input->is_float) {
        ((float*)input->data)[e] = (float)((double)(r >> 40) / 16777216.0 * 2.0 - 1.0);
      } else {
        ((int*)input->data)[e] = (int)((r >> 33) % 11) - 5;
      }
    }
  }
}

/* ---- the device (children only: the parent never calls OpenCL) ---------------------------- */

typedef struct {
  cl_platform_id platform;
  cl_device_id device;
  char name[1024], vendor[1024], driver[1024], platform_version[1024], device_version[1024],
      platform_name[1024], compute_units[32], host_processor[1024];
} harness_device;

/* The device facts the results record: name, vendor, driver version, platform version, device
   version, platform name, compute units (a decimal number) and, for a CPU device, the host
   processor. */
#define HARNESS_DEVICE_FIELDS 8

/* White space (blank, tab, carriage return) off both ends of `text`, in place. */
static char* harness_trim(char* text) {
  size_t n;
  while (*text == ' ' || *text == '\t' || *text == '\r') ++text;
  n = strlen(text);
  while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t' || text[n - 1] == '\r' ||
                   text[n - 1] == '\n')) {
    text[--n] = '\0';
  }
  return text;
}

/* The processor behind a CPU device, named from Linux's /proc/cpuinfo by the rules of weft's
   host::hostProcessorFromCpuinfo (host/device_profile.h), so that weft import computes the
   fingerprint a local exploration records: "VENDOR family F model M" (x86), "implementer I
   part P" (Arm), else "". Each field is its first line's value. */
static void harness_host_processor(char* out, size_t size) {
  static const char* keys[5] = {"vendor_id", "cpu family", "model", "CPU implementer", "CPU part"};
  char values[5][256];
  char line[4096];
  int at_line_start = 1, k;
  FILE* in = fopen("/proc/cpuinfo", "r");
  out[0] = '\0';
  if (in == NULL) return;
  for (k = 0; k < 5; ++k) values[k][0] = '\0';
  while (fgets(line, sizeof line, in) != NULL) {
    int starts_line = at_line_start;
    char* colon;
    at_line_start = strchr(line, '\n') != NULL;
    if (!starts_line) continue; /* the rest of a line longer than the buffer (flags) */
    colon = strchr(line, ':');
    if (colon == NULL) continue;
    *colon = '\0';
    for (k = 0; k < 5; ++k) {
      if (values[k][0] == '\0' && strcmp(harness_trim(line), keys[k]) == 0) {
        harness_set(values[k], sizeof values[k], harness_trim(colon + 1));
      }
    }
  }
  fclose(in);
  if (values[0][0] && values[1][0] && values[2][0]) {
    snprintf(out, size, "%s family %s model %s", values[0], values[1], values[2]);
  } else if (values[3][0] && values[4][0]) {
    snprintf(out, size, "implementer %s part %s", values[3], values[4]);
  }
}

static void harness_lower(char* text) {
  for (; *text; ++text) *text = (char)tolower((unsigned char)*text);
}

static int harness_contains(const char* text, const char* part) {
  char a[1024], b[1024];
  harness_set(a, sizeof a, text);
  harness_set(b, sizeof b, part);
  harness_lower(a);
  harness_lower(b);
  return strstr(a, b) != NULL;
}

static void harness_device_strings(harness_device* d) {
  d->name[0] = d->vendor[0] = d->driver[0] = d->platform_version[0] = d->device_version[0] =
      d->platform_name[0] = '\0';
  clGetDeviceInfo(d->device, CL_DEVICE_NAME, sizeof d->name - 1, d->name, NULL);
  clGetDeviceInfo(d->device, CL_DEVICE_VENDOR, sizeof d->vendor - 1, d->vendor, NULL);
  clGetDeviceInfo(d->device, CL_DRIVER_VERSION, sizeof d->driver - 1, d->driver, NULL);
  clGetDeviceInfo(d->device, CL_DEVICE_VERSION, sizeof d->device_version - 1, d->device_version,
                  NULL);
  clGetPlatformInfo(d->platform, CL_PLATFORM_VERSION, sizeof d->platform_version - 1,
                    d->platform_version, NULL);
  clGetPlatformInfo(d->platform, CL_PLATFORM_NAME, sizeof d->platform_name - 1, d->platform_name,
                    NULL);
  {
    cl_uint units = 0;
    cl_device_type type = 0;
    clGetDeviceInfo(d->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    clGetDeviceInfo(d->device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    snprintf(d->compute_units, sizeof d->compute_units, "%u", (unsigned)units);
    d->host_processor[0] = '\0';
    if (type & CL_DEVICE_TYPE_CPU)
      harness_host_processor(d->host_processor, sizeof d->host_processor);
  }
}

/* The device: the one whose index (counted over every platform) is `wanted`, or whose device,
   vendor or platform name contains it; with no `wanted`, the first GPU, else the first
   device. Returns 0 and a message in `why` when there is none. */
static int harness_select_device(const char* wanted, harness_device* out, char* why, size_t n) {
  cl_platform_id platforms[16];
  cl_uint nplatforms = 0, p;
  int index = 0, found = 0, found_gpu = 0;
  cl_int err = clGetPlatformIDs(16, platforms, &nplatforms);
  if (err != CL_SUCCESS || nplatforms == 0) {
    snprintf(why, n, "no OpenCL platform (%s)", harness_error_name(err));
    return 0;
  }
  for (p = 0; p < nplatforms && p < 16; ++p) {
    cl_device_id devices[64];
    cl_uint ndevices = 0, d;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 64, devices, &ndevices) != CL_SUCCESS) {
      continue;
    }
    for (d = 0; d < ndevices && d < 64; ++d, ++index) {
      harness_device candidate;
      cl_device_type type = 0;
      char number[32];
      candidate.platform = platforms[p];
      candidate.device = devices[d];
      harness_device_strings(&candidate);
      clGetDeviceInfo(devices[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
      snprintf(number, sizeof number, "%d", index);
      if (wanted != NULL && wanted[0] != '\0') {
        if (!found && (strcmp(wanted, number) == 0 || harness_contains(candidate.name, wanted) ||
                       harness_contains(candidate.vendor, wanted) ||
                       harness_contains(candidate.platform_name, wanted))) {
          *out = candidate;
          found = 1;
        }
      } else if (!found || (!found_gpu && (type & CL_DEVICE_TYPE_GPU))) {
        *out = candidate;
        found = 1;
        found_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
      }
    }
  }
  if (!found) {
    snprintf(why, n, "no OpenCL device matches '%s'", wanted != NULL ? wanted : "");
    return 0;
  }
  return 1;
}

/* ---- measuring one program (in a child) ------------------------------------------------------ */

typedef struct {
  const char* status;
  char message[HARNESS_MESSAGE];
  double build_ms;
  unsigned long long warm_ns;
  int nsamples;
  unsigned long long samples[HARNESS_MAX_REPEATS];
  unsigned long long median;
  double max_error, allowed;
  unsigned long long* kernel_ns; /* fastest per kernel */
} harness_outcome;

static double harness_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int harness_compare_ull(const void* a, const void* b) {
  unsigned long long x = *(const unsigned long long*)a, y = *(const unsigned long long*)b;
  return x < y ? -1 : x > y ? 1 : 0;
}

/* The median as weft computes it: the middle value, or the mean of the two middle ones. */
static unsigned long long harness_median(const unsigned long long* samples, int n) {
  unsigned long long sorted[HARNESS_MAX_REPEATS];
  if (n <= 0) return 0;
  memcpy(sorted, samples, sizeof(unsigned long long) * (size_t)n);
  qsort(sorted, (size_t)n, sizeof sorted[0], harness_compare_ull);
  if (n % 2 == 1) return sorted[n / 2];
  return (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

typedef struct {
  cl_context context;
  cl_command_queue queue;
  cl_program program;
  cl_kernel* kernels;
  cl_mem* buffers;
  void* zeros;
} harness_run_state;

/* One run: output and temporaries zero-filled, the kernels in order (a kernel in parts, its
   parts in order); the sum of their cl_event times in *ns, each kernel's in kernel_ns. */
static cl_int harness_run_once(const harness_variant* v, harness_run_state* s,
                               unsigned long long* ns, unsigned long long* kernel_ns,
                               harness_outcome* out) {
  int i;
  cl_int err;
  *ns = 0;
  for (i = 0; i < v->nbuffers; ++i) {
    if (v->buffers[i].role == 0) continue;
    err = clEnqueueWriteBuffer(s->queue, s->buffers[i], CL_FALSE, 0, v->buffers[i].bytes, s->zeros,
                               0, NULL, NULL);
    if (err != CL_SUCCESS) {
      snprintf(out->message, sizeof out->message, "zero-filling buffer %s: %s",
               v->buffers[i].name, harness_error_name(err));
      return err;
    }
  }
  for (i = 0; i < v->nkernels; ++i) {
    const harness_kernel* k = &v->kernels[i];
    int part, nparts = k->nparts > 0 ? k->nparts : 1;
    kernel_ns[i] = 0;
    for (part = 0; part < nparts; ++part) {
      cl_event event;
      cl_ulong start = 0, end = 0;
      if (k->nparts > 0) {
        err = clEnqueueNDRangeKernel(s->queue, s->kernels[i], k->dims, k->parts[part][0],
                                     k->parts[part][1], k->parts[part][2], 0, NULL, &event);
      } else {
        err = clEnqueueNDRangeKernel(s->queue, s->kernels[i], k->dims, NULL, k->global,
                                     k->has_local ? k->local : NULL, 0, NULL, &event);
      }
      if (err == CL_SUCCESS) err = clWaitForEvents(1, &event);
      if (err != CL_SUCCESS) {
        snprintf(out->message, sizeof out->message, "launching kernel %s: %s", k->name,
                 harness_error_name(err));
        return err;
      }
      err = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
      if (err == CL_SUCCESS) {
        err = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
      }
      clReleaseEvent(event);
      if (err != CL_SUCCESS) {
        snprintf(out->message, sizeof out->message, "timing kernel %s: %s", k->name,
                 harness_error_name(err));
        return err;
      }
      kernel_ns[i] += end > start ? (unsigned long long)(end - start) : 0;
    }
    *ns += kernel_ns[i];
  }
  return CL_SUCCESS;
}

/* Builds, runs once (warm-up; the output goes to `output`), compares with `expected` when it
   is given, then times repeats. Every failure becomes a status and a message. */
static void harness_measure(const harness_bundle* b, const harness_variant* v,
                            const harness_device* d, const char* dir, float* output,
                            const float* expected, harness_outcome* out) {
  harness_run_state s;
  char path[4096];
  char* source;
  size_t source_size = 0, zero_bytes = 1;
  cl_int err = CL_SUCCESS;
  int i, j;
  unsigned long long* run_kernel_ns;
  double total_ns = 0;
  double started;

  memset(&s, 0, sizeof s);
  out->status = "launch_error";
  out->message[0] = '\0';
  out->kernel_ns = (unsigned long long*)harness_alloc(sizeof(unsigned long long) * (size_t)v->nkernels);
  run_kernel_ns = (unsigned long long*)harness_alloc(sizeof(unsigned long long) * (size_t)v->nkernels);
  snprintf(path, sizeof path, "%s/%s", dir, v->file);
  source = harness_read_file(path, &source_size);
  if (source == NULL) {
    out->status = "build_error";
    snprintf(out->message, sizeof out->message, "cannot read %s", path);
    return;
  }
  s.context = clCreateContext(NULL, 1, &d->device, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    snprintf(out->message, sizeof out->message, "clCreateContext: %s", harness_error_name(err));
    return;
  }
  s.queue = clCreateCommandQueue(s.context, d->device, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) {
    snprintf(out->message, sizeof out->message, "clCreateCommandQueue: %s",
             harness_error_name(err));
    return;
  }
  {
    const char* sources[1];
    sources[0] = source;
    s.program = clCreateProgramWithSource(s.context, 1, sources, &source_size, &err);
  }
  if (err != CL_SUCCESS) {
    out->status = "build_error";
    snprintf(out->message, sizeof out->message, "clCreateProgramWithSource: %s",
             harness_error_name(err));
    return;
  }
  started = harness_now_ms();
  err = clBuildProgram(s.program, 1, &d->device, b->build_options, NULL, NULL);
  out->build_ms = harness_now_ms() - started;
  if (err != CL_SUCCESS) {
    size_t log_size = 0;
    char* log;
    clGetProgramBuildInfo(s.program, d->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size);
    log = (char*)harness_alloc(log_size + 1);
    clGetProgramBuildInfo(s.program, d->device, CL_PROGRAM_BUILD_LOG, log_size, log, NULL);
    out->status = "build_error";
    snprintf(out->message, sizeof out->message, "clBuildProgram: %s\n%s", harness_error_name(err),
             log);
    return;
  }
  s.kernels = (cl_kernel*)harness_alloc(sizeof(cl_kernel) * (size_t)v->nkernels);
  for (i = 0; i < v->nkernels; ++i) {
    s.kernels[i] = clCreateKernel(s.program, v->kernels[i].name, &err);
    if (err != CL_SUCCESS) {
      out->status = "build_error";
      snprintf(out->message, sizeof out->message, "clCreateKernel(%s): %s", v->kernels[i].name,
               harness_error_name(err));
      return;
    }
  }
  s.buffers = (cl_mem*)harness_alloc(sizeof(cl_mem) * (size_t)v->nbuffers);
  for (i = 0; i < v->nbuffers; ++i) {
    const harness_buffer* buffer = &v->buffers[i];
    if (buffer->role == 0) {
      const harness_input* input = &b->inputs[buffer->input];
      size_t expected_bytes = 4 * (input->elements > 0 ? input->elements : 1);
      if (buffer->bytes != expected_bytes) {
        snprintf(out->message, sizeof out->message,
                 "buffer %s has %lu bytes, input %s has %lu (an inconsistent bundle)",
                 buffer->name, (unsigned long)buffer->bytes, input->name,
                 (unsigned long)expected_bytes);
        return;
      }
      s.buffers[i] = clCreateBuffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                    buffer->bytes, input->data, &err);
    } else {
      if (buffer->bytes > zero_bytes) zero_bytes = buffer->bytes;
      s.buffers[i] = clCreateBuffer(s.context, CL_MEM_READ_WRITE, buffer->bytes, NULL, &err);
    }
    if (err != CL_SUCCESS) {
      snprintf(out->message, sizeof out->message, "clCreateBuffer(%s, %lu bytes): %s",
               buffer->name, (unsigned long)buffer->bytes, harness_error_name(err));
      return;
    }
  }
  if (v->buffers[v->output].bytes < 4 * b->output_elements) {
    snprintf(out->message, sizeof out->message, "the output buffer is smaller than the output");
    return;
  }
  s.zeros = harness_alloc(zero_bytes);
  for (i = 0; i < v->nkernels; ++i) {
    const harness_kernel* k = &v->kernels[i];
    for (j = 0; j < k->nargs; ++j) {
      const harness_arg* arg = &k->args[j];
      if (arg->kind == 0) {
        err = clSetKernelArg(s.kernels[i], (cl_uint)j, sizeof(cl_mem), &s.buffers[arg->value]);
      } else if (arg->kind == 1) {
        cl_int value = (cl_int)arg->value;
        err = clSetKernelArg(s.kernels[i], (cl_uint)j, sizeof value, &value);
      } else {
        err = clSetKernelArg(s.kernels[i], (cl_uint)j, (size_t)arg->value, NULL);
      }
      if (err != CL_SUCCESS) {
        snprintf(out->message, sizeof out->message, "clSetKernelArg(%s, %d): %s", k->name, j,
                 harness_error_name(err));
        return;
      }
    }
  }

  /* Warm-up, then the check against the reference. */
  if (harness_run_once(v, &s, &out->warm_ns, run_kernel_ns, out) != CL_SUCCESS) return;
  err = clEnqueueReadBuffer(s.queue, s.buffers[v->output], CL_TRUE, 0, 4 * b->output_elements,
                            output, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    snprintf(out->message, sizeof out->message, "reading the output: %s", harness_error_name(err));
    return;
  }
  if (!b->output_is_float) {
    size_t e;
    for (e = 0; e < b->output_elements; ++e) output[e] = (float)((const int*)output)[e];
  }
  if (expected != NULL) {
    /* |out - ref| <= tolerance * max(max |ref|, 1) everywhere; NaN never passes. */
    double largest = 1.0, worst = 0.0;
    size_t e, bad = (size_t)-1;
    for (e = 0; e < b->output_elements; ++e) {
      double r = fabs((double)expected[e]);
      if (r > largest) largest = r;
    }
    out->allowed = b->tolerance * largest;
    for (e = 0; e < b->output_elements; ++e) {
      double diff = fabs((double)output[e] - (double)expected[e]);
      if (diff != diff) diff = HUGE_VAL;
      if (diff > worst) worst = diff;
      if (!(diff <= out->allowed) && bad == (size_t)-1) bad = e;
    }
    out->max_error = worst;
    if (bad != (size_t)-1) {
      out->status = "wrong_answer";
      snprintf(out->message, sizeof out->message,
               "output element %lu is %g, the reference has %g (allowed difference %g)",
               (unsigned long)bad, (double)output[bad], (double)expected[bad], out->allowed);
      return;
    }
  }

  /* Timed runs: at least min_repeats and min_time_ms of kernel time, at most max_repeats. */
  for (i = 0; i < v->nkernels; ++i) out->kernel_ns[i] = (unsigned long long)-1;
  out->nsamples = 0;
  while (out->nsamples < b->max_repeats && out->nsamples < HARNESS_MAX_REPEATS &&
         (out->nsamples < b->min_repeats || total_ns < b->min_time_ms * 1e6)) {
    unsigned long long ns = 0;
    if (harness_run_once(v, &s, &ns, run_kernel_ns, out) != CL_SUCCESS) return;
    out->samples[out->nsamples++] = ns;
    total_ns += (double)ns;
    for (i = 0; i < v->nkernels; ++i) {
      if (run_kernel_ns[i] < out->kernel_ns[i]) out->kernel_ns[i] = run_kernel_ns[i];
    }
  }
  if (out->nsamples == 0) {
    for (i = 0; i < v->nkernels; ++i) out->kernel_ns[i] = run_kernel_ns[i];
  }
  out->median = harness_median(out->samples, out->nsamples);
  out->status = "ok";
}

/* ---- children and their reports ----------------------------------------------------------- */

static void harness_write_all(int fd, const void* data, size_t size) {
  const char* bytes = (const char*)data;
  while (size > 0) {
    ssize_t n = write(fd, bytes, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    bytes += n;
    size -= (size_t)n;
  }
}

static void harness_write_text(int fd, const char* text) { harness_write_all(fd, text, strlen(text)); }

/* A line "KEY VALUE\n" with newlines in VALUE made spaces. */
static void harness_write_field(int fd, const char* key, const char* value) {
  char line[2048];
  char* c;
  snprintf(line, sizeof line, "%s %s", key, value);
  for (c = line; *c; ++c) {
    if (*c == '\n' || *c == '\r') *c = ' ';
  }
  harness_write_text(fd, line);
  harness_write_text(fd, "\n");
}

/* The child's report: the outcome as lines, the message as counted bytes, then `extra` bytes
   (the reference's output), then "done". */
static void harness_report(int fd, const harness_variant* v, const harness_outcome* o,
                           const void* extra, size_t extra_bytes) {
  char line[512];
  int i;
  harness_write_field(fd, "status", o->status);
  snprintf(line, sizeof line, "build_ms %.6f\nwarm_ns %llu\nmedian %llu\n", o->build_ms, o->warm_ns,
           o->median);
  harness_write_text(fd, line);
  snprintf(line, sizeof line, "max_error %.9g\nallowed %.9g\nsamples %d", o->max_error, o->allowed,
           o->nsamples);
  harness_write_text(fd, line);
  for (i = 0; i < o->nsamples; ++i) {
    snprintf(line, sizeof line, " %llu", o->samples[i]);
    harness_write_text(fd, line);
  }
  harness_write_text(fd, "\n");
  if (strcmp(o->status, "ok") == 0) {
    for (i = 0; i < v->nkernels; ++i) {
      snprintf(line, sizeof line, "kernel %s %llu\n", v->kernels[i].name, o->kernel_ns[i]);
      harness_write_text(fd, line);
    }
  }
  snprintf(line, sizeof line, "message %lu\n", (unsigned long)strlen(o->message));
  harness_write_text(fd, line);
  harness_write_text(fd, o->message);
  snprintf(line, sizeof line, "\nextra %lu\n", (unsigned long)extra_bytes);
  harness_write_text(fd, line);
  if (extra_bytes > 0) harness_write_all(fd, extra, extra_bytes);
  harness_write_text(fd, "\ndone\n");
}

typedef struct {
  char* data;
  size_t size;
  int timed_out;
  int signaled;
  int signal;
  int exit_code;
  double seconds;
} harness_child;

/* Runs body(fd, context) in a forked child writing to a pipe; the parent reads everything, and
   kills the child (SIGKILL) when `timeout_s` passes. On Linux (Android included) the child also
   dies with the harness: a harness killed from outside leaves no kernel running or hanging. */
static harness_child harness_run_child(void (*body)(int, void*), void* context, double timeout_s) {
  harness_child result;
  int fds[2];
  pid_t pid;
  size_t capacity = 65536;
  double started = harness_now_ms();
  int status = 0;
#ifdef __linux__
  pid_t parent = getpid();
#endif
  memset(&result, 0, sizeof result);
  result.data = (char*)harness_alloc(capacity + 1);
  if (pipe(fds) != 0) harness_die("pipe: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid < 0) harness_die("fork: %s", strerror(errno));
  if (pid == 0) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1); /* the harness died before prctl */
#endif
    close(fds[0]);
    signal(SIGPIPE, SIG_IGN);
    body(fds[1], context);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  for (;;) {
    struct pollfd poller;
    double left = timeout_s * 1e3 - (harness_now_ms() - started);
    int ready;
    ssize_t n;
    if (left <= 0) {
      result.timed_out = 1;
      kill(pid, SIGKILL);
      break;
    }
    poller.fd = fds[0];
    poller.events = POLLIN;
    poller.revents = 0;
    ready = poll(&poller, 1, left > 60000 ? 60000 : (int)left + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      kill(pid, SIGKILL);
      break;
    }
    if (ready == 0) continue;
    if (result.size == capacity) {
      char* bigger;
      capacity *= 2;
      bigger = (char*)realloc(result.data, capacity + 1);
      if (bigger == NULL) harness_die("%s", "out of memory");
      result.data = bigger;
    }
    n = read(fds[0], result.data + result.size, capacity - result.size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.size += (size_t)n;
  }
  close(fds[0]);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status) && !result.timed_out) {
    result.signaled = 1;
    result.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  result.data[result.size] = '\0';
  result.seconds = (harness_now_ms() - started) * 1e-3;
  return result;
}

/* A parsed report. */
typedef struct {
  int complete; /* "done" was seen */
  char status[64];
  double build_ms;
  unsigned long long warm_ns, median;
  double max_error, allowed;
  int nsamples;
  unsigned long long samples[HARNESS_MAX_REPEATS];
  char kernels[8192]; /* JSON array text */
  char* message;
  const char* extra;
  size_t extra_bytes;
  char device[HARNESS_DEVICE_FIELDS][1024]; /* as harness_device's strings */
} harness_report_data;

static void harness_parse_report(const harness_child* child, harness_report_data* r) {
  const char* at = child->data;
  const char* end = child->data + child->size;
  static const char* device_keys[HARNESS_DEVICE_FIELDS] = {
      "device_name",    "device_vendor", "driver_version", "platform_version",
      "device_version", "platform_name", "compute_units",  "host_processor"};
  memset(r, 0, sizeof *r);
  strcpy(r->kernels, "[");
  r->message = harness_copy("");
  while (at < end) {
    const char* newline = (const char*)memchr(at, '\n', (size_t)(end - at));
    char line[2048];
    size_t length;
    int k;
    if (newline == NULL) break;
    length = (size_t)(newline - at);
    if (length >= sizeof line) length = sizeof line - 1;
    memcpy(line, at, length);
    line[length] = '\0';
    at = newline + 1;
    for (k = 0; k < HARNESS_DEVICE_FIELDS; ++k) {
      size_t n = strlen(device_keys[k]);
      if (strncmp(line, device_keys[k], n) == 0 && line[n] == ' ') {
        harness_set(r->device[k], sizeof r->device[k], line + n + 1);
      }
    }
    if (strncmp(line, "status ", 7) == 0) {
      harness_set(r->status, sizeof r->status, line + 7);
    } else if (strncmp(line, "build_ms ", 9) == 0) {
      r->build_ms = atof(line + 9);
    } else if (strncmp(line, "warm_ns ", 8) == 0) {
      r->warm_ns = strtoull(line + 8, NULL, 10);
    } else if (strncmp(line, "median ", 7) == 0) {
      r->median = strtoull(line + 7, NULL, 10);
    } else if (strncmp(line, "max_error ", 10) == 0) {
      r->max_error = atof(line + 10);
    } else if (strncmp(line, "allowed ", 8) == 0) {
      r->allowed = atof(line + 8);
    } else if (strncmp(line, "samples ", 8) == 0) {
      char* cursor = line + 8;
      int n = (int)strtol(cursor, &cursor, 10), i;
      for (i = 0; i < n && i < HARNESS_MAX_REPEATS; ++i) {
        r->samples[i] = strtoull(cursor, &cursor, 10);
      }
      r->nsamples = i;
    } else if (strncmp(line, "kernel ", 7) == 0) {
      char name[256];
      unsigned long long ns = 0;
      if (sscanf(line + 7, "%255s %llu", name, &ns) == 2 &&
          strlen(r->kernels) + strlen(name) + 64 < sizeof r->kernels) {
        char item[512];
        snprintf(item, sizeof item, "%s{\"name\": \"%s\", \"ns\": %llu}",
                 strlen(r->kernels) > 1 ? ", " : "", name, ns);
        strcat(r->kernels, item);
      }
    } else if (strncmp(line, "message ", 8) == 0 || strncmp(line, "extra ", 6) == 0) {
      int is_message = line[0] == 'm';
      size_t n = (size_t)strtoul(line + (is_message ? 8 : 6), NULL, 10);
      if (n > (size_t)(end - at)) n = (size_t)(end - at);
      if (is_message) {
        free(r->message);
        r->message = (char*)harness_alloc(n + 1);
        memcpy(r->message, at, n);
        r->message[n] = '\0';
      } else {
        r->extra = at;
        r->extra_bytes = n;
      }
      at += n;
      if (at < end && *at == '\n') ++at;
    } else if (strcmp(line, "done") == 0) {
      r->complete = 1;
    }
  }
  strcat(r->kernels, "]");
}

/* ---- results.json ------------------------------------------------------------------------------ */

/* A JSON string: quotes, backslashes and bytes outside printable ASCII escaped. */
static void harness_json_string(FILE* out, const char* text) {
  fputc('"', out);
  for (; *text; ++text) {
    unsigned char c = (unsigned char)*text;
    if (c == '"' || c == '\\') {
      fputc('\\', out);
      fputc(c, out);
    } else if (c == '\n') {
      fputs("\\n", out);
    } else if (c == '\t') {
      fputs("\\t", out);
    } else if (c < 0x20 || c >= 0x7f) {
      fprintf(out, "\\u%04x", c);
    } else {
      fputc(c, out);
    }
  }
  fputc('"', out);
}

static void harness_json_number(FILE* out, double value) {
  if (value != value || value > 1e300 || value < -1e300) {
    fputs("-1", out);
  } else {
    fprintf(out, "%.9g", value);
  }
}

/* A variant's result as one line of JSON text (malloc'ed). */
static char* harness_result_line(const harness_variant* v, const harness_report_data* r,
                                 double seconds) {
  char* text = NULL;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  int ok = strcmp(r->status, "ok") == 0, i;
  if (out == NULL) harness_die("%s", "open_memstream failed");
  fputs("{\"id\": ", out);
  harness_json_string(out, v->id);
  fputs(", \"status\": ", out);
  harness_json_string(out, r->status);
  fputs(", \"medianNs\": ", out);
  if (ok) {
    fprintf(out, "%llu", r->median);
  } else {
    fputs("null", out);
  }
  fputs(", \"samples\": [", out);
  for (i = 0; i < r->nsamples; ++i) fprintf(out, "%s%llu", i ? ", " : "", r->samples[i]);
  fputs("], \"maxError\": ", out);
  harness_json_number(out, r->max_error);
  fputs(", \"allowedError\": ", out);
  harness_json_number(out, r->allowed);
  fputs(", \"buildMs\": ", out);
  if (r->build_ms > 0) {
    harness_json_number(out, r->build_ms);
  } else {
    fputs("null", out);
  }
  fprintf(out, ", \"warmUpNs\": %llu, \"kernels\": %s, \"spaceBytes\": %lld, \"sourceHash\": ",
          r->warm_ns, ok ? r->kernels : "[]", v->space);
  harness_json_string(out, v->hash);
  fprintf(out, ", \"parameters\": %s, \"seconds\": ", v->key);
  harness_json_number(out, seconds);
  fputs(", \"message\": ", out);
  harness_json_string(out, r->message);
  fputs("}", out);
  fclose(out);
  return text;
}

typedef struct {
  const harness_bundle* bundle;
  const char* results_path;
  char device[HARNESS_DEVICE_FIELDS][1024];
  char* reference_line;
  char** lines; /* per variant, NULL when not done */
} harness_results;

static void harness_write_results(const harness_results* r) {
  char temporary[4096];
  FILE* out;
  int i, first = 1;
  static const char* keys[HARNESS_DEVICE_FIELDS] = {
      "name",          "vendor",       "driverVersion", "platformVersion",
      "deviceVersion", "platformName", "computeUnits",  "hostProcessor"};
  snprintf(temporary, sizeof temporary, "%s.tmp", r->results_path);
  out = fopen(temporary, "w");
  if (out == NULL) harness_die("cannot write %s", temporary);
  fputs("{\n\"format\": \"weft-bundle-results 1\",\n\"program\": ", out);
  harness_json_string(out, r->bundle->program);
  fputs(",\n\"compiler\": ", out);
  harness_json_string(out, r->bundle->compiler);
  fputs(",\n\"description\": ", out);
  harness_json_string(out, r->bundle->description);
  fprintf(out, ",\n\"flops\": %lld,\n\"tolerance\": ", r->bundle->flops);
  harness_json_number(out, r->bundle->tolerance);
  fputs(",\n\"device\": {", out);
  for (i = 0; i < HARNESS_DEVICE_FIELDS; ++i) {
    fprintf(out, "%s\"%s\": ", i ? ", " : "", keys[i]);
    if (strcmp(keys[i], "computeUnits") == 0) {
      fprintf(out, "%d", atoi(r->device[i]));
    } else {
      harness_json_string(out, r->device[i]);
    }
  }
  fprintf(out, "},\n\"reference\": %s,\n\"variants\": [\n",
          r->reference_line != NULL ? r->reference_line : "null");
  for (i = 0; i < r->bundle->nvariants; ++i) {
    if (r->lines[i] == NULL) continue;
    fprintf(out, "%s%s", first ? "" : ",\n", r->lines[i]);
    first = 0;
  }
  fputs("\n]\n}\n", out);
  if (fflush(out) != 0 || fsync(fileno(out)) != 0 || fclose(out) != 0) {
    harness_die("cannot write %s", temporary);
  }
  if (rename(temporary, r->results_path) != 0) harness_die("cannot replace %s", r->results_path);
}

/* The value of "KEY": "..." in `text` (unescaped only as far as the harness escapes). */
static void harness_json_field(const char* text, const char* key, char* value, size_t n) {
  char pattern[128];
  const char* at;
  size_t used = 0;
  value[0] = '\0';
  snprintf(pattern, sizeof pattern, "\"%s\": \"", key);
  at = strstr(text, pattern);
  if (at == NULL) {
    /* A number: its digits. */
    snprintf(pattern, sizeof pattern, "\"%s\": ", key);
    at = strstr(text, pattern);
    if (at == NULL) return;
    at += strlen(pattern);
    while (isdigit((unsigned char)*at) && used + 1 < n) value[used++] = *at++;
    value[used] = '\0';
    return;
  }
  at += strlen(pattern);
  while (*at && *at != '"' && used + 1 < n) {
    if (*at == '\\' && at[1] != '\0') {
      ++at;
      if (*at == 'u' && strlen(at) >= 5) {
        char hex[5];
        memcpy(hex, at + 1, 4);
        hex[4] = '\0';
        value[used++] = (char)strtol(hex, NULL, 16);
        at += 5;
        continue;
      }
      value[used++] = *at == 'n' ? '\n' : *at == 't' ? '\t' : *at;
      ++at;
      continue;
    }
    value[used++] = *at++;
  }
  value[used] = '\0';
}

/* What an earlier run wrote: the results of variants already done (kept verbatim) and the
   device they were measured on. Returns 0 when there is no earlier file. */
static int harness_load_results(harness_results* r, char device[HARNESS_DEVICE_FIELDS][1024]) {
  char* text = harness_read_file(r->results_path, NULL);
  char* line;
  static const char* keys[HARNESS_DEVICE_FIELDS] = {
      "name",          "vendor",       "driverVersion", "platformVersion",
      "deviceVersion", "platformName", "computeUnits",  "hostProcessor"};
  int k;
  if (text == NULL) return 0;
  {
    const char* block = strstr(text, "\"device\": {");
    char* copy;
    char* close;
    if (block == NULL) harness_die("%s: not a results file of this harness (move it away)", r->results_path);
    copy = harness_copy(block);
    close = strchr(copy, '}');
    if (close != NULL) *close = '\0';
    for (k = 0; k < HARNESS_DEVICE_FIELDS; ++k) harness_json_field(copy, keys[k], device[k], 1024);
    free(copy);
  }
  line = strtok(text, "\n");
  while (line != NULL) {
    if (strncmp(line, "{\"id\": \"", 8) == 0) {
      char id[64];
      int i;
      harness_json_field(line, "id", id, sizeof id);
      for (i = 0; i < r->bundle->nvariants; ++i) {
        if (strcmp(r->bundle->variants[i].id, id) == 0 && r->lines[i] == NULL) {
          size_t length = strlen(line);
          r->lines[i] = harness_copy(line);
          if (length > 0 && r->lines[i][length - 1] == ',') r->lines[i][length - 1] = '\0';
        }
      }
    } else if (strncmp(line, "\"reference\": {", 14) == 0) {
      size_t length;
      free(r->reference_line);
      r->reference_line = harness_copy(line + 13);
      length = strlen(r->reference_line);
      if (length > 0 && r->reference_line[length - 1] == ',') r->reference_line[length - 1] = '\0';
    }
    line = strtok(NULL, "\n");
  }
  free(text);
  return 1;
}

/* ---- main ------------------------------------------------------------------------------------------ */

typedef struct {
  const harness_bundle* bundle;
  const harness_variant* variant;
  const char* dir;
  const char* device;
  const float* expected;
  int is_reference;
} harness_job;

static void harness_job_body(int fd, void* context) {
  const harness_job* job = (const harness_job*)context;
  harness_device device;
  harness_outcome* outcome = (harness_outcome*)harness_alloc(sizeof(harness_outcome));
  float* output = (float*)harness_alloc(4 * (job->bundle->output_elements + 1));
  char why[1024];
  if (!harness_select_device(job->device, &device, why, sizeof why)) {
    harness_write_field(fd, "error", why);
    return;
  }
  if (job->is_reference) {
    harness_write_field(fd, "device_name", device.name);
    harness_write_field(fd, "device_vendor", device.vendor);
    harness_write_field(fd, "driver_version", device.driver);
    harness_write_field(fd, "platform_version", device.platform_version);
    harness_write_field(fd, "device_version", device.device_version);
    harness_write_field(fd, "platform_name", device.platform_name);
    harness_write_field(fd, "compute_units", device.compute_units);
    harness_write_field(fd, "host_processor", device.host_processor);
  }
  harness_measure(job->bundle, job->variant, &device, job->dir, output, job->expected, outcome);
  harness_report(fd, job->variant, outcome, job->is_reference ? output : NULL,
                 job->is_reference && strcmp(outcome->status, "ok") == 0
                     ? 4 * job->bundle->output_elements
                     : 0);
}

static void harness_usage(void) {
  fprintf(stderr,
          "usage: weft_bundle_harness [BUNDLE_DIR] [--results FILE] [--device TEXT]\n"
          "           [--timeout SECONDS] [--min-repeats N] [--max-repeats N] [--min-time-ms MS]\n"
          "Measures every variant of a weft bundle (BUNDLE_DIR, default .) on an OpenCL device:\n"
          "each in a child process (build, warm-up, check against the reference, timed repeats\n"
          "with cl_event profiling); results go to BUNDLE_DIR/results.json after every variant,\n"
          "and a re-run skips the variants already there. --device picks a device by index or\n"
          "by a part of its device, vendor or platform name (default: the first GPU, else the\n"
          "first device). Bring the results home with `weft import results.json --db F`.\n");
}

int main(int argc, char** argv) {
  const char* dir = ".";
  const char* results_path = NULL;
  const char* device = NULL;
  char default_results[4096];
  harness_bundle* bundle = (harness_bundle*)harness_alloc(sizeof(harness_bundle));
  harness_results results;
  harness_report_data* report = (harness_report_data*)harness_alloc(sizeof(harness_report_data));
  harness_job job;
  harness_child child;
  float* expected;
  double timeout = -1, min_time = -1;
  int min_repeats = -1, max_repeats = -1, i, k, done = 0, counts_ok = 0, counts_failed = 0;
  char earlier[HARNESS_DEVICE_FIELDS][1024];

  for (i = 1; i < argc; ++i) {
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      harness_usage();
      return 0;
    }
    if (argv[i][0] == '-' && value == NULL) {
      harness_usage();
      harness_die("%s needs a value", argv[i]);
    }
    if (strcmp(argv[i], "--results") == 0) {
      results_path = argv[++i];
    } else if (strcmp(argv[i], "--device") == 0) {
      device = argv[++i];
    } else if (strcmp(argv[i], "--timeout") == 0) {
      timeout = atof(argv[++i]);
    } else if (strcmp(argv[i], "--min-time-ms") == 0) {
      min_time = atof(argv[++i]);
    } else if (strcmp(argv[i], "--min-repeats") == 0) {
      min_repeats = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--max-repeats") == 0) {
      max_repeats = atoi(argv[++i]);
    } else if (argv[i][0] == '-') {
      harness_usage();
      harness_die("unknown option %s", argv[i]);
    } else {
      dir = argv[i];
    }
  }
  signal(SIGPIPE, SIG_IGN);
  harness_read_bundle(bundle, dir);
  if (timeout > 0) bundle->timeout_s = timeout;
  if (min_time >= 0) bundle->min_time_ms = min_time;
  if (min_repeats >= 1) bundle->min_repeats = min_repeats;
  if (max_repeats >= 1) bundle->max_repeats = max_repeats;
  if (bundle->max_repeats < bundle->min_repeats) bundle->max_repeats = bundle->min_repeats;
  if (results_path == NULL) {
    snprintf(default_results, sizeof default_results, "%s/results.json", dir);
    results_path = default_results;
  }
  harness_make_inputs(bundle);

  memset(&results, 0, sizeof results);
  results.bundle = bundle;
  results.results_path = results_path;
  results.lines = (char**)harness_alloc(sizeof(char*) * (size_t)(bundle->nvariants + 1));
  memset(earlier, 0, sizeof earlier);
  harness_load_results(&results, earlier);

  /* The reference, in a child that also reports the device. */
  memset(&job, 0, sizeof job);
  job.bundle = bundle;
  job.variant = &bundle->reference;
  job.dir = dir;
  job.device = device;
  job.is_reference = 1;
  child = harness_run_child(harness_job_body, &job, bundle->timeout_s);
  harness_parse_report(&child, report);
  if (strncmp(child.data, "error ", 6) == 0) harness_die("%s", child.data + 6);
  if (!report->complete || strcmp(report->status, "ok") != 0 ||
      report->extra_bytes != 4 * bundle->output_elements) {
    fprintf(stderr, "%s\n", report->message);
    harness_die("the reference (default-lowered program) did not run: %s",
                child.timed_out ? "timeout" : child.signaled ? "crashed" : report->status);
  }
  for (k = 0; k < HARNESS_DEVICE_FIELDS; ++k) {
    harness_set(results.device[k], sizeof results.device[k], report->device[k]);
  }
  /* Another device: another name, driver or platform, or (where the earlier file records
     them) other compute units or another processor. */
  if (earlier[0][0] != '\0' &&
      (strcmp(earlier[0], results.device[0]) != 0 || strcmp(earlier[2], results.device[2]) != 0 ||
       strcmp(earlier[3], results.device[3]) != 0 ||
       (earlier[6][0] != '\0' && strcmp(earlier[6], results.device[6]) != 0) ||
       (earlier[7][0] != '\0' && strcmp(earlier[7], results.device[7]) != 0))) {
    fprintf(
        stderr,
        "weft bundle harness: %s holds results of device '%s' (driver %s, %s compute units%s%s); "
        "this is '%s' (driver %s, %s compute units%s%s)\n",
        results_path, earlier[0], earlier[2], earlier[6][0] ? earlier[6] : "unknown",
        earlier[7][0] ? ", processor " : "", earlier[7], results.device[0], results.device[2],
        results.device[6], results.device[7][0] ? ", processor " : "", results.device[7]);
    harness_die("%s", "move the earlier results away or give --results FILE");
  }
  expected = (float*)harness_alloc(report->extra_bytes + 4);
  memcpy(expected, report->extra, report->extra_bytes);
  if (results.reference_line == NULL) {
    results.reference_line = harness_result_line(&bundle->reference, report, child.seconds);
  }
  fprintf(stderr, "device: %s (%s, driver %s); reference %.3f ms\n", results.device[0],
          results.device[1], results.device[2], (double)report->median * 1e-6);
  for (i = 0; i < bundle->nvariants; ++i) done += results.lines[i] != NULL;
  if (done > 0) fprintf(stderr, "%d of %d variants already in %s\n", done, bundle->nvariants, results_path);
  harness_write_results(&results);

  for (i = 0; i < bundle->nvariants; ++i) {
    const harness_variant* v = &bundle->variants[i];
    if (results.lines[i] != NULL) continue;
    free(report->message);
    memset(report, 0, sizeof *report);
    if (v->invalid != NULL) {
      snprintf(report->status, sizeof report->status, "invalid");
      strcpy(report->kernels, "[]");
      report->message = harness_copy(v->invalid);
      results.lines[i] = harness_result_line(v, report, 0);
    } else {
      job.variant = v;
      job.expected = expected;
      job.is_reference = 0;
      child = harness_run_child(harness_job_body, &job, bundle->timeout_s);
      harness_parse_report(&child, report);
      if (child.timed_out) {
        snprintf(report->status, sizeof report->status, "timeout");
        free(report->message);
        report->message = (char*)harness_alloc(256);
        snprintf(report->message, 256, "killed after %.1f s (--timeout)", child.seconds);
      } else if (!report->complete) {
        char* message = (char*)harness_alloc(512);
        if (child.signaled) {
          snprintf(message, 512, "the variant's process died from signal %d (%s)", child.signal,
                   strsignal(child.signal));
        } else {
          snprintf(message, 512, "the variant's process exited with code %d without a result",
                   child.exit_code);
        }
        snprintf(report->status, sizeof report->status, "crashed");
        free(report->message);
        report->message = message;
      }
      results.lines[i] = harness_result_line(v, report, child.seconds);
      free(child.data);
    }
    if (strcmp(report->status, "ok") == 0) {
      ++counts_ok;
    } else {
      ++counts_failed;
    }
    ++done;
    fprintf(stderr, "[%d/%d] %s: %s", done, bundle->nvariants, v->id, report->status);
    if (strcmp(report->status, "ok") == 0) {
      fprintf(stderr, " %.3f ms", (double)report->median * 1e-6);
    } else if (report->message[0] != '\0') {
      char first[200];
      harness_set(first, sizeof first, report->message);
      first[strcspn(first, "\n")] = '\0';
      fprintf(stderr, " (%s)", first);
    }
    fprintf(stderr, "\n");
    harness_write_results(&results);
  }
  printf("%s: %d variants measured now (%d ok, %d not), %d in all; results in %s\n",
         bundle->program, counts_ok + counts_failed, counts_ok, counts_failed, done, results_path);
  return 0;
}
