#!/bin/sh
# Fails when a C++ file under cli/, lib/ or tests/ does not follow .clang-format,
# or when a header under lib/ declares an error out-parameter (`std::string& error`,
# `std::string* error`, `std::string& why`, `std::string* why`...): a call that can
# fail returns util::Result<T> (docs/coding-guidelines.md, "Results and errors").
# Headers still to convert are listed in scripts/out-params-allowed.txt.
#   scripts/check-format.sh         check (exit 1 and the list of files when any differ)
#   scripts/check-format.sh --fix   rewrite them in place (the formatting only)
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
# One clang-format run over every file; it names each line that differs.
# shellcheck disable=SC2086
if ! out=$($CF --dry-run -Werror $files 2>&1); then
  echo "$out" | grep -E '^[^ ].*: (error|warning):' | cut -d: -f1 | sort -u | sed 's/^/  /' >&2
  echo "check-format: the files above do not follow .clang-format (scripts/check-format.sh --fix)" >&2
  exit 1
fi
echo "check-format: $(echo "$files" | wc -w) files follow .clang-format"

# Error out-parameters in lib/ headers: a non-const std::string reference or
# pointer parameter named error, err or why.
allowed=scripts/out-params-allowed.txt
# shellcheck disable=SC2046
found=$(grep -nE '(^|[^[:alnum:]_])std::string[[:space:]]*[&*][[:space:]]*(error|err|why)[[:space:]]*[,)=]' \
  $(git ls-files 'lib/*.h' 2>/dev/null || find lib -name '*.h') | grep -vE 'const[[:space:]]+std::string' || true)
bad=""
bad=$(echo "$found" | while IFS= read -r line; do
  [ -n "$line" ] || continue
  file=${line%%:*}
  grep -qxF "$file" "$allowed" 2>/dev/null || echo "$line"
done)
if [ -n "$bad" ]; then
  echo "$bad" | sed 's/^/  /' >&2
  echo "check-format: error out-parameters in lib/ headers (above): return util::Result<T> instead" >&2
  echo "  (docs/coding-guidelines.md, \"Results and errors\")" >&2
  exit 1
fi
stale=$(grep -v '^#' "$allowed" 2>/dev/null | while IFS= read -r file; do
  [ -n "$file" ] || continue
  echo "$found" | grep -q "^$file:" || echo "$file"
done)
if [ -n "$stale" ]; then
  echo "$stale" | sed 's/^/  /' >&2
  echo "check-format: $allowed lists headers without error out-parameters (above): remove them" >&2
  exit 1
fi
