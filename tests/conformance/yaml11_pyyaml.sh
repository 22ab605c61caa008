#!/bin/sh
# lib/yaml's model of PyYAML's scalar types (yaml/yaml11.h) against PyYAML itself.
#   yaml11_pyyaml.sh YAML_SUITE_BINARY SCALARS_FILE
set -eu
. "$(dirname "$0")/../skip.sh"
if ! python3 -c 'import yaml' 2>/dev/null; then
  skip_test "python3 with PyYAML is not installed (scripts/install-deps.sh installs python3-yaml)"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$1" --pyyaml-types "$2" >"$out/ours"
python3 "$(dirname "$0")/pyyaml_types.py" "$2" >"$out/pyyaml"
if ! diff -u "$out/pyyaml" "$out/ours" >"$out/diff"; then
  echo "lib/yaml reads these scalars unlike PyYAML (- PyYAML, + lib/yaml's model):"
  cat "$out/diff"
  exit 1
fi
echo "PyYAML model: $(wc -l <"$2") scalars read as PyYAML reads them"
