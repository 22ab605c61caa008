#!/bin/sh
# Fails when a C++ file under cli/, lib/ or tests/ does not follow .clang-format,
# when a header under lib/ declares an error out-parameter (std::string& error,
# std::string& err, std::string& why, std::string* why, ...): libpai returns
# util::Result<T> instead, or when a file of lib/check includes one of lib/deploy.
#   scripts/check-format.sh         check (exit 1 and the list of files when any differ)
#   scripts/check-format.sh --fix   rewrite them in place
set -eu
cd "$(dirname "$0")/.."
CF=${CLANG_FORMAT:-clang-format}
if ! command -v "$CF" >/dev/null 2>&1; then
  echo "check-format: $CF not found (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
files=$(git ls-files 'cli/*.cc' 'cli/*.h' 'lib/*.cc' 'lib/*.h' 'tests/*.cc' 'tests/*.h' 2>/dev/null ||
  find cli lib tests -name '*.cc' -o -name '*.h')
if [ "${1:-}" = "--fix" ]; then
  # shellcheck disable=SC2086
  $CF -i $files
  exit 0
fi

# Error out-parameters in libpai's headers: a non-const std::string& or
# std::string* named error, err or why (comments aside).
headers=$(git ls-files 'lib/*.h' 2>/dev/null || find lib -name '*.h')
# shellcheck disable=SC2086
out_params=$(awk '
  /^[ \t]*\/\// { next }
  {
    l = $0
    gsub(/const[ \t]+std::string[ \t]*[&*][ \t]*(error|err|why)[ \t]*[,)=]/, "", l)
    if (l ~ /std::string[ \t]*[&*][ \t]*(error|err|why)[ \t]*[,)=]/)
      printf "  %s:%d: %s\n", FILENAME, FNR, $0
  }' $headers)
if [ -n "$out_params" ]; then
  echo "$out_params" >&2
  echo "check-format: the headers above declare an error out-parameter; return util::Result<T> instead (lib/util/result.h)" >&2
  exit 1
fi

# Checks stand below deployment (docs/architecture.md): nothing in lib/check
# includes a header of lib/deploy.
check_files=$(git ls-files 'lib/check/*' 2>/dev/null || find lib/check -type f)
# shellcheck disable=SC2086
upward=$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"deploy/' $check_files /dev/null || true)
if [ -n "$upward" ]; then
  echo "$upward" | sed 's/^/  /' >&2
  echo "check-format: lib/check includes lib/deploy above; move what it needs below both (docs/architecture.md)" >&2
  exit 1
fi

# One clang-format run over every file; it names each line that differs.
# shellcheck disable=SC2086
if ! out=$($CF --dry-run -Werror $files 2>&1); then
  echo "$out" | grep -E '^[^ ].*: (error|warning):' | cut -d: -f1 | sort -u | sed 's/^/  /' >&2
  echo "check-format: the files above do not follow .clang-format (scripts/check-format.sh --fix)" >&2
  exit 1
fi
echo "check-format: $(echo "$files" | wc -w) files follow .clang-format"
