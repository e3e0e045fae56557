#!/usr/bin/env bash
# The GPU check for one short window on a GPU node (docs/gpu.md).
#
# On a connected machine, beforehand (a Python with the harness's dependencies, pip and uv):
#   scripts/gpu-check.sh --prepare DIR [--python-version 3.12] [--platform manylinux_2_28_x86_64]
#     -> DIR/part-NN/ folders of at most 60 MiB: every wheel the chosen cases and the harness need,
#        the torch family left out (the node's own torch is used). Carry the checkout and DIR to the node.
# On the GPU node (no network; its python3 has torch):
#   scripts/gpu-check.sh --wheels DIR [--python /path/to/python3] [--output OUT] [-- more gpu-check options]
#     -> OUT/gpu-check.json and OUT/gpu-check.md (default OUT: reports/gpu-check)
# On a host without a GPU the same command is a dry run: cuda-sim only, with the given python's torch.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
WHEELS=""
OUT="$ROOT/reports/gpu-check"
PREPARE=""
PYVER=3.12
PLATFORM=manylinux_2_28_x86_64
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --prepare) PREPARE=$2; shift 2 ;;
    --python-version) PYVER=$2; shift 2 ;;
    --platform) PLATFORM=$2; shift 2 ;;
    --wheels) WHEELS=$2; shift 2 ;;
    --python) PYTHON=$2; shift 2 ;;
    --output) OUT=$2; shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "gpu-check.sh: unknown option $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
cd "$ROOT"

if [ -n "$PREPARE" ]; then
  HARNESS_PYTHON=${HARNESS_PYTHON:-$PYTHON}
  mapfile -t CHOSEN < <("$HARNESS_PYTHON" -c 'from harness.gpucheck._check import CHOSEN; print("\n".join(CHOSEN))')
  exec "$HARNESS_PYTHON" -m harness wheelhouse --with-harness "${CHOSEN[@]/#/--case=}" \
    --python-version "$PYVER" --platform "$PLATFORM" --split-mib 60 --output "$PREPARE"
fi

# The harness needs its own dependencies; a bare node gets them from the wheelhouse, in a venv that sees
# the node's packages (its torch, for the scenario table) after the harness's own.
NEEDS='import rich, jsonschema, fastjsonschema, yaml, jinja2, filelock, packaging, regex, pytest, uv'
HARNESS_PYTHON=$PYTHON
if ! "$PYTHON" -c "$NEEDS" 2>/dev/null; then
  if [ -z "$WHEELS" ]; then
    echo "gpu-check.sh: $PYTHON lacks the harness's dependencies; pass --wheels DIR (made by --prepare)" >&2
    exit 2
  fi
  VENV="$OUT/.harness-venv"
  mkdir -p "$OUT"
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
    # The node's packages (its torch, for the scenario table) after the venv's own: a .pth, which works for
    # a system python and for a venv alike (--system-site-packages would see a venv's base, not the venv).
    "$PYTHON" -c 'import site; print("\n".join(site.getsitepackages()))' \
      > "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/zz-node-packages.pth"
  fi
  LINKS=()
  for dir in "$WHEELS" "$WHEELS"/part-*; do [ -d "$dir" ] && LINKS+=(--find-links "$dir"); done
  "$VENV/bin/python" -m pip install --quiet --no-index "${LINKS[@]}" \
    $("$PYTHON" -m harness._requirements)
  HARNESS_PYTHON="$VENV/bin/python"
fi

ARGS=(--python "$PYTHON" --output "$OUT")
[ -n "$WHEELS" ] && ARGS+=(--find-links "$WHEELS" --offline)
exec "$HARNESS_PYTHON" -m harness gpu-check "${ARGS[@]}" "${EXTRA[@]}"
