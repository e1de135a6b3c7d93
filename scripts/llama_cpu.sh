#!/usr/bin/env bash
# Prints the llama.cpp CPU build for this machine: its name on the first line (the wheel cache
# keeps one wheel per name), its CMAKE_ARGS on the second.
#
# Why not GGML_NATIVE=ON: -march=native also turns on AMX, whose code crashed on some CPUs here.
# Why not the portable default alone: it is AVX2 only, and with AVX-512 (VNNI) prompts are read
# 1.37-1.53x faster on this project's 2-core machines (bench/llama_cpu.py: 91.6 against 66.9
# tokens/s; generation is memory-bound and the same). So: AVX-512 with the extensions the CPU lists, never AMX.
# CHATPAPERS_LLAMA_CPU=portable forces AVX2 (a Docker image or a wheel built for other machines);
# CPUINFO names another cpuinfo file (tests).
set -euo pipefail
flags=$(grep -m1 '^flags' "${CPUINFO:-/proc/cpuinfo}" 2>/dev/null || true)
has() { [[ " $flags " == *" $1 "* ]]; }

args="-DGGML_NATIVE=OFF"
if [ "${CHATPAPERS_LLAMA_CPU:-auto}" != portable ] \
    && has avx512f && has avx512bw && has avx512vl && has avx512dq && has avx512cd; then
    name=avx512
    args+=" -DGGML_AVX512=ON"
    has avx512_vnni && { name+="-vnni"; args+=" -DGGML_AVX512_VNNI=ON"; }
    has avx512vbmi && { name+="-vbmi"; args+=" -DGGML_AVX512_VBMI=ON"; }
    has avx512_bf16 && { name+="-bf16"; args+=" -DGGML_AVX512_BF16=ON"; }
else
    name=avx2
fi
echo "$name"
echo "$args"
