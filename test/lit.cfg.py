# lit configuration for Kiln's suites: passes (kiln-opt + FileCheck),
# plugin (rewrite dumps, -verify diagnostics) and execution (compiled vs
# eager vs float64 reference, counters).
import os
import platform
import shutil
import subprocess

import lit.formats

config.name = "Kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".kir", ".cpp"]
config.excludes = ["Inputs", "unit", "package", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")

obj = config.kiln_obj_root
src = config.kiln_src_root
plugin = os.path.join(obj, "lib", "libkiln.so")
include = os.path.join(src, "runtime", "include")
libdir = os.path.join(obj, "lib")
cxx = config.clangxx

common = f"-std=c++20 -I{include} -I{os.path.join(src, 'test', 'Inputs')}"
link = f"-L{libdir} -lkiln_rt -Wl,-rpath,{libdir}"
config.substitutions.append(("%kiln_plugin", plugin))
config.substitutions.append(
    ("%kiln_cxx_eager", f"{cxx} {common} -O2"))
config.substitutions.append(
    ("%kiln_cxx", f"{cxx} {common} -O2 -fplugin={plugin}"))
config.substitutions.append(("%kiln_link", link))
config.substitutions.append(
    ("%kiln_verify", f"{cxx} {common} -fsyntax-only -fplugin={plugin} -Xclang -verify"))
config.substitutions.append(("%kiln_opt", os.path.join(obj, "bin", "kiln-opt")))
# Plugin arguments: print rewrites and generated code; remarks.
config.substitutions.append(("%kiln_dump", "-fplugin-arg-kiln-dump"))
config.substitutions.append(("%kiln_remarks", "-fplugin-arg-kiln-remarks"))

# `lit --param force-guard-failure=1` (scripts/test-forced-fallback.sh):
# every compiled function's guards fail, so every call runs the original
# body; the harnesses then want eager's results exactly and no fast path.
# Lines about what the fast path did use the prefix %compiled: COMPILED, or
# FORCED in this mode.
forced = lit_config.params.get("force-guard-failure", "0") not in ("", "0")
if forced:
    config.environment["KILN_FORCE_GUARD_FAILURE"] = "1"
    config.available_features.add("forced-guard-failure")
    # Suites that never run a compiled function (kiln-opt's passes and
    # generated code, nvcc compiling it, -fsyntax-only diagnostics) would
    # only repeat the plain run: CI runs both, in 90 minutes.
    config.excludes += ["passes", "codegen", "verify"]
config.substitutions.append(("%compiled", "FORCED" if forced else "COMPILED"))

# A sanitizer build (scripts/sanitize.sh): the plugin and the runtime need
# the sanitizer runtime loaded first, in clang and in the test programs.
# clang frees nothing at exit on purpose: leaks are not checked here (the
# unit tests, instrumented executables, check them). The plugin's inlined
# LLVM allocators poison their slabs, which clang's own (uninstrumented)
# copies never unpoison: user poisoning is off (allow_user_poisoning=0).
if config.kiln_asan_runtime:
    config.environment["LD_PRELOAD"] = config.kiln_asan_runtime
    config.environment["ASAN_OPTIONS"] = (
        "detect_leaks=0:abort_on_error=1:allow_user_poisoning=0")
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    config.available_features.add("sanitized")
    # nvcc (which the plugin runs) without the preloaded runtime
    config.environment["KILN_NVCC"] = os.path.join(
        config.kiln_src_root, "test", "Inputs", "nvcc-no-preload.sh")

# FileCheck, not, count from LLVM 19's tools.
config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, os.path.join(obj, "bin"), config.environment.get("PATH", "")])
# Keep the nvcc cache inside the build tree (or where `--param
# kiln-cache=DIR` says: the sanitizer build's suites reuse the release
# build's kernels, which nvcc, not instrumented, compiled from the same
# source), and pass through CUDA's paths and the generated kernels'
# architectures (CI, without a GPU, compiles them for sm_90 only).
config.environment["KILN_CACHE_DIR"] = lit_config.params.get(
    "kiln-cache", os.path.join(obj, "kiln-cache"))
for var in ["HOME", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "KILN_NVCC", "LD_LIBRARY_PATH",
            "KILN_CUDA_ARCH"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]


def have_cuda_gpu():
    # A GPU is there when nvidia-smi lists one.
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
        return out.returncode == 0 and "GPU" in out.stdout
    except Exception:
        return False


if config.kiln_have_cuda:
    config.available_features.add("nvcc")
if have_cuda_gpu():
    config.available_features.add("cuda-gpu")
else:
    lit_config.note("no CUDA GPU here: tests marked REQUIRES: cuda-gpu are skipped (UNSUPPORTED)")

# The host CPU's vector extensions: tests that run code built for AVX2 or
# AVX-512 (the CPU vector math at those widths) need them.
try:
    with open("/proc/cpuinfo") as f:
        flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
except OSError:
    flags = []
for flag in ["avx2", "fma", "avx512f"]:
    if flag in flags:
        config.available_features.add("cpu-" + flag)
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64")

# Compilers for checking that generated code compiles (codegen suite).
config.substitutions.append(("%clangxx", cxx))
config.substitutions.append(("%kiln_include", include))
if config.kiln_have_cuda:
    config.substitutions.append(("%nvcc", config.cuda_compiler))
    config.substitutions.append(("%cuda_include", config.cuda_include))
