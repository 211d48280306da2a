#!/usr/bin/env bash
# The live backend on a CUDA machine, in one command: builds april against the
# machine's PyTorch (python3 -c 'import torch'), runs the live test suite on
# the GPU (and on the CPU with the same libtorch), times decode against the
# HBM roofline, and profiles, calibrates and validates on the GPU.
#
# usage: scripts/gpu-build-and-test.sh [STAGE...]
#   build      configure and build into build-cuda (RelWithDebInfo, CUDA graphs on;
#              if that build fails, once more with APRIL_CUDA_GRAPHS=OFF)
#   test       the live tests with APRIL_LIVE_DEVICE=cuda, then on the CPU,
#              then the rest of ctest (the non-live tests)
#   roofline   april_live_bench: medium and large, batch 64 and 256
#   validate   april profile/calibrate/validate --device cuda: sync, april and
#              the asynchronous policies on two length tails
#   (no stage: build test roofline)
#
# Environment:
#   OUT              where logs and results go (default build-cuda/out)
#   APRIL_DEPS_DEBS  a folder of Debian packages (.deb) to unpack and build
#                    against, for a machine with no package manager access
#                    (the core dependencies: Boost headers and program_options,
#                    fmt, nlohmann-json, SQLite, GoogleTest). Without it, they
#                    must be installed (scripts/setup.sh lists them).
#   PYTHON           the python that has torch (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=$root/build-cuda
out=$(realpath -m "${OUT:-$build/out}")
mkdir -p "$out"
python=${PYTHON:-python3}
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test roofline)
[ -d /usr/local/cuda/bin ] && export PATH=/usr/local/cuda/bin:$PATH

prefix_path=$($python -c 'import torch; print(torch.utils.cmake_prefix_path)')
if [ -n "${APRIL_DEPS_DEBS:-}" ]; then
  deps=$build/deps
  if [ ! -d "$deps/usr" ]; then
    mkdir -p "$deps"
    for f in "$APRIL_DEPS_DEBS"/*.deb; do dpkg-deb -x "$f" "$deps"; done
  fi
  prefix_path="$prefix_path;$deps/usr"
  export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

configure() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix_path" \
    -DAPRIL_WITH_MPI=OFF -DAPRIL_LIVE_BENCH_ONLY=ON "$@"
}

stage_build() {
  {
    echo "== machine"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
    $python -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
    c++ --version | head -1
    cmake --version | head -1
  } | tee "$out/machine.txt"
  if configure -DAPRIL_CUDA_GRAPHS=ON > "$out/configure.log" 2>&1 &&
     cmake --build "$build" -j"$(nproc)" -- -k 0 > "$out/build.log" 2>&1; then
    echo "build: ok (CUDA graphs on)"
  else
    echo "build with CUDA graphs failed; errors:"
    grep -E "error|Error" "$out/configure.log" "$out/build.log" | head -40 || true
    configure -DAPRIL_CUDA_GRAPHS=OFF > "$out/configure_nographs.log" 2>&1
    cmake --build "$build" -j"$(nproc)" -- -k 0 > "$out/build_nographs.log" 2>&1 || {
      grep -E "error" "$out/build_nographs.log" | head -60
      exit 1
    }
    echo "build: ok (CUDA graphs off)"
  fi
  echo "compiler warnings: $(grep -c 'warning:' "$out/build.log" || true)"
}

stage_test() {
  local rc=0
  echo "== live tests on cuda"
  APRIL_LIVE_DEVICE=cuda "$build/tests/april_live_tests" --gtest_output="json:$out/live_tests_cuda.json" > "$out/live_tests_cuda.log" 2>&1 || rc=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|FAILED  \]|Failure|error" "$out/live_tests_cuda.log" | tail -40
  echo "== live tests on cpu (this libtorch)"
  APRIL_LIVE_DEVICE=cpu "$build/tests/april_live_tests" --gtest_output="json:$out/live_tests_cpu.json" > "$out/live_tests_cpu.log" 2>&1 || rc=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$out/live_tests_cpu.log" | tail -20
  echo "== the other tests"
  (cd "$build" && ctest -LE live -j"$(nproc)" --output-on-failure > "$out/ctest_core.log" 2>&1) || rc=1
  grep -E "tests passed|Failed|\*\*\*" "$out/ctest_core.log" | tail -20
  return $rc
}

stage_roofline() {
  echo "== decode against the roofline (fused attention; bfloat16, then float32)"
  for dtype in bf16 fp32; do
    for size in medium large; do
      for slots in 64 256; do
        "$build/bench/april_live_bench" "$size" "$slots" 1 cuda fused $dtype | tee -a "$out/roofline.txt"
      done
    done
  done
}

stage_validate() {
  local april="$build/cli/april" v="$out/validate"
  mkdir -p "$v"
  local common=(--set live.model=medium --set live.slots=64 --set live.fused_attention=true --set live.engine_dtype=bfloat16
                --set live.exact_prefill=false --set live.prefill_pad_tok=16 --set live.eval_prompts=0)
  "$april" profile --device cuda "${common[@]}" --repeats 2 --out "$v/profile.json" | tail -3
  "$april" calibrate "$v/profile.json" --out "$v/model.json" | tail -3
  for sigma in 0.5 1.0; do
    timeout "${APRIL_VALIDATE_TIMEOUT_S:-170}" "$april" validate --device cuda --calibration "$v/model.json" "${common[@]}" \
      --set live.task_sigma=$sigma --policy sync,april,one_step_off,async --steps "${APRIL_VALIDATE_STEPS:-12}" --out "$v/sigma$sigma" | tail -40
  done
}

# A failed build stops here; failed tests are reported and the later stages still run.
failed=0
for s in "${stages[@]}"; do
  case "$s" in
    build) stage_build ;;
    test) stage_test || failed=1 ;;
    roofline) stage_roofline || failed=1 ;;
    validate) stage_validate || failed=1 ;;
    *) echo "unknown stage '$s' (build, test, roofline, validate)" >&2; exit 2 ;;
  esac
done
exit $failed
