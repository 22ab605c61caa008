# paictl init end to end on the bundled facts: the files a cluster directory
# needs, check config's verdict, the admin password (0600, never shown), refusals,
# --force, and check config / install on a directory without config.yaml. POSIX sh.
set -eu
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
FACTS=$PAI_SOURCE_DIR/examples/facts
export PAICTL_LAYOUTS=$PAI_SOURCE_DIR/layouts
C=$TMP/cluster
printf 'Host *\n  User root\n  Port 2222\n' >"$TMP/ssh_config"
: >"$TMP/key"

# --- a dry run writes nothing and masks the password ------------------------------------
run init "$C" --facts "$FACTS" --master 10.20.0.10 --vc research=60% --ssh-config "$TMP/ssh_config" \
  --ssh-key "$TMP/key" --ignore-check-errors CPU,DNS --dry-run
expect_rc 0 "init --dry-run"
expect_out "--- $C/layout.yaml (mode 0644)" "the dry run shows layout.yaml"
expect_out "--- $C/services-configuration.yaml (mode 0600)" "the dry run shows the services file at 0600"
expect_out "default-pai-admin-password: (generated" "the password is masked"
expect_out "ignore_check_errors: [CPU, DNS]" "the dry run shows the settings"
if [ -e "$C" ]; then fail "a dry run created $C"; else pass "a dry run writes nothing"; fi

# --- init writes the directory; check config passes it ---------------------------------
run init "$C" --facts "$FACTS" --master 10.20.0.10 --vc research=60% --ssh-config "$TMP/ssh_config" \
  --ssh-key "$TMP/key" --ignore-check-errors CPU,DNS
expect_rc 0 "init"
expect_out "wrote $C/layout.yaml, config.yaml, services-configuration.yaml (mode 0600)" "says what it wrote"
for f in layout.yaml config.yaml services-configuration.yaml; do
  if [ -s "$C/$f" ]; then pass "wrote $f"; else fail "$f missing"; fi
done
if [ "$(stat -c %a "$C/services-configuration.yaml")" = 600 ]; then pass "services file is 0600"; else fail "services file mode"; fi
if grep -q "^ssh_config: $TMP/ssh_config$" "$C/config.yaml"; then pass "config.yaml names the ssh config"; else fail "ssh_config: $(cat "$C/config.yaml")"; fi
if grep -q '^    pai-master: "true"' "$C/layout.yaml" && grep -B3 'machine-type: master' "$C/layout.yaml" | grep -q 'hostname: pai-master'; then
  pass "the master named by its address"
else fail "master"; fi
PW=$(sed -n 's/^  default-pai-admin-password: "\(.*\)"$/\1/p' "$C/services-configuration.yaml")
if [ ${#PW} -eq 24 ]; then pass "a 24-character password"; else fail "password length ${#PW}"; fi
if grep -qF "$PW" "$OUT" "$ERR"; then fail "the password was printed"; else pass "the password is not printed"; fi
run check config "$C"
expect_rc 0 "check config passes on what init wrote"
expect_out "0 errors, 0 warnings in 3 files" "no finding at all"

# --- the directory's settings are the commands' defaults; flags override them -------
run check hosts "$C" --dry-run --limit pai-master
expect_rc 0 "check hosts --dry-run on the init directory"
expect_out "connect   root@10.20.0.10:2222" "the port of config.yaml's ssh_config, with no --ssh-config"
expect_out "$TMP/key" "config.yaml's key"
run check hosts "$C" --dry-run --limit pai-master --ssh-config none
expect_out "connect   root@10.20.0.10:22 " "--ssh-config none overrides it"

# --- refusals -----------------------------------------------------------------------
run init "$C" --facts "$FACTS" --master pai-master
expect_rc 2 "init into a non-empty directory"
expect_err "exists and is not empty" "says why"
expect_err "--force" "hints at --force"
run init "$TMP/x" --facts "$FACTS" --ssh-key "$TMP/nokey" --ignore-check-errors Nope
expect_rc 2 "bad flags"
expect_err "--ssh-key $TMP/nokey is not a file" "a missing key file"
expect_err "no check is named \"Nope\"" "an unknown check"
run init "$TMP/y" --facts "$FACTS" --master no-such-host
expect_rc 2 "an unknown master"
if [ -e "$TMP/y" ]; then fail "a failed plan wrote $TMP/y"; else pass "a failed plan writes nothing"; fi

# --- --force replaces the files and keeps the password ------------------------------
run init "$C" --facts "$FACTS" --master pai-master --force
expect_rc 0 "init --force"
if grep -qF "\"$PW\"" "$C/services-configuration.yaml"; then pass "--force keeps the admin password"; else fail "the password changed"; fi

# --- plan --out keeps an existing config.yaml, writes one where there is none ----------
printf '# mine\n' >>"$C/config.yaml"
run plan "$FACTS" --master pai-master --out "$C"
expect_rc 0 "plan --out into the init directory"
if tail -1 "$C/config.yaml" | grep -q '^# mine$'; then pass "plan kept config.yaml"; else fail "plan replaced config.yaml"; fi

# --- a directory install cannot use: check config and install say what is missing ------
mkdir -p "$TMP/bare"
cp "$C/layout.yaml" "$TMP/bare/"
run check config "$TMP/bare"
expect_rc 0 "check config: a warning, not an error"
expect_out "warning[F012]: paictl install cannot use $TMP/bare: it has no config.yaml" "check config names the missing config.yaml"
run install "$TMP/bare" --dry-run
expect_rc 2 "install refuses it"
expect_err "$TMP/bare has no config.yaml" "install names what is missing"
expect_err "docker_image_tag" "and what config.yaml needs"
finish
