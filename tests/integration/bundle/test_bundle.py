"""paictl bundle build against real parts on loopback: Debian's docker-registry
(TLS from a test CA that the build is told to trust with --registry-ca)
holding small test images under the names paictl deploys, pulled through
image_registry_mirror; a Debian repository of tiny .debs (dpkg-deb --build,
dpkg-scanpackages) served over HTTP. Shows: the bundle holds every image and
.deb with correct checksums; bundle verify refuses a changed, missing or
unlisted file by name and changes nothing; a build killed with -9 is resumed
by the next run, which keeps what was fetched. Exit 77 when a part is missing.

Environment: PAICTL, PAICTL_TEMPLATES, RUN (a scratch directory), SRC (the
repository). Leaves RUN/bundle for test_containerd.sh."""

import hashlib
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import registry_push  # noqa: E402

PAICTL = os.environ["PAICTL"]
RUN = os.path.abspath(os.environ.get("RUN", "/tmp/paictl-bundle-test"))
SRC = os.environ.get("SRC", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
T0 = time.time()


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def check(cond, what):
    if not cond:
        fail(what)
    print(f"ok: {what}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sh(*args, **kw):
    return subprocess.run(list(args), check=True, capture_output=True, text=True, **kw)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


for tool in ("docker-registry", "dpkg-deb", "dpkg-scanpackages", "openssl"):
    if not shutil.which(tool):
        skip(f"{tool} is not installed (scripts/install-deps.sh installs it)")

shutil.rmtree(RUN, ignore_errors=True)
os.makedirs(RUN)
procs = []


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


# --- the test CA and the registry's certificate ---------------------------------
pki = os.path.join(RUN, "pki")
os.makedirs(pki)
ca_key, ca_crt = f"{pki}/ca.key", f"{pki}/ca.crt"
sh("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
   "-keyout", ca_key, "-out", ca_crt, "-days", "2", "-subj", "/CN=paictl bundle test CA")
sh("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
   "-keyout", f"{pki}/reg.key", "-out", f"{pki}/reg.csr", "-subj", "/CN=127.0.0.1")
with open(f"{pki}/ext", "w") as f:
    f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
sh("openssl", "x509", "-req", "-in", f"{pki}/reg.csr", "-CA", ca_crt, "-CAkey", ca_key,
   "-CAcreateserial", "-out", f"{pki}/reg.crt", "-days", "2", "-extfile", f"{pki}/ext")

# --- the registry ----------------------------------------------------------------
reg_port = free_port()
with open(f"{RUN}/registry.yml", "w") as f:
    f.write(f"""version: 0.1
log: {{level: error}}
storage: {{filesystem: {{rootdirectory: {RUN}/registry-data}}}}
http:
  addr: 127.0.0.1:{reg_port}
  tls: {{certificate: {pki}/reg.crt, key: {pki}/reg.key}}
""")
reg_log = open(f"{RUN}/registry.log", "w")
procs.append(subprocess.Popen(["docker-registry", "serve", f"{RUN}/registry.yml"],
                              stdout=reg_log, stderr=subprocess.STDOUT))
mirror = f"127.0.0.1:{reg_port}"
reg = registry_push.Registry(f"https://{mirror}", ca_crt)
for _ in range(100):
    try:
        reg._req("GET", "/v2/")
        break
    except Exception:
        time.sleep(0.05)
else:
    cleanup()
    fail("docker-registry did not answer (see registry.log)")

# --- the Debian repository ---------------------------------------------------------
repo = os.path.join(RUN, "repo")
os.makedirs(repo)


def deb(name, version, depends="", priority="optional"):
    d = os.path.join(RUN, "debsrc", f"{name}_{version}")
    os.makedirs(f"{d}/DEBIAN", exist_ok=True)
    os.makedirs(f"{d}/usr/share/doc/{name}", exist_ok=True)
    with open(f"{d}/usr/share/doc/{name}/README", "w") as f:
        f.write(f"{name} {version}: a package of the bundle test\n")
    with open(f"{d}/DEBIAN/control", "w") as f:
        f.write(f"Package: {name}\nVersion: {version}\nArchitecture: amd64\n"
                f"Maintainer: paictl tests <tests@paictl.invalid>\nPriority: {priority}\n"
                + (f"Depends: {depends}\n" if depends else "")
                + f"Description: {name} for the bundle test\n")
    sh("dpkg-deb", "--root-owner-group", "-Zgzip", "--build", d, f"{repo}/{name}_{version}_amd64.deb")


kube = "1.30.4-1.1"
deb("kubeadm", kube, "kubelet (>= 1.19.0), kubectl (>= 1.19.0), cri-tools (>= 1.30.0), "
    "kubernetes-cni (>= 1.1.1)")
deb("kubeadm", "1.30.3-1.1", "kubelet (>= 1.19.0)")  # another release: never fetched
deb("kubelet", kube, "iptables (>= 1.4.21), kubernetes-cni (>= 1.1.1), socat, mount, libc6")
deb("kubectl", kube)
deb("cri-tools", "1.30.1-1.1")
deb("kubernetes-cni", "1.4.0-1.1")
deb("socat", "1.7.4.1-3")
deb("mount", "2.37.2-4", priority="required")  # on every system: not followed
deb("containerd", "1.7.12-0ubuntu2", "runc (>= 1.0.0~rc2~)")
deb("runc", "1.1.12-0ubuntu2")
deb("nvidia-container-toolkit", "1.17.3-1", "nvidia-container-toolkit-base (= 1.17.3-1)")
deb("nvidia-container-toolkit-base", "1.17.3-1")
deb("nvidia-driver-535", "535.183.01-0ubuntu0.22.04.1")
packages = sh("dpkg-scanpackages", "--multiversion", ".", cwd=repo).stdout
with open(f"{repo}/Packages", "w") as f:
    f.write(packages)

requests_log = []
slow = {"path": None, "delay": 0}


class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **kw):
        super().__init__(*a, directory=repo, **kw)

    def do_GET(self):
        requests_log.append(self.path)
        if slow["path"] and self.path.endswith(slow["path"]):
            time.sleep(slow["delay"])
        super().do_GET()

    def log_message(self, *a):
        pass


httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=httpd.serve_forever, daemon=True).start()
apt_url = f"http://127.0.0.1:{httpd.server_address[1]}"

# --- the cluster directory -------------------------------------------------------
cluster = os.path.join(RUN, "cluster")
shutil.copytree(os.path.join(SRC, "examples/clusters/quickstart"), cluster)
with open(f"{cluster}/config.yaml", "a") as f:
    f.write(f"\nkube_version: 1.30.4\nkube_package_repo: {apt_url}/\n"
            f"nvidia_package_repo: {apt_url}/\nimage_registry_mirror: {mirror}\n")

env = dict(os.environ, PAICTL_TEMPLATES=os.environ.get("PAICTL_TEMPLATES", f"{SRC}/templates"),
           NO_COLOR="1")
bundle = os.path.join(RUN, "bundle")
build = [PAICTL, "bundle", "build", cluster, "--out", bundle, "--registry-ca", ca_crt,
         "--os-repo", f"deb {apt_url}/ ./", "--driver", "535"]

# The dry run lists every image and .deb, fetching nothing.
dry = subprocess.run(build + ["--dry-run", "-o", "json"], capture_output=True, text=True, env=env)
if dry.returncode != 0:
    cleanup()
    fail(f"dry run exited {dry.returncode}: {dry.stdout}{dry.stderr}")
plan = json.loads(dry.stdout)
check(not os.path.exists(bundle), "the dry run wrote nothing")
images = [i["image"] for i in plan["images"]]
debs = sorted(f"{d['package']}={d['version']}" for d in plan["debs"])
print("images:", ", ".join(images))
print("debs:", ", ".join(debs))
check(debs == sorted([f"kubeadm={kube}", f"kubelet={kube}", f"kubectl={kube}",
                      "cri-tools=1.30.1-1.1", "kubernetes-cni=1.4.0-1.1", "socat=1.7.4.1-3",
                      "containerd=1.7.12-0ubuntu2", "runc=1.1.12-0ubuntu2",
                      "nvidia-container-toolkit=1.17.3-1", "nvidia-container-toolkit-base=1.17.3-1",
                      "nvidia-driver-535=535.183.01-0ubuntu0.22.04.1"]),
      "the .debs: the pinned kubeadm/kubelet/kubectl, containerd, the toolkit, the driver "
      "and their dependencies (not mount: Priority required)")
check(plan["assumedInstalled"]["ubuntu-22.04-amd64"] == ["iptables (>= 1.4.21)", "libc6"],
      "dependencies no repository has are reported as assumed")
for want in ("registry.k8s.io/kube-apiserver:v1.30.4", "registry.k8s.io/etcd:3.5.12-0",
             "registry.k8s.io/coredns/coredns:v1.11.1", "registry.k8s.io/pause:3.9",
             "docker.io/flannel/flannel:v0.26.4", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
             "docker.io/openpai/rest-server:v1.8.0", "docker.io/library/postgres:12"):
    check(want in images, f"the plan pulls {want}")
check(all(i["pull"].startswith(mirror + "/") for i in plan["images"]),
      "every image is pulled through image_registry_mirror")

# Push a test image under every name (through the mirror's addressing); pause
# is an index of linux/amd64 and linux/arm64.
for i in plan["images"]:
    repo_tag = i["pull"][len(mirror) + 1:]
    name, tag = repo_tag.rsplit(":", 1)
    archs = ("amd64", "arm64") if "pause" in name else ("amd64",)
    reg.push(name, tag, i["image"], archs)
print(f"pushed {len(plan['images'])} test images ({time.time() - T0:.1f} s)")

# A build killed with -9 while it fetches: the .deb of the driver is served slowly.
slow.update(path="nvidia-driver-535_535.183.01-0ubuntu0.22.04.1_amd64.deb", delay=3)
p = subprocess.Popen(build, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
deadline = time.time() + 10
while time.time() < deadline and not any(slow["path"] in r for r in requests_log):
    time.sleep(0.02)
p.send_signal(signal.SIGKILL)
p.wait()
slow.update(path=None, delay=0)
check(not os.path.exists(f"{bundle}/manifest.json"), "a killed build leaves no manifest")
have = sorted(os.listdir(f"{bundle}/debs/ubuntu-22.04-amd64"))
check(len(have) >= 5, f"the killed build had fetched some .debs ({len(have)})")
kept_before = {f: os.stat(f"{bundle}/debs/ubuntu-22.04-amd64/{f}").st_mtime_ns for f in have
               if f.endswith(".deb")}

# The re-run keeps them and fetches the rest.
requests_log.clear()
out = subprocess.run(build + ["-o", "json"], capture_output=True, text=True, env=env)
if out.returncode != 0:
    cleanup()
    fail(f"build exited {out.returncode}: {out.stdout}{out.stderr}")
doc = json.loads(out.stdout)
refetched = [r for r in requests_log if any(r.endswith(f) for f in kept_before)]
check(not refetched, f"the re-run fetched none of the {len(kept_before)} kept .debs again")
check(doc["kept"] == len(kept_before), f"the re-run kept {doc['kept']} files")
check(all(os.stat(f"{bundle}/debs/ubuntu-22.04-amd64/{f}").st_mtime_ns == t
          for f, t in kept_before.items()), "the kept files were not rewritten")

# The bundle: every image and .deb, with the right checksums.
with open(f"{bundle}/manifest.json") as f:
    m = json.load(f)
check(m["apiVersion"] == "paictl.io/bundle/v1" and m["kubeVersion"] == "1.30.4"
      and m["platforms"] == [{"os": "ubuntu-22.04", "arch": "amd64"}] and m["driver"] == "535",
      "the manifest's header")
files = {f["path"]: f for f in m["files"]}
check(sorted(f["image"] for f in m["files"] if f["kind"] == "image") == sorted(images),
      f"the bundle holds every image ({len(images)})")
check(sorted(f"{f['package']}={f['version']}" for f in m["files"] if f["kind"] == "deb") == debs,
      f"the bundle holds every .deb ({len(debs)})")
repo_sha = {}
for stanza in packages.split("\n\n"):
    fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line)
    if "Filename" in fields:
        repo_sha[os.path.basename(fields["Filename"])] = fields["SHA256"]
for path, f in files.items():
    full = f"{bundle}/{path}"
    if sha256(full) != f["sha256"] or os.path.getsize(full) != f["bytes"]:
        fail(f"{path}: its checksum or size is not the manifest's")
    if f["kind"] == "deb" and repo_sha[os.path.basename(path)] != f["sha256"]:
        fail(f"{path}: not the repository's file")
check(True, "every file's size and SHA-256 are the manifest's, every .deb's the repository's")
check(sorted(os.listdir(bundle)) == ["debs", "images", "manifest.json"],
      "nothing else is left in the bundle")

# An image tar: an OCI layout naming the image; the index keeps linux/amd64 only.
import tarfile  # noqa: E402

pause = next(p for p, f in files.items() if f.get("image") == "registry.k8s.io/pause:3.9")
with tarfile.open(f"{bundle}/{pause}") as t:
    names = t.getnames()
    index = json.load(t.extractfile("index.json"))
    top = index["manifests"][0]
    inner = json.load(t.extractfile("blobs/sha256/" + top["digest"][7:]))
check("oci-layout" in names and top["annotations"]["io.containerd.image.name"] ==
      "registry.k8s.io/pause:3.9" and top["annotations"]["org.opencontainers.image.ref.name"]
      == "3.9", "an image tar is an OCI layout naming the image")
check([d["platform"]["architecture"] for d in inner["manifests"]] == ["amd64"],
      "an image index keeps the bundle's linux/amd64 only")

v = subprocess.run([PAICTL, "bundle", "verify", bundle], capture_output=True, text=True, env=env)
check(v.returncode == 0, "bundle verify: " + v.stdout.strip())

# Tampered, missing and unlisted files are refused by name; nothing changes.
deb_path = next(p for p in files if p.endswith(".deb") and "kubelet" in p)
before = {p: sha256(f"{bundle}/{p}") for p in files}
with open(f"{bundle}/{deb_path}", "r+b") as f:
    f.seek(100)
    b = f.read(1)
    f.seek(100)
    f.write(bytes([b[0] ^ 1]))
v = subprocess.run([PAICTL, "bundle", "verify", bundle], capture_output=True, text=True, env=env)
check(v.returncode == 2 and f"{deb_path} has SHA-256" in v.stderr,
      "a changed .deb is refused by name: " + v.stderr.strip().splitlines()[0])
check(all(sha256(f"{bundle}/{p}") == s for p, s in before.items() if p != deb_path),
      "verify changed nothing")
with open(f"{bundle}/{deb_path}", "r+b") as f:
    f.seek(100)
    f.write(b)
with open(f"{bundle}/images/extra.tar", "w") as f:
    f.write("x")
v = subprocess.run([PAICTL, "bundle", "verify", bundle], capture_output=True, text=True, env=env)
check(v.returncode == 2 and "images/extra.tar is not in the bundle's manifest" in v.stderr,
      "an unlisted file is refused by name")
os.remove(f"{bundle}/images/extra.tar")
check(subprocess.run([PAICTL, "bundle", "verify", bundle], capture_output=True,
                     env=env).returncode == 0, "the restored bundle verifies")

cleanup()
httpd.shutdown()
print(f"PASS ({time.time() - T0:.1f} s)")
