# Shell completion in a real bash (the script of `paictl completion bash` sourced,
# _paictl called as bash calls it), and the man pages made at build time. POSIX sh.
set -eu
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
: "${PAI_BUILD_DIR:?}"
export PAICTL_LAYOUTS=$PAI_SOURCE_DIR/layouts
own_home
BIN=$(dirname "$PAICTL")
OUT="$TMP/out" ERR="$TMP/err"

if ! command -v bash >/dev/null 2>&1; then echo "skip: no bash"; exit 0; fi

# complete WORD...: what bash offers for the last word (one a line in $OUT).
complete_words() {
  OUT="$TMP/out"
  PATH="$BIN:$PATH" bash --norc --noprofile -c '
    source <(paictl completion bash) || exit 9
    COMP_WORDS=(paictl "$@"); COMP_CWORD=$#; COMP_LINE="paictl $*"; COMP_POINT=${#COMP_LINE}
    _paictl
    printf "%s\n" "${COMPREPLY[@]}"' bash "$@" >"$OUT" 2>"$TMP/err" || fail "bash completion failed: $*"
}
offers() { if grep -qx -- "$1" "$OUT"; then pass "$2"; else fail "$2: no \"$1\" among:"; sed 's/^/  | /' "$OUT" >&2; fi; }
not_offers() { if grep -qx -- "$1" "$OUT"; then fail "$2: \"$1\" offered"; else pass "$2"; fi; }

PATH="$BIN:$PATH" bash -i -c 'source <(paictl completion bash) && complete -p paictl' >"$OUT" 2>/dev/null || true
expect_out "complete -F _paictl paictl" "bash -i: complete -p shows paictl's completion"

complete_words ch;                 offers check "a command"
not_offers cluster "only commands that match"
complete_words check con;          offers config "a subcommand"
complete_words job tag "";         offers add "a third level"; offers remove "a third level (remove)"
complete_words "";                 offers plan "every command"; not_offers __complete "no hidden commands"
complete_words plan --v;           offers --vc "a flag of the command"; offers --verbose "a global flag"
complete_words check config --fail; offers --fail-on-warn "check config's flag"
complete_words plan -o "";         offers json "-o values"; offers wide "-o wide"; offers yaml "-o yaml"
complete_words cluster list --output y; offers yaml "--output values"
complete_words plan --odd-hosts "";  offers exclude "a flag's choices (--odd-hosts)"
complete_words plan --profile dgx;   offers dgx-a100 "profile names"; not_offers t4-2socket "profiles that match only"
complete_words simulate --policy hived,q; offers hived,quota "policy names in a comma list"
complete_words simulate --trace-format ""; offers helios "trace formats"
complete_words help check c;       offers config "help COMMAND"
complete_words completion "";      offers zsh "shells"
complete_words check config "$PAI_SOURCE_DIR/examples/clus"; offers "$PAI_SOURCE_DIR/examples/clusters" "paths for a PATH"

# Registered clusters, read from the registry.
REG="$XDG_CONFIG_HOME/paictl/clusters.yaml"
mkdir -p "$(dirname "$REG")"
printf 'apiVersion: paictl/v1\nkind: ClusterRegistry\ncurrent: lab\nclusters:\n- name: lab\n  uri: https://pai.lab.example.com\n  user: alice\n  token: t\n- name: cloud\n  uri: https://pai.cloud.example.com\n  user: alice\n  token: t\n' >"$REG"
chmod 600 "$REG"
complete_words cluster use "";     offers lab "cluster names (use)"; offers cloud "cluster names (cloud)"
complete_words job submit x.yaml --cluster ""; offers auto "--cluster auto"; offers cloud "--cluster names"
complete_words cluster remove cl;  offers cloud "cluster names (remove)"; not_offers lab "matching names only"

# zsh and fish get their script too.
run completion zsh
expect_out "compdef _paictl paictl" "zsh script"
run completion fish
expect_out "complete -c paictl" "fish script"
run completion tcsh
expect_rc 2 "an unknown shell"

# --- man pages: generated at build time from the command table ---------------------------
MAN=$PAI_BUILD_DIR/man
for page in paictl paictl-check-config paictl-job-tag-add paictl-simulate paictl-completion; do
  if [ -s "$MAN/$page.1" ]; then pass "man page $page.1"; else fail "no man page $page.1"; fi
done
if grep -q '^\.SH EXAMPLES' "$MAN/paictl-check-config.1" && grep -q 'fail\\-on\\-warn' "$MAN/paictl-check-config.1"; then
  pass "paictl-check-config.1 has its flags and examples"; else fail "paictl-check-config.1 content"; fi
"$PAICTL" __commands | sed 's/ /-/g' | while read -r page; do
  [ -s "$MAN/$page.1" ] || echo "$page" >>"$TMP/missing"
done
if [ -s "$TMP/missing" ]; then fail "commands without a man page: $(cat "$TMP/missing")"; else pass "every command has a man page"; fi
if command -v man >/dev/null 2>&1 && man -l "$MAN/paictl-plan.1" 2>/dev/null | grep -q "detailed"; then
  pass "man renders paictl-plan.1"
fi
finish
