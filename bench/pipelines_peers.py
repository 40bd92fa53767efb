#!/usr/bin/python3
"""The peers of weft's image pipelines (issue 9's benchmark): Halide 14 and OpenCV 4.6.

bench/pipelines.cpp (weft_bench_pipelines) runs this script in the same invocation and puts its
figures next to weft's; it can also be run alone. For each of the four pipelines of
examples/pipelines/ (blur, unsharp mask, Harris, Canny without hysteresis; fp32, clamp-to-edge
at every stage, the definitions of tests/support/pipeline_reference.h) it builds and times:

  halide-hand         Halide on the CPU with a schedule written here (below, per pipeline):
                      the output in tiles, rows of tiles in parallel, x vectorized to the
                      machine's float vector, stencil producers computed per output tile
                      (compute_at the tile: overlapped tiling), cheap pointwise stages inlined;
  halide-adams2019, halide-mullapudi2016, halide-li2018
                      the same algorithm scheduled by Halide's autoscheduler plugins (Debian's
                      libhalide14-0-dev ships them in /usr/lib/x86_64-linux-gnu/halide14/; in
                      Halide 14 Pipeline.auto_schedule applies the schedule it finds), with the
                      output estimates set to the image's size and MachineParams(threads,
                      last-level cache, balance 40);
  halide-opencl       Halide's OpenCL target (host-opencl) on the OpenCL CPU device (PoCL) with a
                      GPU-style schedule: the output in gpu_tile blocks of 16x16 work-items,
                      stencil producers computed per block (compute_at the block, gpu_threads:
                      Halide puts them in local memory), then 8x8 blocks, then one gpu_tile
                      16x16 kernel per stage, the first that PoCL runs (the schedule used and
                      the failures are reported); input copied to the device once and
                      the output left there, so only the kernels (and their launches) are timed;
  opencv              OpenCV 4.6 equivalents: sepFilter2D / Sobel / boxFilter with
                      BORDER_REPLICATE (clamp-to-edge), numpy for the pointwise stages.

Every output is checked against a numpy reference of the same definition (the same float32
operations in the same order as pipeline_reference.h). Reported: the largest error relative to
the magnitude of the terms a pixel is formed from, the pixels beyond a relative 1e-4 of it, and
for the comparisons (unsharp mask's threshold select, Canny's labels) the pixels that differ,
apart from how many of those the reference marks as near ties. Nothing is hidden: a peer whose
output differs is reported with its mismatches, not dropped.

Timing: one warm-up run, then the median of at least --repeats runs that go on until they add
up to --min-time ms (milliseconds, wall clock of the whole pipeline). Threads: --threads
(default 2) for Halide (HL_NUM_THREADS, set before Halide starts) and OpenCV
(cv2.setNumThreads).

Halide's target: HL_TARGET when set (e.g. x86-64-linux-avx-avx2-f16c-fma-sse41 to keep an AVX-512
machine's Halide code to AVX2), else the host's; the hand schedules vectorize by the target's
natural float vector (16 with AVX-512, 8 with AVX2).

  /usr/bin/python3 bench/pipelines_peers.py [--pipelines blur,unsharp,harris,canny]
      [--repeats 5] [--min-time 100] [--threads 2] [--peers halide-hand,...,opencv] [--small]
      [--size blur=4093x4096 ...]
      [--out FILE]

JSON on stdout (or --out FILE); progress on stderr. Needs python3-halide, libhalide14-0-dev
and python3-opencv (scripts/setup-bench.sh).
"""

import argparse
import json
import os
import platform
import signal
import statistics
import sys
import time

# Ctrl-C ends the script at once: Python's own handler waits until control returns from
# native code (a Halide schedule or a oneDNN call can take seconds), leaving the benchmark's
# peer running after the benchmark itself stopped.
signal.signal(signal.SIGINT, signal.SIG_DFL)

PLUGIN_DIR = "/usr/lib/x86_64-linux-gnu/halide14"
AUTOSCHEDULERS = {
    "halide-adams2019": ("Adams2019", "libautoschedule_adams2019.so"),
    "halide-mullapudi2016": ("Mullapudi2016", "libautoschedule_mullapudi2016.so"),
    "halide-li2018": ("Li2018", "libautoschedule_li2018.so"),
}
ALL_PEERS = ["halide-hand", "halide-adams2019", "halide-mullapudi2016", "halide-li2018",
             "halide-opencl", "opencv"]
SIZES = {  # the sizes: (W, H, C)
    "blur": (4096, 4096, 1),
    "unsharp": (4256, 2832, 3),
    "harris": (4256, 2832, 1),
    "canny": (4096, 4096, 1),
}
SMALL = {"blur": (256, 192, 1), "unsharp": (264, 120, 3), "harris": (264, 136, 1),
         "canny": (256, 160, 1)}


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


# ---- numpy references (pipeline_reference.h, float32, same operation order) ----------------

import numpy as np  # noqa: E402

F = np.float32


def shifted(a, dx, dy):
    """a(x + dx, y + dy) clamped to the edge, for a [H, W] array."""
    h, w = a.shape
    ys = np.clip(np.arange(h) + dy, 0, h - 1)
    xs = np.clip(np.arange(w) + dx, 0, w - 1)
    return a[ys][:, xs]


def ref_blur(img):
    i = img[0]
    bx = ((shifted(i, -1, 0) + i) + shifted(i, 1, 0)) / F(3)
    return (((shifted(bx, 0, -1) + bx) + shifted(bx, 0, 1)) / F(3))[None]


def gauss5(a, b, c, d, e):
    return ((((a + F(4) * b) + F(6) * c) + F(4) * d) + e) / F(16)


def ref_unsharp(img):
    out = np.empty_like(img)
    scale = np.empty_like(img)
    fragile = np.zeros(img.shape, dtype=bool)
    for c in range(img.shape[0]):
        i = img[c]
        bx = gauss5(*[shifted(i, k, 0) for k in range(-2, 3)])
        by = gauss5(*[shifted(bx, 0, k) for k in range(-2, 3)])
        sharp = i * F(4) - by * F(3)
        diff = np.abs(i - by)
        out[c] = np.where(diff < F(0.001), i, sharp)
        scale[c] = np.abs(i * F(4)) + np.abs(by * F(3))
        fragile[c] = np.abs(diff.astype(np.float64) - np.float64(F(0.001))) <= \
            1e-5 * np.maximum(np.abs(i) + np.abs(by), 1e-30)
    return out, scale, fragile


def sobel(i):
    a, b, c = shifted(i, -1, -1), shifted(i, 0, -1), shifted(i, 1, -1)
    d, f = shifted(i, -1, 0), shifted(i, 1, 0)
    g, h, k = shifted(i, -1, 1), shifted(i, 0, 1), shifted(i, 1, 1)
    gx = ((c + F(2) * f) + k) - ((a + F(2) * d) + g)
    gy = ((g + F(2) * h) + k) - ((a + F(2) * b) + c)
    tx = np.abs(a) + 2 * np.abs(d) + np.abs(g) + np.abs(c) + 2 * np.abs(f) + np.abs(k)
    ty = np.abs(a) + 2 * np.abs(b) + np.abs(c) + np.abs(g) + 2 * np.abs(h) + np.abs(k)
    return gx, gy, tx, ty


def box9(i):
    s = None
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            v = shifted(i, dx, dy)
            s = v if s is None else s + v
    return s


def ref_harris(img):
    ix, iy, _, _ = sobel(img[0])
    sxx, sxy, syy = box9(ix * ix), box9(ix * iy), box9(iy * iy)
    trace = sxx + syy
    out = (sxx * syy - sxy * sxy) - F(0.04) * (trace * trace)
    scale = np.abs(sxx * syy) + sxy * sxy + F(0.04) * trace * trace
    return out[None], scale[None]


TAN22, TAN67 = F(0.41421356), F(2.41421356)
NEIGHBOURS = [((-1, 0), (1, 0)), ((-1, -1), (1, 1)), ((0, -1), (0, 1)), ((1, -1), (-1, 1))]


def near(a, b, scale):
    return np.abs(a.astype(np.float64) - b) <= 1e-5 * np.maximum(scale, 1e-30)


def ref_canny(img):
    i = img[0]
    rows = {}
    for dy in range(-2, 3):  # row sums of the 5x5 window, left to right, then the column
        r = shifted(i, -2, dy)
        for k, wgt in zip(range(-1, 3), (4, 6, 4, 1)):
            r = r + F(wgt) * shifted(i, k, dy)
        rows[dy] = r
    col = rows[-2]
    for dy, wgt in zip(range(-1, 3), (4, 6, 4, 1)):
        col = col + F(wgt) * rows[dy]
    blurred = col / F(256)
    gx, gy, tx, ty = sobel(blurred)
    mag = np.sqrt(gx * gx + gy * gy)
    ax, ay = np.abs(gx), np.abs(gy)
    direction = np.where(ay <= TAN22 * ax, 0,
                         np.where(ay >= TAN67 * ax, 2, np.where(gx * gy > F(0), 1, 3)))
    terms = tx + ty
    dfrag = near(ay, TAN22 * ax, terms * 3) | near(ay, TAN67 * ax, terms * 3) | \
        ((direction % 2 == 1) & (near(gx, 0.0, tx) | near(gy, 0.0, ty)))
    first = np.zeros_like(mag)
    second = np.zeros_like(mag)
    for d, (p, q) in enumerate(NEIGHBOURS):
        sel = direction == d
        first[sel] = shifted(mag, *p)[sel]
        second[sel] = shifted(mag, *q)[sel]
    thin = np.where((mag >= first) & (mag >= second), mag, F(0))
    scale = np.maximum(np.maximum(mag, first), second) + terms
    fragile = dfrag | near(mag, first, scale) | near(mag, second, scale) | \
        near(thin, 0.3, scale) | near(thin, 0.1, scale)
    labels = np.where(thin >= F(0.3), 2, np.where(thin >= F(0.1), 1, 0)).astype(np.int32)
    return labels[None], fragile[None]


def reference(name, img):
    """(expected output [C, H, W], scale or None, fragile mask or None)."""
    if name == "blur":
        return ref_blur(img), None, None
    if name == "unsharp":
        return ref_unsharp(img)
    if name == "harris":
        out, scale = ref_harris(img)
        return out, scale, None
    labels, fragile = ref_canny(img)
    return labels, None, fragile


def verify(name, got, expected, scale, fragile):
    got = np.asarray(got).reshape(expected.shape)
    result = {}
    if expected.dtype.kind == "i":
        bad = got != expected
        result["max_abs_error"] = float(np.max(np.abs(got.astype(np.int64) - expected)))
    else:
        err = np.abs(got.astype(np.float64) - expected)
        bound = np.maximum(np.abs(expected), 1e-30) if scale is None else \
            np.maximum(np.maximum(np.abs(expected), scale), 1e-30)
        rel = err / bound
        rel[np.isnan(rel)] = np.inf
        bad = rel > 1e-4
        result["max_abs_error"] = float(np.max(err))
        result["max_rel_error"] = float(np.max(rel))
    result["pixels"] = int(expected.size)
    result["mismatching_pixels"] = int(np.count_nonzero(bad))
    if fragile is not None:
        ties = int(np.count_nonzero(bad & fragile))
        result["of_which_near_ties"] = ties
        result["mismatches_not_near_ties"] = result["mismatching_pixels"] - ties
    else:
        result["mismatches_not_near_ties"] = result["mismatching_pixels"]
    return result


# ---- Halide ---------------------------------------------------------------------------------

def halide_algorithm(hl, name, inbuf, w, h, c):
    """The pipeline in Halide: returns (output Func, {stage name: Func}, vars).

    Every stage reads its producer clamp-to-edge (explicit clamps of the coordinates), in the
    float32 operation order of the references."""
    x, y, ch = hl.Var("x"), hl.Var("y"), hl.Var("c")

    def cx(e):
        return hl.clamp(e, 0, w - 1)

    def cy(e):
        return hl.clamp(e, 0, h - 1)

    def at(f, dx, dy, *rest):
        return f[(cx(x + dx), cy(y + dy)) + rest]

    fl = hl.f32
    stages = {}
    if name == "blur":
        blurx, blury = hl.Func("blurx"), hl.Func("blury")
        blurx[x, y] = ((at(inbuf, -1, 0) + at(inbuf, 0, 0)) + at(inbuf, 1, 0)) / fl(3)
        blury[x, y] = ((at(blurx, 0, -1) + blurx[x, y]) + at(blurx, 0, 1)) / fl(3)
        stages = {"blurx": blurx}
        return blury, stages, (x, y, None)
    if name == "unsharp":
        blurx, blury = hl.Func("blurx"), hl.Func("blury")
        sharp, mask = hl.Func("sharpen"), hl.Func("mask")

        def g5(v):
            return ((((v[0] + fl(4) * v[1]) + fl(6) * v[2]) + fl(4) * v[3]) + v[4]) / fl(16)

        blurx[x, y, ch] = g5([at(inbuf, k, 0, ch) for k in range(-2, 3)])
        blury[x, y, ch] = g5([at(blurx, 0, k, ch) for k in range(-2, 3)])
        pixel = inbuf[x, y, ch]
        sharp[x, y, ch] = pixel * fl(4) - blury[x, y, ch] * fl(3)
        mask[x, y, ch] = hl.select(hl.abs(pixel - blury[x, y, ch]) < fl(0.001), pixel,
                                   sharp[x, y, ch])
        stages = {"blurx": blurx, "blury": blury, "sharpen": sharp}
        return mask, stages, (x, y, ch)

    def sobel_pair(src, fx, fy):
        a, b, cc = at(src, -1, -1), at(src, 0, -1), at(src, 1, -1)
        d, f = at(src, -1, 0), at(src, 1, 0)
        g, hh, i = at(src, -1, 1), at(src, 0, 1), at(src, 1, 1)
        fx[x, y] = ((cc + fl(2) * f) + i) - ((a + fl(2) * d) + g)
        fy[x, y] = ((g + fl(2) * hh) + i) - ((a + fl(2) * b) + cc)

    if name == "harris":
        ix, iy = hl.Func("Ix"), hl.Func("Iy")
        sobel_pair(inbuf, ix, iy)
        ixx, ixy, iyy = hl.Func("Ixx"), hl.Func("Ixy"), hl.Func("Iyy")
        ixx[x, y] = ix[x, y] * ix[x, y]
        ixy[x, y] = ix[x, y] * iy[x, y]
        iyy[x, y] = iy[x, y] * iy[x, y]
        sums = []
        for nm, src in (("Sxx", ixx), ("Sxy", ixy), ("Syy", iyy)):
            s = hl.Func(nm)
            e = None
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    e = at(src, dx, dy) if e is None else e + at(src, dx, dy)
            s[x, y] = e
            sums.append(s)
        sxx, sxy, syy = sums
        out = hl.Func("response")
        trace = sxx[x, y] + syy[x, y]
        out[x, y] = (sxx[x, y] * syy[x, y] - sxy[x, y] * sxy[x, y]) - fl(0.04) * (trace * trace)
        stages = {"Ix": ix, "Iy": iy, "Ixx": ixx, "Ixy": ixy, "Iyy": iyy,
                  "Sxx": sxx, "Sxy": sxy, "Syy": syy}
        return out, stages, (x, y, None)

    # canny
    rowsum, blurred = hl.Func("rowsum"), hl.Func("blurred")
    e = at(inbuf, -2, 0)
    for k, wgt in zip(range(-1, 3), (4, 6, 4, 1)):
        e = e + fl(wgt) * at(inbuf, k, 0)
    rowsum[x, y] = e  # the row sums of the 5x5 window (the reference's inner loop)
    e = at(rowsum, 0, -2)
    for k, wgt in zip(range(-1, 3), (4, 6, 4, 1)):
        e = e + fl(wgt) * at(rowsum, 0, k)
    blurred[x, y] = e / fl(256)
    gx, gy = hl.Func("gx"), hl.Func("gy")
    sobel_pair(blurred, gx, gy)
    mag, direction = hl.Func("magnitude"), hl.Func("direction")
    mag[x, y] = hl.sqrt(gx[x, y] * gx[x, y] + gy[x, y] * gy[x, y])
    ax, ay = hl.abs(gx[x, y]), hl.abs(gy[x, y])
    direction[x, y] = hl.select(ay <= TAN22 * ax, 0, ay >= TAN67 * ax, 2,
                                gx[x, y] * gy[x, y] > fl(0), 1, 3)
    centre = mag[x, y]
    dirxy = direction[x, y]
    first = hl.select(dirxy == 0, at(mag, -1, 0), dirxy == 1, at(mag, -1, -1),
                      dirxy == 2, at(mag, 0, -1), at(mag, 1, -1))
    second = hl.select(dirxy == 0, at(mag, 1, 0), dirxy == 1, at(mag, 1, 1),
                       dirxy == 2, at(mag, 0, 1), at(mag, -1, 1))
    thin, labels = hl.Func("thin"), hl.Func("labels")
    thin[x, y] = hl.select((centre >= first) & (centre >= second), centre, fl(0))
    labels[x, y] = hl.select(thin[x, y] >= fl(0.3), 2, thin[x, y] >= fl(0.1), 1, 0)
    stages = {"rowsum": rowsum, "blurred": blurred, "gx": gx, "gy": gy, "magnitude": mag,
              "direction": direction, "thin": thin}
    return labels, stages, (x, y, None)


# The hand-written CPU schedules: (description, function applying it).
def hand_schedule(hl, name, out, stages, xyc):
    vector = hl.get_target_from_environment().natural_vector_size(hl.Float(32))
    x, y, ch = xyc
    xo, yo, xi, yi, tile = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi"), hl.Var("t")
    if name == "blur":
        # 256x32 output tiles, a parallel loop over all tiles; blurx computed per tile (its
        # 34 rows: 6% recomputed halo), both vectorized along x.
        out.tile(x, y, xo, yo, xi, yi, 256, 32).fuse(xo, yo, tile).parallel(tile)
        out.vectorize(xi, vector)
        stages["blurx"].compute_at(out, tile).vectorize(x, vector)
        return ("output 256x32 tiles (parallel over tiles), blurx compute_at tile, "
                f"vectorize x {vector}")
    if name == "unsharp":
        # Per plane, 256x32 tiles; blurx and blury per tile; sharpen inlined into the mask.
        out.reorder(x, y, ch).tile(x, y, xo, yo, xi, yi, 256, 32)
        out.fuse(xo, yo, tile).fuse(tile, ch, tile).parallel(tile).vectorize(xi, vector)
        stages["blurx"].compute_at(out, tile).vectorize(x, vector)
        stages["blury"].compute_at(out, tile).vectorize(x, vector)
        return ("per plane, output 256x32 tiles (parallel over tiles and planes), blurx and "
                f"blury compute_at tile, sharpen inlined, vectorize x {vector}")
    if name == "harris":
        # 256x32 tiles; Ix, Iy per tile; the products inlined into the box sums, which are
        # computed per tile too (stored per tile, read 3x3), the response inlined at the output.
        out.tile(x, y, xo, yo, xi, yi, 256, 32).fuse(xo, yo, tile).parallel(tile)
        out.vectorize(xi, vector)
        for s in ("Ix", "Iy", "Sxx", "Sxy", "Syy"):
            stages[s].compute_at(out, tile).vectorize(x, vector)
        return ("output 256x32 tiles (parallel over tiles), Ix, Iy, Sxx, Sxy, Syy compute_at "
                f"tile (products inlined), vectorize x {vector}")
    # canny: 256x32 tiles; the Gaussian's row sums, the blurred image, gx, gy and the magnitude
    # per tile; the direction and the suppression inlined into the labels.
    out.tile(x, y, xo, yo, xi, yi, 256, 32).fuse(xo, yo, tile).parallel(tile)
    out.vectorize(xi, vector)
    for s in ("rowsum", "blurred", "gx", "gy", "magnitude"):
        stages[s].compute_at(out, tile).vectorize(x, vector)
    return ("output 256x32 tiles (parallel over tiles), row sums, blurred, gx, gy, magnitude "
            f"compute_at tile, direction and suppression inlined, vectorize x {vector}")


# Tried in order until one runs: PoCL refuses some block shapes with producers in local
# memory (CL_INVALID_WORK_GROUP_SIZE for 32x8 here), the failures are reported.
OPENCL_SCHEDULES = [("local", 16, 16), ("local", 8, 8), ("root", 16, 16)]


def opencl_schedule(hl, name, out, stages, xyc, mode, tw, th):
    """GPU-style: tw x th work-items per block; stencil producers computed per block in local
    memory (mode local) or each stage its own kernel of gpu_tile blocks (mode root)."""
    x, y, ch = xyc
    bx, by, tx, ty = hl.Var("bx"), hl.Var("by"), hl.Var("tx"), hl.Var("ty")
    out.gpu_tile(x, y, bx, by, tx, ty, tw, th)
    producers = {"blur": ["blurx"], "unsharp": ["blurx", "blury"],
                 "harris": ["Ix", "Iy", "Sxx", "Sxy", "Syy"],
                 "canny": ["rowsum", "blurred", "gx", "gy", "magnitude"]}[name]
    for s in producers:
        if mode == "local":
            stages[s].compute_at(out, bx).gpu_threads(x, y)
        else:
            stages[s].compute_root().gpu_tile(x, y, bx, by, tx, ty, tw, th)
    if mode == "local":
        return (f"gpu_tile {tw}x{th} of the output; " + ", ".join(producers) +
                " compute_at the block with gpu_threads (local memory); the rest inlined")
    return (f"compute_root + gpu_tile {tw}x{th} for the output and " + ", ".join(producers) +
            " (a kernel each, global intermediates); the rest inlined")


def timed_runs(once, runs):
    """Wall-clock ms of `once` run at least runs[0] times and until they add up to runs[1] ms
    (at most 1000 runs)."""
    repeats, min_time_ms = runs
    times = []
    while (len(times) < repeats or sum(times) < min_time_ms) and len(times) < 1000:
        started = time.perf_counter()
        once()
        times.append((time.perf_counter() - started) * 1e3)
    return times


def run_halide(hl, name, peer, img, expected_dtype, threads, runs, estimates):
    if peer != "halide-opencl":
        return run_halide_once(hl, name, peer, img, expected_dtype, threads, runs, estimates,
                               None)
    failures = []
    for choice in OPENCL_SCHEDULES:
        try:
            times, result, schedule, compile_s = run_halide_once(
                hl, name, peer, img, expected_dtype, threads, runs, estimates, choice)
        except Exception as error:  # this block shape does not run here: try the next
            failures.append(f"{choice}: {type(error).__name__}: {str(error).strip()}")
            log(f"[peers] {name}: halide-opencl {choice} failed: {failures[-1]}")
            continue
        if failures:
            schedule += " (first tried and failed: " + "; ".join(failures) + ")"
        return times, result, schedule, compile_s
    raise RuntimeError("no OpenCL schedule ran: " + "; ".join(failures))


def run_halide_once(hl, name, peer, img, expected_dtype, threads, runs, estimates,
                    opencl_choice):
    c, h, w = img.shape
    chans = c if name == "unsharp" else 1
    planar = img if name == "unsharp" else img[0]
    inbuf = hl.Buffer(planar.transpose(2, 1, 0) if planar.ndim == 3 else planar.T)
    out, stages, xyc = halide_algorithm(hl, name, inbuf, w, h, chans)
    target = hl.get_target_from_environment()
    if peer == "halide-hand":
        schedule = hand_schedule(hl, name, out, stages, xyc)
    elif peer == "halide-opencl":
        target = target.with_feature(hl.TargetFeature.OpenCL)
        schedule = opencl_schedule(hl, name, out, stages, xyc, *opencl_choice)
    else:
        scheduler, plugin = AUTOSCHEDULERS[peer]
        hl.load_plugin(os.path.join(PLUGIN_DIR, plugin))
        x, y, ch = xyc
        out.set_estimate(x, 0, w).set_estimate(y, 0, h)
        if ch is not None:
            out.set_estimate(ch, 0, chans)
        params = hl.MachineParams(threads, estimates["llc_bytes"], 40)
        started = time.perf_counter()
        result = hl.Pipeline(out).auto_schedule(scheduler, target, params)
        schedule = {"autoscheduler": scheduler, "machine_params": str(params),
                    "seconds_to_schedule": round(time.perf_counter() - started, 2),
                    "schedule_source": result.schedule_source}
    pipeline = hl.Pipeline(out)
    started = time.perf_counter()
    pipeline.compile_jit(target)
    compile_s = time.perf_counter() - started
    result = np.empty((c, h, w), dtype=expected_dtype)
    outbuf = hl.Buffer(result.transpose(2, 1, 0) if name == "unsharp" else result[0].T)
    if peer == "halide-opencl":
        inbuf.set_host_dirty(True)
        inbuf.copy_to_device(target)  # once: only the kernels are timed

        def once():
            pipeline.realize(outbuf, target)
            outbuf.device_sync()
    else:
        def once():
            pipeline.realize(outbuf, target)
    once()  # warm-up
    times = timed_runs(once, runs)
    if peer == "halide-opencl":
        outbuf.copy_to_host()
    return times, result, schedule, compile_s


# ---- OpenCV ---------------------------------------------------------------------------------

def opencv_pipeline(cv2, name):
    """(description, function of the [C, H, W] image returning the output [C, H, W])."""
    rep = cv2.BORDER_REPLICATE
    third = np.full((1, 3), 1.0 / 3.0, np.float32)
    binom = np.array([[1, 4, 6, 4, 1]], np.float32)
    if name == "blur":
        def run(img):
            return cv2.sepFilter2D(img[0], cv2.CV_32F, third, third, borderType=rep)[None]
        return "sepFilter2D (1 1 1)/3 x and y, BORDER_REPLICATE", run
    if name == "unsharp":
        g = binom / np.float32(16)

        def run(img):
            out = np.empty_like(img)
            for c in range(img.shape[0]):
                i = img[c]
                blur = cv2.sepFilter2D(i, cv2.CV_32F, g, g, borderType=rep)
                sharp = cv2.addWeighted(i, 4.0, blur, -3.0, 0.0)
                keep = cv2.absdiff(i, blur) < np.float32(0.001)
                out[c] = np.where(keep, i, sharp)
            return out
        return ("per plane sepFilter2D (1 4 6 4 1)/16 BORDER_REPLICATE, addWeighted, absdiff, "
                "numpy select"), run
    if name == "harris":
        def run(img):
            i = img[0]
            ix = cv2.Sobel(i, cv2.CV_32F, 1, 0, ksize=3, borderType=rep)
            iy = cv2.Sobel(i, cv2.CV_32F, 0, 1, ksize=3, borderType=rep)
            box = [cv2.boxFilter(p, -1, (3, 3), normalize=False, borderType=rep)
                   for p in (cv2.multiply(ix, ix), cv2.multiply(ix, iy), cv2.multiply(iy, iy))]
            sxx, sxy, syy = box
            trace = cv2.add(sxx, syy)
            det = cv2.subtract(cv2.multiply(sxx, syy), cv2.multiply(sxy, sxy))
            return cv2.scaleAdd(cv2.multiply(trace, trace), -0.04, det)[None]
        return ("Sobel ksize 3, multiply, boxFilter 3x3 unnormalized, BORDER_REPLICATE; "
                "det - 0.04 trace^2 with cv2 arithmetic"), run
    g = binom / np.float32(16)

    def run(img):
        i = img[0]
        blurred = cv2.sepFilter2D(i, cv2.CV_32F, g, g, borderType=rep)
        gx = cv2.Sobel(blurred, cv2.CV_32F, 1, 0, ksize=3, borderType=rep)
        gy = cv2.Sobel(blurred, cv2.CV_32F, 0, 1, ksize=3, borderType=rep)
        mag = cv2.magnitude(gx, gy)
        ax, ay = np.abs(gx), np.abs(gy)
        direction = np.where(ay <= TAN22 * ax, 0,
                             np.where(ay >= TAN67 * ax, 2, np.where(gx * gy > 0, 1, 3)))
        padded = cv2.copyMakeBorder(mag, 1, 1, 1, 1, rep)
        h, w = mag.shape
        first = np.empty_like(mag)
        second = np.empty_like(mag)
        for d, (p, q) in enumerate(NEIGHBOURS):
            sel = direction == d
            first[sel] = padded[1 + p[1]:1 + p[1] + h, 1 + p[0]:1 + p[0] + w][sel]
            second[sel] = padded[1 + q[1]:1 + q[1] + h, 1 + q[0]:1 + q[0] + w][sel]
        thin = np.where((mag >= first) & (mag >= second), mag, np.float32(0))
        return np.where(thin >= np.float32(0.3), 2,
                        np.where(thin >= np.float32(0.1), 1, 0)).astype(np.int32)[None]
    return ("sepFilter2D (1 4 6 4 1)/16 BORDER_REPLICATE, Sobel ksize 3, magnitude; direction, "
            "suppression (copyMakeBorder + numpy) and thresholds in numpy"), run


def run_opencv(cv2, name, img, runs):
    description, fn = opencv_pipeline(cv2, name)
    result = fn(img)  # warm-up
    times = timed_runs(lambda: fn(img), runs)
    return times, result, description


# ---- driver ---------------------------------------------------------------------------------

def last_level_cache_bytes():
    try:
        for index in sorted(os.listdir("/sys/devices/system/cpu/cpu0/cache"), reverse=True):
            if not index.startswith("index"):
                continue
            text = open(f"/sys/devices/system/cpu/cpu0/cache/{index}/size").read().strip()
            return int(text[:-1]) * 1024 if text.endswith("K") else int(text)
    except (OSError, ValueError):
        pass
    return 16 * 1024 * 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pipelines", default="blur,unsharp,harris,canny")
    parser.add_argument("--peers", default=",".join(ALL_PEERS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=100.0,
                        help="time each peer until its runs add up to this many ms")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--small", action="store_true", help="small images (a quick check)")
    parser.add_argument("--size", action="append", default=[], metavar="PIPELINE=WxH",
                        help="that pipeline at another image size (its channels kept); repeatable")
    parser.add_argument("--out", help="write the JSON here instead of stdout")
    args = parser.parse_args()

    # Before Halide's runtime starts its thread pool; PoCL's cache as the project keeps it.
    os.environ["HL_NUM_THREADS"] = str(args.threads)
    os.environ.setdefault("HL_OCL_DEVICE_TYPE", "cpu")
    os.environ.setdefault("POCL_CACHE_DIR", "/work/pocl-cache")
    peers = [p for p in args.peers.split(",") if p]
    runs = (args.repeats, args.min_time)
    report = {"benchmark": "pipelines_peers", "threads": args.threads, "repeats": args.repeats,
              "min_time_ms": args.min_time,
              "timing": "wall clock of the whole pipeline, median after one warm-up run, ms",
              "python": platform.python_version(), "numpy": np.__version__,
              "machine": platform.machine(), "pipelines": {}}
    try:
        import halide as hl
        report["halide"] = "14 (Debian python3-halide)"
        report["halide_target"] = str(hl.get_target_from_environment())
    except ImportError as error:
        hl = None
        report["halide"] = f"not available: {error}"
    try:
        import cv2
        cv2.setNumThreads(args.threads)
        report["opencv"] = cv2.__version__
    except ImportError as error:
        cv2 = None
        report["opencv"] = f"not available: {error}"
    estimates = {"llc_bytes": last_level_cache_bytes()}
    sizes = {}
    for text in args.size:
        name, _, shape = text.partition("=")
        width, _, height = shape.partition("x")
        if name not in SIZES or not width.isdigit() or not height.isdigit():
            raise SystemExit(f"--size {text}: expected PIPELINE=WxH (blur, unsharp, harris, canny)")
        sizes[name] = (int(width), int(height))
    rng = np.random.default_rng(args.seed)
    for name in [p for p in args.pipelines.split(",") if p]:
        if name not in SIZES:
            raise SystemExit(f"unknown pipeline {name} (blur, unsharp, harris, canny)")
        w, h, c = (SMALL if args.small else SIZES)[name]
        if name in sizes:
            w, h = sizes[name]
        img = rng.random((c, h, w), dtype=np.float32)
        log(f"[peers] {name} {w}x{h}x{c}: numpy reference")
        expected, scale, fragile = reference(name, img)
        entry = {"width": w, "height": h, "channels": c, "peers": {}}
        for peer in peers:
            log(f"[peers] {name}: {peer}")
            record = {}
            try:
                if peer == "opencv":
                    if cv2 is None:
                        raise RuntimeError(report["opencv"])
                    times, got, schedule = run_opencv(cv2, name, img, runs)
                else:
                    if hl is None:
                        raise RuntimeError(report["halide"])
                    times, got, schedule, compile_s = run_halide(
                        hl, name, peer, img, expected.dtype, args.threads, runs, estimates)
                    record["jit_compile_s"] = round(compile_s, 2)
                record["median_ms"] = statistics.median(times)
                record["ms"] = times
                record["schedule"] = schedule
                record["verification"] = verify(name, got, expected, scale, fragile)
            except Exception as error:  # a peer that cannot run is reported, not fatal
                record = {"error": f"{type(error).__name__}: {error}"}
                log(f"[peers] {name}: {peer} failed: {record['error']}")
            entry["peers"][peer] = record
            if "median_ms" in record:
                v = record["verification"]
                log(f"[peers] {name}: {peer} {record['median_ms']:.2f} ms, "
                    f"{v['mismatching_pixels']} mismatching pixels")
        report["pipelines"][name] = entry
    text = json.dumps(report, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
