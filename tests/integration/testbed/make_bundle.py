#!/usr/bin/python3
"""Writes a small offline bundle in paictl's format (docs/install.md, "Offline
install"): manifest.json (paictl.io/bundle/v1) with every file's size and
sha256, the .debs of one platform, and each image as a tiny OCI image-layout
tar (oci-layout, index.json naming the image with io.containerd.image.name and
org.opencontainers.image.ref.name, a manifest, a config and one empty layer)
that `ctr -n k8s.io images import` accepts.

  make_bundle.py OUT --debs DIR --platform ubuntu-22.04-amd64 [--driver 535]
                 --kube-version 1.30.10 --image REF... [--templates DIR --tag v1.8.0]

--templates adds every image of templates/install/*.yaml (the manifests paictl
install applies), rendered with --tag and the kube version, and kubeadm's
control-plane images of that version.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tarfile


def blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest(), data


def oci_archive(ref):
    layer_tar = io.BytesIO()
    with tarfile.open(fileobj=layer_tar, mode="w", format=tarfile.USTAR_FORMAT) as t:
        info = tarfile.TarInfo("etc/image-name")
        body = (ref + "\n").encode()
        info.size = len(body)
        info.mtime = 0
        t.addfile(info, io.BytesIO(body))
    raw = layer_tar.getvalue()
    gz = io.BytesIO()
    with gzip.GzipFile(fileobj=gz, mode="wb", mtime=0) as g:
        g.write(raw)
    layer_digest, layer = blob(gz.getvalue())
    config_digest, config = blob(json.dumps({
        "architecture": "amd64", "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(raw).hexdigest()]},
        "config": {}}, sort_keys=True).encode())
    manifest_digest, manifest = blob(json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest, "size": len(layer)}]},
        sort_keys=True).encode())
    tag = ref.rsplit(":", 1)[1] if ":" in ref.rsplit("/", 1)[-1] else "latest"
    index = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest,
                       "size": len(manifest),
                       "annotations": {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": tag}}]},
        sort_keys=True).encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as t:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            t.addfile(info, io.BytesIO(data))
        add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add("index.json", index)
        for d, data in ((manifest_digest, manifest), (config_digest, config), (layer_digest, layer)):
            add("blobs/sha256/" + d.split(":", 1)[1], data)
    return out.getvalue()


def normalized(ref):
    """As containerd and the kubelet name it: docker.io and library/ added."""
    first = ref.split("/", 1)[0] if "/" in ref else ""
    if not first or not ("." in first or ":" in first or first == "localhost"):
        ref = "docker.io/" + ref
    if ref.startswith("docker.io/") and "/" not in ref[len("docker.io/"):]:
        ref = "docker.io/library/" + ref[len("docker.io/"):]
    return ref


def template_images(templates, tag, kube_version):
    refs = []
    for n in sorted(os.listdir(templates)):
        # kubeadm's configurations, and kube-vip's static pod (only with kube_vip,
        # which this bundle's cluster has not), are not what install applies.
        if not n.endswith(".yaml") or n.startswith("kubeadm") or n.startswith("kube-vip"):
            continue
        for m in re.finditer(r"^\s*image:\s*(\S+)", open(os.path.join(templates, n)).read(), re.M):
            r = m.group(1).replace("{{image_prefix}}", "docker.io/openpai/").replace("{{tag}}", tag)
            refs.append(r.replace("{{kube_version}}", kube_version))
    v = "v" + kube_version
    refs += ["registry.k8s.io/%s:%s" % (i, v) for i in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy")]
    refs += ["registry.k8s.io/coredns/coredns:v1.11.1", "registry.k8s.io/pause:3.9", "registry.k8s.io/etcd:3.5.12-0"]
    return refs


def main():
    a = argparse.ArgumentParser()
    a.add_argument("out")
    a.add_argument("--debs", required=True)
    a.add_argument("--platform", required=True)
    a.add_argument("--driver", default="")
    a.add_argument("--kube-version", default="1.30.10")
    a.add_argument("--image", action="append", default=[])
    a.add_argument("--templates")
    a.add_argument("--tag", default="v1.8.0")
    o = a.parse_args()
    os_name, arch = o.platform.rsplit("-", 1)
    files = []
    ddir = os.path.join(o.out, "debs", o.platform)
    os.makedirs(ddir, exist_ok=True)
    for n in sorted(os.listdir(o.debs)):
        m = re.match(r"^([a-z0-9.+-]+)_([^_]+)_(amd64|arm64|all)\.deb$", n)
        if not m:
            continue
        shutil.copyfile(os.path.join(o.debs, n), os.path.join(ddir, n))
        data = open(os.path.join(ddir, n), "rb").read()
        files.append({"path": "debs/%s/%s" % (o.platform, n), "kind": "deb", "package": m.group(1),
                      "version": m.group(2).replace("%3a", ":"), "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)})
    refs = list(o.image)
    if o.templates:
        refs += template_images(o.templates, o.tag, o.kube_version)
    os.makedirs(os.path.join(o.out, "images"), exist_ok=True)
    seen = set()
    for ref in map(normalized, refs):
        if ref in seen:
            continue
        seen.add(ref)
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", ref) + ".tar"
        data = oci_archive(ref)
        with open(os.path.join(o.out, "images", name), "wb") as f:
            f.write(data)
        files.append({"path": "images/" + name, "kind": "image", "image": ref,
                      "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)})
    manifest = {"apiVersion": "paictl.io/bundle/v1", "cluster": "testbed", "created": "2026-12-06T00:00:00Z",
                "kubeVersion": o.kube_version, "platforms": [{"os": os_name, "arch": arch}], "files": files}
    if o.driver:
        manifest["driver"] = o.driver
    with open(os.path.join(o.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
