"""Pushes small test images into a registry through the OCI distribution API
(the way docker push and skopeo do: blob uploads, then the manifest), for the
bundle tests: one layer holding /hello.txt (the image's name), a config with
the right diff_ids, and for some names an image index of linux/amd64 and
linux/arm64."""

import gzip
import hashlib
import io
import json
import ssl
import tarfile
import urllib.request

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


def _digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _layer(text):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as t:
        body = text.encode()
        info = tarfile.TarInfo("hello.txt")
        info.size = len(body)
        info.mtime = 0
        t.addfile(info, io.BytesIO(body))
    plain = raw.getvalue()
    return gzip.compress(plain, mtime=0), _digest(plain)


class Registry:
    def __init__(self, base, ca_file):
        self.base = base.rstrip("/")
        self.ctx = ssl.create_default_context(cafile=ca_file)

    def _req(self, method, url, data=None, headers=None):
        if url.startswith("/"):
            url = self.base + url
        r = urllib.request.Request(url, data=data, method=method, headers=headers or {})
        with urllib.request.urlopen(r, context=self.ctx) as resp:
            return resp.status, dict(resp.headers), resp.read()

    def blob(self, repo, data):
        d = _digest(data)
        _, headers, _ = self._req("POST", f"/v2/{repo}/blobs/uploads/")
        loc = headers["Location"]
        sep = "&" if "?" in loc else "?"
        self._req("PUT", f"{loc}{sep}digest={d}", data,
                  {"Content-Type": "application/octet-stream"})
        return {"digest": d, "size": len(data)}

    def manifest(self, repo, ref, data, media_type):
        self._req("PUT", f"/v2/{repo}/manifests/{ref}", data, {"Content-Type": media_type})
        return {"mediaType": media_type, "digest": _digest(data), "size": len(data)}

    def image(self, repo, ref, name, arch):
        layer, diff_id = _layer(f"{name} {arch}\n")
        config = json.dumps({
            "architecture": arch, "os": "linux",
            "config": {"Cmd": ["/hello"]},
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        }, sort_keys=True).encode()
        cd = self.blob(repo, config)
        ld = self.blob(repo, layer)
        m = json.dumps({
            "schemaVersion": 2, "mediaType": OCI_MANIFEST,
            "config": dict(cd, mediaType=OCI_CONFIG),
            "layers": [dict(ld, mediaType=OCI_LAYER)],
        }, sort_keys=True).encode()
        return self.manifest(repo, ref, m, OCI_MANIFEST)

    def push(self, repo, tag, name, archs=("amd64",)):
        """repo:tag as one image (one arch) or an index of several."""
        if len(archs) == 1:
            return self.image(repo, tag, name, archs[0])
        descs = []
        for a in archs:
            d = self.image(repo, "arch-" + a, name, a)
            descs.append(dict(d, platform={"os": "linux", "architecture": a}))
        idx = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": descs},
                         sort_keys=True).encode()
        return self.manifest(repo, tag, idx, OCI_INDEX)
