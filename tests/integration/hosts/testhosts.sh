#!/bin/sh
# sshd test hosts on loopback addresses. Each host is a real sshd on its own
# 127.0.x.y address, inside its own mount and UTS namespaces, with its own
# /etc/os-release, /proc/meminfo, /proc/swaps, /var/lib/etcd, /etc/docker,
# /etc/hosts and hostname, and fake nvidia-smi, docker and
# nvidia-container-runtime first on its PATH, so that each host looks different
# to a client that reaches it over real SSH.
#
#   testhosts.sh can-run                 exit 0 if this machine can run test hosts, else print why and exit 77
#   testhosts.sh start SCENARIO RUNDIR   start the hosts a scenario file describes (see scenarios/README)
#   testhosts.sh stop RUNDIR             stop them, by pid, and every process left in their namespaces
#   testhosts.sh generate N FIRST [SKU]  print a scenario of N clean GPU hosts from address FIRST (benchmarks)
#
# What start leaves in RUNDIR for the client:
#   id_ed25519         the client key (authorized on every host but those with mode=wrong-key)
#   known_hosts        the hosts' keys (a different key for mode=hostkey-changed)
#   ssh_config         Port, User, IdentityFile and UserKnownHostsFile for every host (ssh -F, paictl --ssh-config)
#   cluster/           layout.yaml and config.yaml for the scenario (paictl check hosts RUNDIR/cluster)
#   hosts.txt          "name address port" per host;  hosts.list: one address per line (--hosts-file)
#   password           the password of root and paiops on hosts with accounts=1 (mode 0600)
#   port               the SSH port every host listens on
#
# Only root can do this (sshd, namespaces, bind mounts). Nothing outside the
# namespaces changes, except that /etc/docker, /var/lib/etcd and /run/sshd are
# created (empty) when missing, because a bind mount needs a mount point.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
SSHD=$(command -v sshd 2>/dev/null || echo /usr/sbin/sshd)

die() { echo "testhosts: $*" >&2; exit 1; }

can_run() {
  if [ "$(id -u)" -ne 0 ]; then echo "testhosts: skipped: sshd test hosts need root (bind mounts, namespaces, sshd)"; return 77; fi
  for tool in "$SSHD" ssh-keygen unshare mount python3 ss; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "testhosts: skipped: '$tool' is not installed (scripts/install-deps.sh installs it)"; return 77
    fi
  done
  if ! unshare --mount --uts --propagation private true 2>/dev/null; then
    echo "testhosts: skipped: this machine does not allow new mount/UTS namespaces (unshare failed)"; return 77
  fi
  return 0
}

# ---------------------------------------------------------------------------------
# Scenario files: lines of
#   defaults KEY=VALUE...                   defaults for the hosts that follow
#   sku NAME mem=60Gi vcore=2 [gpus=4 model=V100]
#   config KEY=VALUE...                     extra config.yaml keys (registries, docker_data_root)
#   host NAME ADDRESS KEY=VALUE...
# Host keys (defaults in brackets):
#   sku=[gpu-machine] role=[worker|master]  gpus=[4] gpu_model=[Tesla_V100-SXM2-16GB] ('_' = space)
#   gpu_mem_mib=[16160] driver=[535.104.05] nvlink=[2] smi_broken=[0] slow=[0] (seconds nvidia-smi sleeps)
#   docker=[24.0.7|none] containers=[0] docker_down=[0] daemon=[nvidia-default|nvidia-registered|runc|none]
#   data_root=[] (daemon.json data-root) nvidia_runtime=[present|missing] etcd=[clean|leftover]
#   swap=[off|on] mem_gib=[64] avail_gib=[60] os=[ubuntu-22.04|ubuntu-16.04|debian-12|centos-7]
#   listen=[] (ports with a real listener on the host's address, comma-separated)
#   mode=[normal|silent|hostkey-changed|wrong-key]  accounts=[0|1] sudo=[none|nopasswd|password]
#   resolve=[1] (registries resolve in the host's /etc/hosts)
#   loglevel=[INFO|DEBUG] (sshd's LogLevel; DEBUG logs the client's keepalives in hosts/NAME/sshd.log)
# ---------------------------------------------------------------------------------

KEYS="sku role gpus gpu_model gpu_mem_mib driver nvlink smi_broken slow docker containers docker_down daemon data_root nvidia_runtime etcd swap mem_gib avail_gib os listen mode accounts sudo resolve loglevel"

reset_defaults() {
  d_sku=gpu-machine d_role=worker d_gpus=4 d_gpu_model=Tesla_V100-SXM2-16GB d_gpu_mem_mib=16160
  d_driver=535.104.05 d_nvlink=2 d_smi_broken=0 d_slow=0 d_docker=24.0.7 d_containers=0 d_docker_down=0
  d_daemon=nvidia-default d_data_root="" d_nvidia_runtime=present d_etcd=clean d_swap=off d_mem_gib=64
  d_avail_gib=60 d_os=ubuntu-22.04 d_listen="" d_mode=normal d_accounts=0 d_sudo=none d_resolve=1 d_loglevel=INFO
}

# set_kv PREFIX KEY=VALUE: assigns ${PREFIX}_KEY after checking KEY is known.
set_kv() {
  key=${2%%=*}
  value=${2#*=}
  [ "$key" != "$2" ] || die "$scenario_line_info: expected KEY=VALUE, found '$2'"
  case " $KEYS " in *" $key "*) ;; *) die "$scenario_line_info: unknown key '$key'" ;; esac
  case $value in *[!A-Za-z0-9_.,:/-]*) die "$scenario_line_info: bad characters in '$2'" ;; esac
  eval "$1_$key=\$value"
}

os_release() {
  case $1 in
    ubuntu-22.04) printf 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nVERSION="22.04.4 LTS (Jammy Jellyfish)"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=jammy\n' ;;
    ubuntu-20.04) printf 'PRETTY_NAME="Ubuntu 20.04.6 LTS"\nNAME="Ubuntu"\nVERSION_ID="20.04"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=focal\n' ;;
    ubuntu-16.04) printf 'NAME="Ubuntu"\nVERSION="16.04.7 LTS (Xenial Xerus)"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME="Ubuntu 16.04.7 LTS"\nVERSION_ID="16.04"\n' ;;
    debian-12) printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nID=debian\n' ;;
    centos-7) printf 'NAME="CentOS Linux"\nVERSION="7 (Core)"\nID="centos"\nID_LIKE="rhel fedora"\nVERSION_ID="7"\nPRETTY_NAME="CentOS Linux 7 (Core)"\n' ;;
    *) die "unknown os '$1'" ;;
  esac
}

daemon_json() {
  root=""
  [ -n "$2" ] && root="\"data-root\": \"$2\", "
  case $1 in
    nvidia-default) printf '{\n  %s"default-runtime": "nvidia",\n  "runtimes": {\n    "nvidia": {\n      "path": "nvidia-container-runtime",\n      "runtimeArgs": []\n    }\n  }\n}\n' "$root" ;;
    nvidia-registered) printf '{\n  %s"runtimes": {\n    "nvidia": {\n      "path": "/usr/bin/nvidia-container-runtime",\n      "runtimeArgs": []\n    }\n  }\n}\n' "$root" ;;
    runc) printf '{ %s"log-driver": "json-file" }\n' "$root" ;;
    none) ;;
    *) die "unknown daemon '$1'" ;;
  esac
}

# meminfo TOTAL_GIB AVAIL_GIB SWAP(on|off): the host's /proc/meminfo with those values.
meminfo() {
  total=$(( $1 * 1024 * 1024 )) avail=$(( $2 * 1024 * 1024 ))
  swap=0
  [ "$3" = on ] && swap=2097148
  awk -v t="$total" -v a="$avail" -v s="$swap" '
    /^MemTotal:/ { printf "MemTotal:       %8d kB\n", t; next }
    /^MemFree:/ { printf "MemFree:        %8d kB\n", a - 1048576; next }
    /^MemAvailable:/ { printf "MemAvailable:   %8d kB\n", a; next }
    /^SwapTotal:/ { printf "SwapTotal:      %8d kB\n", s; next }
    /^SwapFree:/ { printf "SwapFree:       %8d kB\n", s; next }
    { print }' /proc/meminfo
}

pick_port() {
  if [ -n "${TESTHOSTS_PORT:-}" ]; then echo "$TESTHOSTS_PORT"; return; fi
  i=0
  while [ $i -lt 50 ]; do
    p=$(( 20000 + ($(od -An -N2 -tu2 /dev/urandom) % 20000) ))
    if [ -z "$(ss -Hltn "sport = :$p" 2>/dev/null)" ]; then echo "$p"; return; fi
    i=$((i + 1))
  done
  die "no free port found"
}

listener() {  # listener ADDR PORT: a real TCP listener that never answers
  python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(64)
while True: time.sleep(3600)' "$1" "$2" </dev/null >/dev/null 2>&1 &
  echo "$!"
}

wait_listening() {  # wait_listening ADDR PORT PID NAME
  n=0
  while [ -z "$(ss -Hltn "src = $1 and sport = :$2" 2>/dev/null)" ]; do
    kill -0 "$3" 2>/dev/null || { cat "$RUNDIR/hosts/$4/sshd.log" >&2 2>/dev/null || true; die "host $4 ($1:$2) exited while starting"; }
    n=$((n + 1))
    [ $n -lt 200 ] || die "host $4 ($1:$2) is not listening after 10 s"
    sleep 0.05
  done
}

start_host() {
  name=$1 addr=$2 idx=$3
  H=$RUNDIR/hosts/$name
  mkdir -p "$H/bin" "$H/etcd" "$H/etc-docker" "$H/home" "$H/root-home"
  # Host key: its own, generated for this run.
  ssh-keygen -q -t ed25519 -N "" -C "$name" -f "$H/ssh_host_ed25519_key"
  if [ "$h_mode" = hostkey-changed ]; then
    ssh-keygen -q -t ed25519 -N "" -C "$name-old" -f "$H/old_host_key"
    known_key=$H/old_host_key.pub
  else
    known_key=$H/ssh_host_ed25519_key.pub
  fi
  printf '[%s]:%s %s\n' "$addr" "$PORT" "$(cut -d' ' -f1,2 "$known_key")" >> "$RUNDIR/known_hosts"
  if [ "$h_mode" = wrong-key ]; then cp "$RUNDIR/other_ed25519.pub" "$H/authorized_keys"
  else cp "$RUNDIR/id_ed25519.pub" "$H/authorized_keys"; fi

  # Files the namespace sees.
  os_release "$h_os" > "$H/os-release"
  meminfo "$h_mem_gib" "$h_avail_gib" "$h_swap" > "$H/meminfo"
  printf 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n' > "$H/swaps"
  [ "$h_swap" = on ] && printf '/swapfile                               file\t\t2097148\t\t0\t\t-2\n' >> "$H/swaps"
  if [ "$h_etcd" = leftover ]; then
    mkdir -p "$H/etcd/member/snap" "$H/etcd/member/wal"
    head -c 4096 /dev/zero > "$H/etcd/member/snap/db"
  fi
  od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$H/machine-id"
  echo >> "$H/machine-id"
  daemon_json "$h_daemon" "$h_data_root" > "$H/etc-docker/daemon.json"
  [ -s "$H/etc-docker/daemon.json" ] || rm -f "$H/etc-docker/daemon.json"
  {
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n%s\t%s\n' "$addr" "$name"
    [ "$h_resolve" = 1 ] && printf '127.0.0.1\t%s\n' $REGISTRIES
    # Names only the test hosts resolve (a jump host reaching a host by a private name).
    cat "$RUNDIR/.internal"
  } > "$H/hosts"

  # Fake tools, first on PATH.
  cp "$HERE/fake/nvidia-container-runtime" "$H/bin/"
  cp "$HERE/fake/dmesg" "$H/bin/"
  [ "$h_nvidia_runtime" = missing ] && rm -f "$H/bin/nvidia-container-runtime"
  [ "$h_gpus" -gt 0 ] || [ "$h_smi_broken" = 1 ] && cp "$HERE/fake/nvidia-smi" "$H/bin/"
  if [ "$h_docker" != none ]; then cp "$HERE/fake/docker" "$HERE/fake/runc" "$H/bin/"; fi
  {
    echo "GPUS=$h_gpus"
    echo "GPU_MODEL=\"$(echo "$h_gpu_model" | tr _ ' ')\""
    echo "GPU_MEM_MIB=$h_gpu_mem_mib DRIVER=$h_driver NVLINK=$h_nvlink SLOW=$h_slow SMI_BROKEN=$h_smi_broken"
    echo "DOCKER_VERSION=$h_docker CONTAINERS=$h_containers DOCKER_DOWN=$h_docker_down HOST_ID=$idx"
  } > "$H/bin/fake.env"

  # Accounts: root and paiops with the run's password, and paiops's sudo rights.
  mounts=""
  if [ "$h_accounts" = 1 ]; then
    if command -v openssl >/dev/null 2>&1; then hash=$(openssl passwd -6 -stdin < "$RUNDIR/password")
    else hash=$(python3 -W ignore -c 'import crypt,sys; print(crypt.crypt(sys.stdin.readline().strip(), crypt.mksalt(crypt.METHOD_SHA512)))' < "$RUNDIR/password"); fi
    grep -v '^paiops:' /etc/passwd > "$H/passwd"
    echo "paiops:x:4242:4242:paictl test operator:$H/home:/bin/sh" >> "$H/passwd"
    grep -v '^paiops:' /etc/group > "$H/group"
    echo "paiops:x:4242:" >> "$H/group"
    awk -F: -v h="$hash" 'BEGIN{OFS=":"} $1=="root"{$2=h} $1!="paiops"{print}' /etc/shadow > "$H/shadow"
    echo "paiops:$hash:19000:0:99999:7:::" >> "$H/shadow"
    chmod 0640 "$H/shadow"
    chown 4242:4242 "$H/home"
    printf 'Defaults env_reset\nDefaults secure_path="%s/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"\nroot ALL=(ALL:ALL) ALL\n' "$H" > "$H/sudoers"
    case $h_sudo in
      nopasswd) echo "paiops ALL=(ALL:ALL) NOPASSWD: ALL" >> "$H/sudoers" ;;
      password) echo "paiops ALL=(ALL:ALL) ALL" >> "$H/sudoers" ;;
      none) ;;
      *) die "host $name: unknown sudo '$h_sudo'" ;;
    esac
    chmod 0440 "$H/sudoers"
    mounts="passwd group shadow"
    [ -e /etc/sudoers ] && mounts="$mounts sudoers"
  fi

  password_auth=no
  [ "$h_accounts" = 1 ] && password_auth=yes
  cat > "$H/sshd_config" <<EOF
ListenAddress $addr:$PORT
HostKey $H/ssh_host_ed25519_key
KexAlgorithms ecdh-sha2-nistp256
PidFile none
AuthorizedKeysFile $H/authorized_keys
StrictModes no
UsePAM no
PermitRootLogin yes
PubkeyAuthentication yes
PasswordAuthentication $password_auth
KbdInteractiveAuthentication no
PermitEmptyPasswords no
AllowTcpForwarding yes
UseDNS no
PrintMotd no
PrintLastLog no
MaxStartups 400:30:800
MaxSessions 20
LogLevel $h_loglevel
Subsystem sftp internal-sftp
SetEnv PATH=$H/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EOF

  # A test host's sshd does not re-exec itself for each connection (-r, where
  # this sshd has it): every host runs the same binary, configuration and key,
  # and the re-exec cost each connection a few ms of the machine's CPU, on the
  # cores all hosts share. TESTHOSTS_SSHD_REXEC=1 keeps sshd's default.
  if [ -z "${NOREXEC+set}" ]; then
    NOREXEC=
    [ "${TESTHOSTS_SSHD_REXEC:-0}" = 1 ] || ! "$SSHD" -r -t -f "$H/sshd_config" >/dev/null 2>&1 || NOREXEC=-r
  fi

  cat > "$H/enter.sh" <<EOF
set -e
hostname $name
mount --bind $H/os-release /etc/os-release
mount --bind $H/meminfo /proc/meminfo
mount --bind $H/swaps /proc/swaps
mount --bind $H/etcd /var/lib/etcd
mount --bind $H/etc-docker /etc/docker
mount --bind $H/hosts /etc/hosts
[ -e /etc/machine-id ] && mount --bind $H/machine-id /etc/machine-id
# root's own home: a test host must not run the machine's login scripts
# (a ~/.bashrc that waits on a lock makes every session hang).
mount --bind $H/root-home /root
for f in $mounts; do mount --bind $H/\$f /etc/\$f; done
exec $SSHD -D $NOREXEC -f $H/sshd_config -E $H/sshd.log
EOF

  if [ "$h_mode" = silent ]; then
    # A host that accepts TCP connections and never says a word.
    pid=$(listener "$addr" "$PORT")
    echo "$pid listener $name" >> "$RUNDIR/pids"
  else
    unshare --mount --uts --propagation private /bin/sh "$H/enter.sh" </dev/null >>"$H/sshd.log" 2>&1 &
    pid=$!
    echo "$pid sshd $name" >> "$RUNDIR/pids"
  fi
  for p in $(echo "$h_listen" | tr , ' '); do
    lp=$(listener "$addr" "$p")
    echo "$lp listener $name:$p" >> "$RUNDIR/pids"
  done
  echo "$name $addr $PORT" >> "$RUNDIR/hosts.txt"
  echo "$addr" >> "$RUNDIR/hosts.list"
  echo "$pid $addr $name" >> "$RUNDIR/.starting"
}

write_cluster() {
  mkdir -p "$RUNDIR/cluster"
  {
    echo "# Generated by tests/integration/hosts/testhosts.sh from $SCENARIO"
    echo "machine-sku:"
    cat "$RUNDIR/.skus"
    echo ""
    echo "machine-list:"
    cat "$RUNDIR/.machines"
  } > "$RUNDIR/cluster/layout.yaml"
  {
    echo "user: root"
    echo "password: \"$(cat "$RUNDIR/password")\""
    echo "docker_image_tag: v1.8.0"
    echo "ssh_key_file_path: $RUNDIR/id_ed25519"
    cat "$RUNDIR/.config"
  } > "$RUNDIR/cluster/config.yaml"
  chmod 0600 "$RUNDIR/cluster/config.yaml"
}

start() {
  SCENARIO=$1 RUNDIR=$2
  [ -r "$SCENARIO" ] || die "cannot read scenario $SCENARIO"
  can_run || exit $?
  [ ! -e "$RUNDIR/pids" ] || stop "$RUNDIR" || true
  rm -rf "$RUNDIR"
  mkdir -p "$RUNDIR"
  # Traversable (the test user paiops reads its authorized_keys below it), not listable;
  # the keys and the password in it are 0600.
  chmod 0711 "$RUNDIR"
  RUNDIR=$(cd "$RUNDIR" && pwd)
  mkdir -p /run/sshd /etc/docker /var/lib/etcd
  PORT=$(pick_port)
  echo "$PORT" > "$RUNDIR/port"
  : > "$RUNDIR/pids"; : > "$RUNDIR/known_hosts"; : > "$RUNDIR/hosts.txt"; : > "$RUNDIR/hosts.list"
  : > "$RUNDIR/.skus"; : > "$RUNDIR/.machines"; : > "$RUNDIR/.config"; : > "$RUNDIR/.starting"
  (umask 077 && od -An -N12 -tx1 /dev/urandom | tr -d ' \n' > "$RUNDIR/password")
  ssh-keygen -q -t ed25519 -N "" -C paictl-test-client -f "$RUNDIR/id_ed25519"
  ssh-keygen -q -t ed25519 -N "" -C paictl-test-other -f "$RUNDIR/other_ed25519"
  REGISTRIES="registry.paictl.test mirror.paictl.test"
  # Every host resolves every other as NAME.internal.test; the client machine does not.
  awk '$1 == "host" && NF >= 3 { printf "%s\t%s.internal.test\n", $3, $2 }' "$SCENARIO" > "$RUNDIR/.internal"
  reset_defaults
  idx=0 lineno=0
  while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    scenario_line_info="$SCENARIO:$lineno"
    line=${line%%#*}
    set -f
    # shellcheck disable=SC2086
    set -- $line
    set +f
    [ $# -gt 0 ] || continue
    kind=$1; shift
    case $kind in
      defaults) for kv in "$@"; do set_kv d "$kv"; done ;;
      sku)
        [ $# -ge 1 ] || die "$scenario_line_info: sku NAME mem=.. vcore=.."
        sname=$1; shift
        mem=64Gi vcore=2 gpus=0 model=V100
        for kv in "$@"; do
          case $kv in mem=*) mem=${kv#mem=} ;; vcore=*) vcore=${kv#vcore=} ;; gpus=*) gpus=${kv#gpus=} ;;
            model=*) model=${kv#model=} ;; *) die "$scenario_line_info: unknown sku key '$kv'" ;; esac
        done
        {
          echo "  $sname:"
          echo "    mem: $mem"
          echo "    cpu:"
          echo "      vcore: $vcore"
          if [ "$gpus" -gt 0 ]; then
            printf '    computing-device:\n      type: nvidia.com/gpu\n      model: %s\n      count: %s\n' "$model" "$gpus"
          fi
        } >> "$RUNDIR/.skus" ;;
      config)
        for kv in "$@"; do echo "${kv%%=*}: ${kv#*=}" >> "$RUNDIR/.config"; done ;;
      host)
        [ $# -ge 2 ] || die "$scenario_line_info: host NAME ADDRESS [KEY=VALUE...]"
        hname=$1 haddr=$2; shift 2
        for k in $KEYS; do eval "h_$k=\$d_$k"; done
        for kv in "$@"; do set_kv h "$kv"; done
        idx=$((idx + 1))
        start_host "$hname" "$haddr" "$idx"
        {
          echo "  - hostname: $hname"
          echo "    hostip: $haddr"
          echo "    machine-type: $h_sku"
          if [ "$h_role" = master ]; then echo "    pai-master: \"true\""; else echo "    pai-worker: \"true\""; fi
        } >> "$RUNDIR/.machines" ;;
      *) die "$scenario_line_info: unknown line kind '$kind'" ;;
    esac
  done < "$SCENARIO"

  # Every host listening (or exited: then fail with its log).
  while read -r pid addr name; do
    wait_listening "$addr" "$PORT" "$pid" "$name"
  done < "$RUNDIR/.starting"
  # The mount namespace of each sshd, so stop can find the sessions left in it.
  while read -r pid kind name; do
    [ "$kind" = sshd ] || continue
    n=0
    while [ "$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)" = "$(readlink /proc/self/ns/mnt)" ] && [ $n -lt 100 ]; do sleep 0.02; n=$((n + 1)); done
    echo "$pid $(readlink "/proc/$pid/ns/mnt")" >> "$RUNDIR/namespaces"
  done < "$RUNDIR/pids"

  cat > "$RUNDIR/ssh_config" <<EOF
# Client settings for the test hosts of $RUNDIR (ssh -F, paictl --ssh-config).
Host *
  Port $PORT
  User root
  IdentityFile $RUNDIR/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $RUNDIR/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
EOF
  write_cluster
  rm -f "$RUNDIR/.starting"
}

stop() {
  RUNDIR=$1
  [ -f "$RUNDIR/pids" ] || return 0
  # Sessions first: every process in a host's mount namespace, then the listeners and sshds.
  if [ -s "$RUNDIR/namespaces" ]; then
    # One pass over /proc: "PID NAMESPACE" for every process, matched against the hosts' namespaces.
    # A namespace whose sshd still runs in it is the host's. Once its last process is gone
    # (a host lost with stop-host) its number may be reused by another run's host: then a
    # process is this run's only when its /root, seen through its own mounts, is one of
    # this run's hosts' home directories (device:inode; the testbed mounts fs/root over
    # root-home).
    certain=$(while read -r pid ns; do
                [ "$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)" = "$ns" ] && echo "$ns"
              done < "$RUNDIR/namespaces" | tr '\n' ' ')
    ours=$(stat -L -c '%d:%i' "$RUNDIR"/hosts/*/root-home "$RUNDIR"/hosts/*/fs/root 2>/dev/null | tr '\n' ' ')
    find /proc/[0-9]*/ns/mnt -maxdepth 0 -printf '%p %l\n' 2>/dev/null |
      awk 'NR == FNR { ns[$2] = 1; sshd[$1] = 1; next }
           { split($1, p, "/"); if (($2 in ns) && !(p[3] in sshd)) print p[3], $2 }' "$RUNDIR/namespaces" - |
      while read -r p n; do
        case " $certain " in
          *" $n "*) ;;
          *) id=$(stat -L -c '%d:%i' "/proc/$p/root/root" 2>/dev/null) || continue
             case " $ours " in *" $id "*) ;; *) continue ;; esac ;;
        esac
        kill -KILL "$p" 2>/dev/null || true
      done
  fi
  while read -r pid kind name; do
    kill -TERM "$pid" 2>/dev/null || true
  done < "$RUNDIR/pids"
  n=0
  while [ $n -lt 50 ]; do
    alive=0
    while read -r pid kind name; do
      # A zombie (state Z) has exited; its parent may never reap it.
      [ -r "/proc/$pid/stat" ] && [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ] && alive=1
    done < "$RUNDIR/pids"
    [ $alive = 1 ] || break
    sleep 0.05; n=$((n + 1))
  done
  while read -r pid kind name; do kill -KILL "$pid" 2>/dev/null || true; done < "$RUNDIR/pids"
  rm -f "$RUNDIR/pids" "$RUNDIR/namespaces"
}

generate() {
  n=$1 first=$2 sku=${3:-gpu-machine}
  a=${first%.*} b=${first##*.}
  echo "# $n clean GPU hosts from $first (generated by testhosts.sh generate)"
  echo "sku gpu-machine mem=60Gi vcore=1 gpus=4 model=V100"
  echo "sku cpu-machine mem=8Gi vcore=1"
  echo "config docker_registry_domain=registry.paictl.test"
  i=0
  while [ $i -lt "$n" ]; do
    octet3=${a##*.} prefix=${a%.*}
    last=$((b + i))
    o3=$((octet3 + last / 256)) o4=$((last % 256))
    if [ $i -eq 0 ]; then
      echo "host bench-$i $prefix.$o3.$o4 sku=cpu-machine role=master gpus=0 daemon=runc"
    else
      echo "host bench-$i $prefix.$o3.$o4 sku=$sku"
    fi
    i=$((i + 1))
  done
}

case ${1:-} in
  can-run) can_run ;;
  start) [ $# -eq 3 ] || die "usage: testhosts.sh start SCENARIO RUNDIR"; start "$2" "$3" ;;
  stop) [ $# -eq 2 ] || die "usage: testhosts.sh stop RUNDIR"; stop "$2" ;;
  generate) [ $# -ge 3 ] || die "usage: testhosts.sh generate N FIRST_ADDRESS [SKU]"; generate "$2" "$3" "${4:-}" ;;
  *) echo "usage: testhosts.sh can-run | start SCENARIO RUNDIR | stop RUNDIR | generate N FIRST [SKU]" >&2; exit 2 ;;
esac
