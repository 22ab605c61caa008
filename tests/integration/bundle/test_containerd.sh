#!/bin/sh
# One image of the bundle test_bundle.py built (RUN/bundle) imported into a real
# containerd (Debian's containerd: a private root, state directory and socket, the
# native snapshotter) with `ctr -n k8s.io images import`, as an offline install
# does on every host; the image is then listed under the name the manifest gives
# and unpacked. Exit 77, with the reason, where containerd cannot run (not root,
# not installed); CI runs it as root.
set -u
RUN=${RUN:?}
bundle=$RUN/bundle
[ -f "$bundle/manifest.json" ] || { echo "FAIL: no bundle at $bundle (test_bundle.py makes it)"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: containerd needs root here (it mounts and owns its root)"; exit 77; }
command -v containerd >/dev/null 2>&1 && command -v ctr >/dev/null 2>&1 ||
  { echo "SKIP: containerd is not installed (scripts/install-deps.sh installs it)"; exit 77; }

dir=$RUN/containerd
rm -rf "$dir"
mkdir -p "$dir/root" "$dir/state"
sock=$dir/containerd.sock
cat > "$dir/config.toml" <<EOF
version = 2
root = "$dir/root"
state = "$dir/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  level = "warn"
EOF
containerd --config "$dir/config.toml" > "$dir/containerd.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
i=0
until ctr -a "$sock" version >/dev/null 2>&1; do
  i=$((i + 1))
  if ! kill -0 $pid 2>/dev/null || [ $i -gt 100 ]; then
    echo "SKIP: containerd does not start here:"
    tail -5 "$dir/containerd.log"
    exit 77
  fi
  sleep 0.05
done

# The image and its file, as the manifest names them.
line=$(python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
f = next(f for f in m["files"] if f["kind"] == "image" and "/pause:" in f["image"])
print(f["image"], f["path"])' "$bundle/manifest.json")
image=${line% *}
path=${line#* }
echo "importing $path ($image)"
out=$(ctr -a "$sock" -n k8s.io images import --snapshotter native "$bundle/$path" 2>&1) ||
  { echo "FAIL: ctr images import: $out"; exit 1; }
echo "$out"
ctr -a "$sock" -n k8s.io images ls -q | grep -qx "$image" ||
  { echo "FAIL: $image is not in containerd's k8s.io namespace:"; ctr -a "$sock" -n k8s.io images ls; exit 1; }
echo "ok: containerd lists $image in namespace k8s.io"
ctr -a "$sock" -n k8s.io images check | grep "$image" | grep -q "complete" ||
  { echo "FAIL: the image's content is not complete:"; ctr -a "$sock" -n k8s.io images check; exit 1; }
echo "ok: its content is complete (every blob of linux/amd64 imported)"
ctr -a "$sock" -n k8s.io snapshots --snapshotter native ls | grep -q . ||
  { echo "FAIL: the image was not unpacked"; exit 1; }
echo "ok: unpacked with the native snapshotter"
echo PASS
