#!/usr/bin/env bash
# Folders are the layers, and includes point only down. A file may include
# its own folder's headers and those of folders in lower layers; not a
# sibling's in its own layer, and never a higher one's.
#   layer 0  base
#   layer 1  sim  traces  policies      (the model, the traces, the policies: each on base alone)
#            adapters/http              (SGLang's HTTP API as values, on base alone)
#            hf                         (Hugging Face files: config, safetensors, tokenizers)
#   layer 2  rl                         (the loop and the backend interface)
#            tasks                      (live training tasks: prompts and rewards, on hf and base)
#   layer 3  adapters/sim adapters/live (backends)
#   layer 4  scenario                   (a scenario resolved and one run assembled)
#   layer 5  studies                    (many runs: sweeps, tuning, calibration, validation)
#   layer 6  cli
# usage: include_layers_check.sh ROOT   (exits 1 naming every upward include)
set -u
root=$1
layer_of() {
  case $1 in
    base) echo 0 ;;
    sim | traces | policies | adapters/http | hf) echo 1 ;;
    rl | tasks) echo 2 ;;
    adapters/sim | adapters/live) echo 3 ;;
    scenario) echo 4 ;;
    studies) echo 5 ;;
    cli) echo 6 ;;
    *) echo "" ;;
  esac
}
folder_of() {  # a path inside the tree -> its layer folder
  case $1 in
    adapters/*) echo "$1" | cut -d/ -f1-2 ;;
    *) echo "$1" | cut -d/ -f1 ;;
  esac
}
bad=0
checked=0
cd "$root" || exit 2
while IFS= read -r file; do
  from=$(folder_of "$file")
  from_layer=$(layer_of "$from")
  [ -n "$from_layer" ] || continue
  while IFS= read -r inc; do
    to=$(folder_of "$inc")
    to_layer=$(layer_of "$to")
    [ -n "$to_layer" ] || continue  # not one of ours (a system or third-party header)
    checked=$((checked + 1))
    if [ "$to" != "$from" ] && [ "$to_layer" -ge "$from_layer" ]; then
      echo "upward include: $file (layer $from_layer, $from) includes \"$inc\" (layer $to_layer, $to)"
      bad=$((bad + 1))
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find base sim traces policies hf rl tasks adapters scenario studies cli -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.in' \) 2>/dev/null | sort)
if [ $bad -gt 0 ]; then
  echo "$bad upward includes"
  exit 1
fi
echo "every include points down ($checked checked)"
