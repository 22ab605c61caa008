# The docs against the product: the environment variables the source reads, the
# job commands of docs/jobs.md's table, the README's shown output of check config,
# and the machine profiles a binary finds on its own. POSIX sh.
set -eu
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
cd "$PAI_SOURCE_DIR"

# --- docs/environment.md names every variable lib/ and cli/ read ----------------------
vars=$(grep -rhoE '(getenv|env)\("[A-Za-z_][A-Za-z0-9_]*"\)' lib cli | sed -E 's/.*\("([^"]*)"\)/\1/' | sort -u)
n=$(echo "$vars" | wc -l)
[ "$n" -ge 20 ] && pass "the source reads $n environment variables" || fail "only $n variables found: $vars"
for v in $vars; do
  grep -qF "\`$v\`" docs/environment.md || fail "docs/environment.md does not name $v"
done
pass "docs/environment.md names every variable"

# --- docs/jobs.md's command table lists every job command -----------------------------
"$PAICTL" __commands >"$TMP/commands"
grep '^paictl job ' "$TMP/commands" | grep -v '^paictl job tag$' >"$TMP/job-commands"
[ "$(wc -l <"$TMP/job-commands")" -ge 15 ] || fail "too few job commands: $(cat "$TMP/job-commands")"
sed -n '/^| command | what it does | needs a cluster |/,/^$/p' docs/jobs.md >"$TMP/job-table"
while read -r c; do
  # "paictl job tag add" is in the table as `paictl job tag add|remove|list ...`.
  sub=${c#paictl job }
  first=${sub%% *}
  rest=${sub#"$first"}
  rest=${rest# }
  if [ -z "$rest" ]; then
    grep -q "^| \`paictl job ${first}[ \`]" "$TMP/job-table" || fail "docs/jobs.md's table lacks $c"
  else
    grep -q "^| \`paictl job $first [^\`]*$rest" "$TMP/job-table" || fail "docs/jobs.md's table lacks $c"
  fi
done <"$TMP/job-commands"
pass "docs/jobs.md's table has every job command"

# --- the README's check config example is what paictl prints --------------------------
# The block that starts with "$ paictl check config examples/clusters/broken": its
# last line (the summary) and its first finding are the real command's.
sed -n '/^\$ paictl check config examples\/clusters\/broken$/,/^```$/p' README.md | sed '$d' >"$TMP/readme"
[ -s "$TMP/readme" ] || fail "README.md has no output of paictl check config examples/clusters/broken"
set +e
NO_COLOR=1 "$PAICTL" check config examples/clusters/broken >"$TMP/real" 2>&1
set -e
want=$(tail -1 "$TMP/real")
shown=$(tail -1 "$TMP/readme")
if [ "$shown" = "$want" ]; then pass "README: the summary line is paictl's ($want)"; else fail "README.md shows \"$shown\", paictl prints \"$want\""; fi
first=$(sed -n 2p "$TMP/readme")
if grep -qxF -- "$first" "$TMP/real"; then pass "README: the first finding is paictl's"; else fail "README.md's first finding is not in paictl's output: $first"; fi

# --- plan --list-profiles finds the profiles without --layouts -------------------------
# From the build tree (the source tree's layouts/), from elsewhere: the same list.
unset PAICTL_LAYOUTS
expected=$(ls layouts | while read -r d; do [ -f "layouts/$d/profile.yaml" ] && echo "$d"; done | sort)
[ -n "$expected" ] || fail "no profiles in layouts/"
(cd / && "$PAICTL" plan --list-profiles -o json) >"$TMP/profiles.json"
got=$(python3 -c 'import json,sys; print("\n".join(sorted(p["name"] for p in json.load(open(sys.argv[1]))["items"])))' "$TMP/profiles.json")
if [ "$got" = "$expected" ]; then pass "plan --list-profiles from / lists every profile of layouts/"; else fail "plan --list-profiles from /: $got"; fi
(cd / && "$PAICTL" plan --profile dgx-a100 --count 2 -o json) >"$TMP/plan.json" 2>"$TMP/plan.err" || { cat "$TMP/plan.err" >&2; fail "plan --profile from / without --layouts"; }
pass "plan --profile finds its profile from any directory"
finish
