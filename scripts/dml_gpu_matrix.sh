#!/usr/bin/env bash
# The DirectML release matrix on a GPU machine set up by scripts/dml_gpu_env.sh (source it first):
# each release's DirectML.dll beside the stack's onnxruntime.dll and worker, the matrix selection
# and the real models run on each, one report folder per release.
#
#   scripts/dml_gpu_matrix.sh REPORTS DLLS V [V ...]
#
# DLLS holds <V>.xz, each release's DirectML.dll compressed with xz (made from
# ~/.cache/ort_layouts/dml/directml/<V>/DirectML.dll after `ort-layouts setup dml --dml-version V`);
# a V without a file there must already be set up under $ORT_LAYOUTS_DML_HOME/directml/<V>/, or be
# the stack's own release ("own": bin/DirectML.dll). Reports go to REPORTS/dml-<V>/ (the selection)
# and REPORTS/dml-<V>-models/<model>/ (models/real/*.onnx); merge them with
#   ort-layouts merge REPORTS/dml-* --out MATRIX
set -euo pipefail
reports=$1; dlls=$2; shift 2
home=${ORT_LAYOUTS_DML_HOME:?source scripts/dml_gpu_env.sh first}
python=${PYTHON:-python3}
ops=Transpose,Expand,Pad,Slice,Concat,Split,Tile,DepthToSpace,SpaceToDepth
for v in "$@"; do
  args=()
  if [ "$v" != own ]; then
    dir=$home/directml/$v
    mkdir -p "$dir"
    if [ -f "$dlls/$v.xz" ]; then xz -dc "$dlls/$v.xz" > "$dir/DirectML.dll"; fi
    for f in onnxruntime.dll ort_layouts_dml_worker.exe ort_layouts_dml_worker.exe.sha256; do
      cp -f "$home/bin/$f" "$dir/$f"
    done
    args=(--dml-version "$v")
  fi
  echo "== DirectML $v"
  start=$(date +%s)
  "$python" -m ort_layouts validate --provider dml "${args[@]}" --ops "$ops" \
    --dtypes float32,float16,int32,int64,uint8 --ranks 2,3,4 --report "$reports/dml-$v/" || true
  for model in models/real/*.onnx; do
    "$python" -m ort_layouts validate --provider dml "${args[@]}" --model "$model" \
      --report "$reports/dml-$v-models/$(basename "$model" .onnx)/" | tail -n 1 || true
  done
  echo "== DirectML $v: $(( $(date +%s) - start )) s"
done
