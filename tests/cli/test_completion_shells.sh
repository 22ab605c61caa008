# The zsh and fish completion scripts in the real shells: zsh with compinit and the
# script sourced, _paictl called as the completion system calls it (compadd
# recorded); fish with the script sourced and `complete -C` asking it. POSIX sh.
set -eu
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
export PAICTL_LAYOUTS=$PAI_SOURCE_DIR/layouts
own_home
BIN=$(dirname "$PAICTL")
OUT="$TMP/out" ERR="$TMP/err"

# A missing shell skips its part; under PAI_REQUIRE_ALL=1 (CI: .ci/run, or CI set) it
# fails (tests/skip.sh).
. "$PAI_SOURCE_DIR/tests/skip.sh"
need_shell() {
  if command -v "$1" >/dev/null 2>&1; then return 0; fi
  if pai_require_all || [ -n "${CI:-}" ]; then fail "no $1 under PAI_REQUIRE_ALL=1/CI (scripts/install-deps.sh installs it)"; else
    echo "skip: no $1 (install Debian's $1 to test its completion)"; fi
  return 1
}
offers() { if grep -qx -- "$1" "$OUT"; then pass "$2"; else fail "$2: no \"$1\" among:"; sed 's/^/  | /' "$OUT" >&2; fi; }
not_offers() { if grep -qx -- "$1" "$OUT"; then fail "$2: \"$1\" offered"; else pass "$2"; fi; }

REG="$XDG_CONFIG_HOME/paictl/clusters.yaml"
mkdir -p "$(dirname "$REG")"
printf 'apiVersion: paictl/v1\nkind: ClusterRegistry\ncurrent: lab\nclusters:\n- name: lab\n  uri: https://pai.lab.example.com\n  user: alice\n  token: t\n' >"$REG"
chmod 600 "$REG"

if need_shell zsh; then
  "$PAICTL" completion zsh >"$TMP/_paictl"
  if zsh -n "$TMP/_paictl" 2>"$ERR"; then pass "zsh -n: the script parses"; else fail "zsh -n"; cat "$ERR" >&2; fi
  # zsh_complete WORD...: the words _paictl hands to compadd for the last word.
  zsh_complete() {
    PATH="$BIN:$PATH" zsh -f -c '
      autoload -U compinit && compinit -u -D || exit 9
      source '"$TMP/_paictl"' || exit 9
      [[ $_comps[paictl] == _paictl ]] || { print -u2 "compdef did not register _paictl"; exit 8; }
      compadd() { while [[ $1 == -* && $1 != -- ]]; do shift; done; [[ $1 == -- ]] && shift; print -l -- "$@"; }
      _files() { print -- ":files"; }
      words=(paictl "$@"); CURRENT=$#words
      _paictl' zsh "$@" >"$OUT" 2>"$ERR" || { fail "zsh completion failed ($?): $*"; sed 's/^/  | /' "$ERR" >&2; }
  }
  zsh_complete che;              offers check "zsh: a command"; not_offers cluster "zsh: only matching commands"
  zsh_complete job tag "";       offers add "zsh: a third level"
  zsh_complete plan --v;         offers --vc "zsh: a flag"; offers --verbose "zsh: a global flag"
  zsh_complete cluster use "";   offers lab "zsh: registered clusters"
  zsh_complete check config "";  offers :files "zsh: file names for a PATH"
fi

if need_shell fish; then
  # fish_complete LINE: what fish's own `complete -C` offers (first column).
  fish_complete() {
    PATH="$BIN:$PATH" fish --no-config -c 'source (paictl completion fish | psub); complete -C "$argv[1]"' "$1" \
      2>"$ERR" | cut -f1 >"$OUT" || fail "fish completion failed: $1"
  }
  fish_complete "paictl che";           offers check "fish: a command"; not_offers cluster "fish: only matching"
  fish_complete "paictl check con";     offers config "fish: a subcommand"
  fish_complete "paictl plan -o ";      offers json "fish: -o values"
  fish_complete "paictl cluster use ";  offers lab "fish: registered clusters"
  fish_complete "paictl plan --odd-hosts "; offers exclude "fish: a flag's choices"
fi
finish
