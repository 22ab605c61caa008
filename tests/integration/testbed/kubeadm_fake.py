"""The testbed's fake kubeadm (loaded by tbfake.py, which sets `tb` to itself).

init / join / reset / token create|list|delete / version / config print, with
kubeadm's preflight errors and its on-host markers:
  init   writes /etc/kubernetes/pki (etcd's certificates too), manifests/
         (kubeadm's etcd.yaml and kube-apiserver.yaml; step "init" fires here,
         so a hang or failure leaves the partial state of an interrupted init),
         /var/lib/kubelet/config.yaml, starts what the kubelet runs from the
         manifests (tbkubelet.py: the real etcd, then the fake API server,
         kube_apiserver.py, on the advertise address), writes admin.conf,
         super-admin.conf, kubelet.conf, controller-manager.conf, scheduler.conf
         (0600), registers the control-plane Node, kube-proxy, CoreDNS and a
         24 h bootstrap token;
  join   reads the token from --config FILE (/dev/stdin or - works) or argv,
         checks the CA hash against cluster-info, registers its Node with the
         bootstrap token (401 for a wrong or expired one), writes kubelet.conf
         (0600), pki/ca.crt and /var/lib/kubelet/config.yaml;
         With --upload-certs, init stores the CAs and sa keys encrypted with the
         certificate key in the Secret kube-system/kubeadm-certs (`init phase
         upload-certs --upload-certs` again later); a control-plane join
         (JoinConfiguration.controlPlane, or --control-plane --certificate-key)
         downloads and decrypts them (a wrong key: kubeadm's error), issues its own
         serving certificates, adds its etcd member with the real etcdctl and
         starts etcd (initial-cluster-state existing) and the API server;
  reset  needs -f or a "y" on stdin; removes what init/join wrote, stops the
         kubelet, and on the control plane stops the API server and etcd and
         empties etcd's data directory (the manifest's etcd-data hostPath); on a
         testbed of several masters it first removes its own etcd member.
  upgrade plan|apply|node  kubeadm's version rules (one minor at a time, no
         downgrade, kubeadm not older than the target); apply moves the static
         pods' images, the API server's /version, kubeadm-config, kube-proxy and
         CoreDNS (step "upgrade-apply"), node rewrites the kubelet config (step
         "upgrade-node").
Counts in state/kubeadm.json: `init`, `join`, `upgradeApply` and `upgradeNode`
count completed runs only.
"""

import base64
import hashlib
import json
import os
import re
import secrets
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

import yaml

# libyaml's safe loader where PyYAML has it: the same documents, parsed in C.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

tb = None  # set by tbfake.py

API_VERSIONS = {"kubeadm.k8s.io/v1beta3": (1, 22), "kubeadm.k8s.io/v1beta4": (1, 31)}
KINDS = {"InitConfiguration", "ClusterConfiguration", "JoinConfiguration", "KubeletConfiguration",
         "KubeProxyConfiguration", "ResetConfiguration", "UpgradeConfiguration"}
KNOWN_FIELDS = {
    "InitConfiguration": {"apiVersion", "kind", "bootstrapTokens", "nodeRegistration", "localAPIEndpoint",
                          "certificateKey", "skipPhases", "patches", "timeouts", "dryRun"},
    "ClusterConfiguration": {"apiVersion", "kind", "etcd", "networking", "kubernetesVersion", "controlPlaneEndpoint",
                             "apiServer", "controllerManager", "scheduler", "dns", "certificatesDir", "imageRepository",
                             "featureGates", "clusterName", "encryptionAlgorithm", "proxy", "certificateValidityPeriod",
                             "caCertificateValidityPeriod"},
    "JoinConfiguration": {"apiVersion", "kind", "nodeRegistration", "caCertPath", "discovery", "controlPlane",
                          "skipPhases", "patches", "timeouts", "dryRun"},
}
PKI = ["ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "apiserver-kubelet-client.crt",
       "apiserver-kubelet-client.key", "front-proxy-ca.crt", "front-proxy-ca.key", "front-proxy-client.crt",
       "front-proxy-client.key", "sa.key", "sa.pub", "etcd/ca.crt", "etcd/ca.key", "etcd/server.crt",
       "etcd/server.key", "etcd/peer.crt", "etcd/peer.key", "etcd/healthcheck-client.crt",
       "etcd/healthcheck-client.key", "apiserver-etcd-client.crt", "apiserver-etcd-client.key"]
MANIFESTS = ["etcd.yaml", "kube-apiserver.yaml", "kube-controller-manager.yaml", "kube-scheduler.yaml"]
CONFS = ["admin.conf", "super-admin.conf", "kubelet.conf", "controller-manager.conf", "scheduler.conf"]
TOKEN_RE = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")


class Fail(Exception):
    pass


def out(s=""):
    tb.out(s)


def err(s):
    tb.err(s)


def version():
    v = tb.pkg_version("kubeadm")
    return v or "1.30.0"


def vtuple(v):
    m = re.match(r"v?(\d+)\.(\d+)", v)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def go_duration(s):
    if s in ("0", "0s"):
        return 0
    total = 0
    for n, u in re.findall(r"(\d+(?:\.\d+)?)(h|m|s|ms)", s):
        total += float(n) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[u]
    if not re.fullmatch(r"((\d+(\.\d+)?)(h|m|s|ms))+", s):
        raise Fail('invalid argument "%s" for "--ttl" flag: time: invalid duration "%s"' % (s, s))
    return total


def state():
    return tb.load("kubeadm", {"init": 0, "join": 0})


def control_plane_images():
    """`kubeadm config images list` of the installed kubeadm."""
    v = "v" + version()
    return (["registry.k8s.io/%s:%s" % (i, v) for i in ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"]]
            + ["registry.k8s.io/coredns/coredns:v1.11.1", "registry.k8s.io/pause:3.9", "registry.k8s.io/etcd:3.5.12-0"])


def save_state(s):
    tb.save("kubeadm", s)


# ----------------------------------------------------------------------------- configs


def read_config(path):
    if path in ("-", "/dev/stdin"):
        text = tb.read_stdin()
    else:
        text = tb.read_file(path)
        if text is None:
            raise Fail("unable to read config from \"%s\" : open %s: no such file or directory" % (path, path))
    docs = {}
    try:
        for d in yaml.load_all(text, Loader=SAFE_LOADER):
            if not d:
                continue
            if not isinstance(d, dict) or "kind" not in d or "apiVersion" not in d:
                raise Fail("couldn't parse %s: apiVersion and kind are required" % path)
            kind, api = d["kind"], d["apiVersion"]
            if kind in ("KubeletConfiguration", "KubeProxyConfiguration"):
                docs[kind] = d
                continue
            if kind not in KINDS:
                err("W0000 testbed: [config] WARNING: Ignored configuration document with GroupVersionKind %s, Kind=%s" % (api, kind))
                continue
            need = API_VERSIONS.get(api)
            if need is None or vtuple(version()) < need:
                raise Fail('no kind "%s" is registered for version "%s" in scheme "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/scheme/scheme.go:31"' % (kind, api))
            unknown = set(d) - KNOWN_FIELDS.get(kind, set(d))
            for u in sorted(unknown):
                raise Fail('error unmarshaling configuration schema.GroupVersionKind{Group:"kubeadm.k8s.io", Version:"%s", Kind:"%s"}: strict decoding error: unknown field "%s"' % (api.split("/")[1], kind, u))
            docs[kind] = d
    except yaml.YAMLError as e:
        raise Fail("couldn't parse %s: %s" % (path, str(e).replace("\n", " ")))
    return docs


def flag(opts, name, default=None):
    v = opts.get(name)
    return v[-1] if v else default


# ----------------------------------------------------------------------------- preflight


def preflight(opts, mode):
    ignored = set()
    for v in opts.get("ignore-preflight-errors", []):
        ignored |= {x.strip().lower() for x in str(v).split(",")}
    tb.knob("kubeadm", "preflight")
    out("[preflight] Running pre-flight checks")
    errors, warnings = [], []
    if tb.swaps():
        errors.append(("Swap", "running with swap on is not supported. Please disable swap"))
    s = tb.load("sysctl")
    if s.get("net.ipv4.ip_forward") != "1":
        errors.append(("FileContent--proc-sys-net-ipv4-ip_forward", "/proc/sys/net/ipv4/ip_forward contents are not set to 1"))
    if "net.bridge.bridge-nf-call-iptables" not in s:
        errors.append(("FileContent--proc-sys-net-bridge-bridge-nf-call-iptables", "/proc/sys/net/bridge/bridge-nf-call-iptables does not exist"))
    elif s["net.bridge.bridge-nf-call-iptables"] != "1":
        errors.append(("FileContent--proc-sys-net-bridge-bridge-nf-call-iptables", "/proc/sys/net/bridge/bridge-nf-call-iptables contents are not set to 1"))
    sd = tb.load("systemd")
    c = tb.load("containerd").get("running")
    if sd.get("containerd", {}).get("state") != "active" or not c:
        errors.append(("CRI", 'container runtime is not running: output: time="0" level=fatal msg="validate service connection: '
                              'validate CRI v1 runtime API for endpoint \\"unix:///var/run/containerd/containerd.sock\\": rpc error: code = Unavailable"'))
    elif not c.get("cri"):
        errors.append(("CRI", 'container runtime is not running: output: time="0" level=fatal msg="validate service connection: '
                              'validate CRI v1 runtime API for endpoint \\"unix:///var/run/containerd/containerd.sock\\": rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService"'))
    if "kubelet" not in tb.load("dpkg"):
        errors.append(("FileExisting-kubelet", "kubelet not found in system path"))
    elif not sd.get("kubelet", {}).get("enabled"):
        warnings.append(("Service-Kubelet", "kubelet service is not enabled, please run 'systemctl enable kubelet.service'"))
    if tb.unit_state("kubelet", sd.get("kubelet", {})) == "active":
        errors.append(("Port-10250", "Port 10250 is in use"))
    for p in ("conntrack",):
        if p not in tb.load("dpkg"):
            warnings.append(("FileExisting-%s" % p, "%s not found in system path" % p))
    if mode == "init":
        if apiserver_alive():
            errors.append(("Port-6443", "Port 6443 is in use"))
        if kubelet().etcd_running(tb.HOST):
            errors.append(("Port-2379", "Port 2379 is in use"))
            errors.append(("Port-2380", "Port 2380 is in use"))
        for m in MANIFESTS:
            p = "/etc/kubernetes/manifests/" + m
            if os.path.exists(tb.hp(p)):
                errors.append(("FileAvailable--etc-kubernetes-manifests-" + m, "%s already exists" % p))
        d = tb.hp("/var/lib/etcd")
        if os.path.isdir(d) and os.listdir(d):
            errors.append(("DirAvailable--var-lib-etcd", "/var/lib/etcd is not empty"))
    else:
        for p in ("/etc/kubernetes/kubelet.conf", "/etc/kubernetes/pki/ca.crt"):
            if os.path.exists(tb.hp(p)):
                errors.append(("FileAvailable-" + p.replace("/", "-"), "%s already exists" % p))
    for name, msg in warnings:
        err("\t[WARNING %s]: %s" % (name, msg))
    fatal = []
    for name, msg in errors:
        if "all" in ignored or name.lower() in ignored:
            err("\t[WARNING %s]: %s" % (name, msg))
        else:
            fatal.append((name, msg))
    if mode == "init" and not fatal:
        # kubeadm's image check: each control-plane image containerd lacks is
        # pulled (IfNotPresent, kubeadm's default); one that cannot be is an
        # ImagePull error. Images imported beforehand are not pulled at all.
        have = set(tb.images())
        missing = [i for i in control_plane_images() if tb.normalized_image(i) not in have]
        if missing:
            out("[preflight] Pulling images required for setting up a Kubernetes cluster")
        for i in missing:
            e = tb.pull_image(i)
            if e and "all" not in ignored and "imagepull" not in ignored:
                fatal.append(("ImagePull", "failed to pull image %s: output: E0000 %s, error: exit status 1" % (i, e)))
            elif e:
                err("\t[WARNING ImagePull]: failed to pull image %s: %s" % (i, e))
    if fatal:
        err("error execution phase preflight: [preflight] Some fatal errors occurred:")
        for name, msg in fatal:
            err("\t[ERROR %s]: %s" % (name, msg))
        err("[preflight] If you know what you are doing, you can make a check non-fatal with `--ignore-preflight-errors=...`")
        err("To see the stack trace of this error execute with --v=5 or higher")
        raise tb.Exit(1)


# ----------------------------------------------------------------------------- certificates


def openssl(*args, stdin=None):
    r = subprocess.run(["openssl"] + list(args), input=stdin, capture_output=True)
    if r.returncode != 0:
        raise Fail("openssl %s: %s" % (args[0], r.stderr.decode(errors="replace").strip()))
    return r.stdout


def make_key(path):
    openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", path)
    os.chmod(path, 0o600)


def make_ca(d, name, cn):
    """A self-signed CA of 10 years (kubeadm's), its key at 0600."""
    key = d + "/" + name + ".key"
    openssl("req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-subj", "/CN=" + cn, "-days", "3650",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
            "-out", d + "/" + name + ".crt")
    os.chmod(key, 0o600)


CLIENT_EXT = "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
SERVER_EXT = "extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"


def make_cert(d, name, ca, subj, ext, ca_dir=None):
    """A leaf of 1 year signed by CA (d/CA.crt, .key, or in ca_dir): one openssl run."""
    ca_dir = ca_dir or d
    key, crt = d + "/" + name + ".key", d + "/" + name + ".crt"
    args = ["req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-CA", ca_dir + "/" + ca + ".crt", "-CAkey", ca_dir + "/" + ca + ".key",
            "-subj", subj, "-days", "365", "-addext", "basicConstraints=critical,CA:FALSE"]
    for line in ext.strip().splitlines():
        args += ["-addext", line]
    openssl(*(args + ["-out", crt]))
    os.chmod(key, 0o600)


def der_of(pem):
    body, inside = [], False
    for line in pem.splitlines():
        if line.startswith("-----BEGIN CERTIFICATE"):
            inside = True
        elif line.startswith("-----END CERTIFICATE"):
            break
        elif inside:
            body.append(line.strip())
    return base64.b64decode("".join(body))


def _tlv(der, i):  # (tag, start of the contents, length of the contents)
    tag, n = der[i], der[i + 1]
    i += 2
    if n & 0x80:
        k = n & 0x7F
        n = int.from_bytes(der[i:i + k], "big")
        i += k
    return tag, i, n


def _asn1_time(der, i):
    import calendar
    tag, c, n = _tlv(der, i)
    t = der[c:c + n].decode()
    if tag == 0x17:  # UTCTime YYMMDDHHMMSSZ
        y = int(t[:2])
        t = ("19" if y >= 50 else "20") + t
    return calendar.timegm(time.strptime(t[:14], "%Y%m%d%H%M%S")), c + n


def cert_fields(pem):
    """The issuer's and subject's DER and the validity of a PEM certificate, read from its DER."""
    der = der_of(pem)
    _, cert, _ = _tlv(der, 0)
    _, i, _ = _tlv(der, cert)
    if der[i] == 0xA0:
        _, c, n = _tlv(der, i)
        i = c + n
    for _ in range(2):  # serialNumber, signature
        _, c, n = _tlv(der, i)
        i = c + n
    _, c, n = _tlv(der, i)
    issuer = der[i:c + n]
    i = c + n
    _, v, vn = _tlv(der, i)  # validity
    nb, j = _asn1_time(der, v)
    na, _ = _asn1_time(der, j)
    i = v + vn
    _, c, n = _tlv(der, i)
    subject = der[i:c + n]
    return {"issuer": issuer, "subject": subject, "not_before": nb, "not_after": na}


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


CA_CNF = """[ca]
default_ca = tb
[tb]
database = %(d)s/index.txt
new_certs_dir = %(d)s
serial = %(d)s/serial
default_md = sha256
policy = any
copy_extensions = copyall
unique_subject = no
[any]
commonName = optional
organizationName = optional
"""


def reissue(pem, key_pem, ca_pem, ca_key_pem, not_before, not_after, host=None):
    """The same certificate (subject, SANs, extensions, key) signed again by its CA with another validity
    (openssl ca: not-after may be in the past)."""
    import tempfile
    tmp = tempfile.mkdtemp(prefix="tb-reissue-", dir=(host or tb.HOST) + "/state")
    try:
        for n, t in (("c.crt", pem), ("c.key", key_pem), ("ca.crt", ca_pem), ("ca.key", ca_key_pem)):
            fd = os.open(tmp + "/" + n, os.O_WRONLY | os.O_CREAT, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(t)
        open(tmp + "/index.txt", "w").close()
        with open(tmp + "/serial", "w") as f:
            f.write("01\n")
        with open(tmp + "/ca.cnf", "w") as f:
            f.write(CA_CNF % {"d": tmp})
        openssl("x509", "-x509toreq", "-in", tmp + "/c.crt", "-key", tmp + "/c.key", "-copy_extensions", "copyall",
                "-out", tmp + "/c.csr")
        t = lambda x: time.strftime("%Y%m%d%H%M%SZ", time.gmtime(x))
        openssl("ca", "-batch", "-config", tmp + "/ca.cnf", "-in", tmp + "/c.csr", "-cert", tmp + "/ca.crt",
                "-keyfile", tmp + "/ca.key", "-startdate", t(not_before), "-enddate", t(not_after), "-notext",
                "-preserveDN", "-rand_serial", "-out", tmp + "/new.crt")
        return open(tmp + "/new.crt").read()
    finally:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)


# kubeadm's names (certs check-expiration, certs renew NAME) of the leaves under pki/ and the kubeconfigs.
PKI_LEAVES = {"apiserver": "apiserver", "apiserver-kubelet-client": "apiserver-kubelet-client",
              "front-proxy-client": "front-proxy-client", "apiserver-etcd-client": "apiserver-etcd-client",
              "etcd-server": "etcd/server", "etcd-peer": "etcd/peer", "etcd-healthcheck-client": "etcd/healthcheck-client"}
CONF_LEAVES = {"admin.conf": "admin.conf", "super-admin.conf": "super-admin.conf",
               "controller-manager.conf": "controller-manager.conf", "scheduler.conf": "scheduler.conf"}
CA_NAMES = ["ca", "front-proxy-ca", "etcd/ca"]


def host_cas(host=None):
    """The CAs under a host's pki/ (kubeadm's three, and any other self-signed CA there): {subject DER: (crt, key)}."""
    pki = tb.hp("/etc/kubernetes/pki", host)
    cas = {}
    for root, _, files in os.walk(pki):
        for n in files:
            if not n.endswith(".crt"):
                continue
            crt = os.path.join(root, n)
            key = crt[:-4] + ".key"
            try:
                pem = open(crt).read()
                f = cert_fields(pem)
            except (OSError, ValueError, IndexError, UnicodeDecodeError):
                continue
            if f["issuer"] == f["subject"] and os.path.exists(key):
                cas[f["subject"]] = (pem, open(key).read())
    return cas


def leaf_files(host=None):
    """Every leaf certificate under a host's pki/ (a .crt with its .key, not a CA): {kubeadm name: path below pki/}."""
    pki = tb.hp("/etc/kubernetes/pki", host)
    out_ = {}
    for root, _, files in os.walk(pki):
        for n in sorted(files):
            if not n.endswith(".crt"):
                continue
            rel = os.path.relpath(os.path.join(root, n), pki)[:-4]
            try:
                f = cert_fields(open(os.path.join(root, n)).read())
            except (OSError, ValueError, IndexError, UnicodeDecodeError):
                continue
            if f["issuer"] == f["subject"] or not os.path.exists(os.path.join(root, n[:-4] + ".key")):
                continue
            name = next((k for k, v in PKI_LEAVES.items() if v == rel), rel.replace("/", "-"))
            out_[name] = rel
    return out_


def renew_pki_leaf(rel, not_before, not_after, host=None):
    """pki/REL.crt signed again by the CA that signed it (found among the host's CAs by issuer), keeping its key."""
    pki = tb.hp("/etc/kubernetes/pki", host)
    pem = open(pki + "/" + rel + ".crt").read()
    ca = host_cas(host).get(cert_fields(pem)["issuer"])
    if ca is None:
        raise Fail("unable to renew %s: the CA that signed it is not under /etc/kubernetes/pki" % rel)
    new = reissue(pem, open(pki + "/" + rel + ".key").read(), ca[0], ca[1], not_before, not_after, host)
    tmp = pki + "/" + rel + ".crt.tbtmp"
    with open(tmp, "w") as f:
        f.write(new)
    os.chmod(tmp, 0o644)
    os.rename(tmp, pki + "/" + rel + ".crt")


def renew_conf(name, not_before, not_after, host=None):
    """The client certificate a kubeconfig embeds, signed again by the cluster CA (its key kept)."""
    path = tb.hp("/etc/kubernetes/" + name, host)
    doc = yaml.load(open(path).read(), Loader=SAFE_LOADER)
    user = doc["users"][0]["user"]
    if "client-certificate-data" not in user:
        return False
    pem = base64.b64decode(user["client-certificate-data"]).decode()
    key = base64.b64decode(user["client-key-data"]).decode()
    ca = host_cas(host).get(cert_fields(pem)["issuer"])
    if ca is None:
        raise Fail("unable to renew %s: the CA that signed its client certificate is not under /etc/kubernetes/pki" % name)
    user["client-certificate-data"] = b64(reissue(pem, key, ca[0], ca[1], not_before, not_after, host))
    text = yaml.safe_dump(doc, sort_keys=False)
    tmp = path + ".tbtmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.rename(tmp, path)
    return True


def kubelet_client_pem(node, host=None):
    return tb.hp("/var/lib/kubelet/pki/kubelet-client-current.pem", host)


def cert_not_afters(host):
    """{where: not-after (RFC 3339)} of every certificate of a host: pki/ files, the kubeconfigs' embedded
    client certificates, the kubelet's client certificate (testbed.sh state)."""
    got = {}
    pki = tb.hp("/etc/kubernetes/pki", host)
    if os.path.isdir(pki):
        for root, _, files in os.walk(pki):
            for n in files:
                if n.endswith(".crt"):
                    p = os.path.join(root, n)
                    try:
                        got["/etc/kubernetes/pki/" + os.path.relpath(p, pki)] = iso(cert_fields(open(p).read())["not_after"])
                    except (OSError, ValueError, IndexError, UnicodeDecodeError):
                        got["/etc/kubernetes/pki/" + os.path.relpath(p, pki)] = None
    for c in CONFS:
        p = tb.hp("/etc/kubernetes/" + c, host)
        if not os.path.exists(p):
            continue
        try:
            user = yaml.load(open(p).read(), Loader=SAFE_LOADER)["users"][0]["user"]
            if "client-certificate-data" in user:
                got["/etc/kubernetes/" + c] = iso(cert_fields(base64.b64decode(user["client-certificate-data"]).decode())["not_after"])
        except (OSError, ValueError, IndexError, KeyError, TypeError, UnicodeDecodeError, yaml.YAMLError):
            got["/etc/kubernetes/" + c] = None
    p = tb.hp("/var/lib/kubelet/pki/kubelet-client-current.pem", host)
    if os.path.exists(p):
        try:
            got["/var/lib/kubelet/pki/kubelet-client-current.pem"] = iso(cert_fields(open(p).read())["not_after"])
        except (OSError, ValueError, IndexError, UnicodeDecodeError):
            got["/var/lib/kubelet/pki/kubelet-client-current.pem"] = None
    return dict(sorted(got.items()))


def age_certs(days, names=(), host=None):
    """Re-issues the host's leaves (pki/ leaves, the kubeconfigs' client certificates, the kubelet's client
    certificate) with a not-after `days` from now (negative: in the past); `names` (kubeadm's, "kubelet-client")
    limits them. Returns the names re-issued."""
    now = int(time.time())
    na = now + int(float(days) * 86400)
    nb = min(now - 3600, na - 365 * 86400)
    done = []
    for name, rel in leaf_files(host).items():
        if not names or name in names:
            renew_pki_leaf(rel, nb, na, host)
            done.append(name)
    for c in CONFS:
        if (not names or c in names) and os.path.exists(tb.hp("/etc/kubernetes/" + c, host)):
            if renew_conf(c, nb, na, host):
                done.append(c)
    p = tb.hp("/var/lib/kubelet/pki/kubelet-client-current.pem", host)
    if (not names or "kubelet-client" in names) and os.path.exists(p):
        text = open(p).read()
        crt = text[:text.index("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")] + "\n"
        key = text[text.index("-----BEGIN", len(crt) - 1):]
        ca = master_ca(host)
        new = reissue(crt, key, ca[0], ca[1], nb, na, host)
        fd = os.open(p + ".tbtmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(new + key)
        os.rename(p + ".tbtmp", p)
        done.append("kubelet-client")
    return done


def master_host(host=None):
    info = tb.host_info(host)
    run = json.load(open(info["run"] + "/testbed.json"))
    return info["run"] + "/hosts/" + run["hosts"][0]["name"]


def master_ca(host=None):
    """The cluster CA (a master's pki/ca.crt and ca.key), which signs the kubelets' client certificates
    (the controller-manager's CSR signer on a real cluster): this host's when it is a master with the
    CA, else the first master's, else any master's that has it."""
    candidates = [host or tb.HOST, master_host(host)]
    info = tb.host_info(host)
    run = json.load(open(info["run"] + "/testbed.json"))
    candidates += [info["run"] + "/hosts/" + h["name"] for h in run["hosts"] if h["role"] == "master"]
    for H in candidates:
        pki = tb.hp("/etc/kubernetes/pki", H)
        if os.path.exists(pki + "/ca.key") and os.path.exists(pki + "/ca.crt"):
            return open(pki + "/ca.crt").read(), open(pki + "/ca.key").read()
    pki = tb.hp("/etc/kubernetes/pki", master_host(host))
    return open(pki + "/ca.crt").read(), open(pki + "/ca.key").read()


def write_kubelet_client(node, host=None):
    """/var/lib/kubelet/pki/kubelet-client-current.pem: the kubelet's client certificate (1 year,
    O=system:nodes, CN=system:node:NODE, signed by the cluster CA) followed by its key, at 0600."""
    import tempfile
    d = tb.hp("/var/lib/kubelet/pki", host)
    os.makedirs(d, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="tb-kubelet-", dir=(host or tb.HOST) + "/state")
    try:
        ca_pem, ca_key = master_ca(host)
        for n, t in (("ca.crt", ca_pem), ("ca.key", ca_key)):
            fd = os.open(tmp + "/" + n, os.O_WRONLY | os.O_CREAT, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(t)
        make_cert(tmp, "kubelet", "ca", "/O=system:nodes/CN=system:node:" + node, CLIENT_EXT)
        text = open(tmp + "/kubelet.crt").read() + open(tmp + "/kubelet.key").read()
    finally:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    fd = os.open(d + "/kubelet-client-current.pem.tbtmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.rename(d + "/kubelet-client-current.pem.tbtmp", d + "/kubelet-client-current.pem")


def etcd_pki(pki, node, addr, with_ca=True):
    """kubeadm's etcd certificates: etcd's own CA (not on a joining master: it has the
    uploaded one), the server and peer certificates (the host's name and address,
    localhost), the health check's and the API server's client certificates."""
    d = pki + "/etcd"
    if with_ca:
        make_ca(d, "ca", "etcd-ca")
    sans = "subjectAltName=DNS:%s,DNS:localhost,IP:%s,IP:127.0.0.1,IP:0:0:0:0:0:0:0:1\n" % (node, addr)
    usage = "keyUsage=critical,digitalSignature,keyEncipherment\n"
    for name in ("server", "peer"):
        make_cert(d, name, "ca", "/CN=" + node, sans + "extendedKeyUsage=serverAuth,clientAuth\n" + usage)
    make_cert(d, "healthcheck-client", "ca", "/CN=kube-etcd-healthcheck-client", "extendedKeyUsage=clientAuth\n" + usage)
    make_cert(pki, "apiserver-etcd-client", "etcd/ca", "/CN=kube-apiserver-etcd-client", "extendedKeyUsage=clientAuth\n" + usage)


def etcd_manifest(node, addr, initial_cluster=None):
    """kubeadm's etcd static Pod. The client URLs are the master's address only: every
    testbed host shares this machine's 127.0.0.1 (docs/testbed.md, "The etcd"). A master
    joining an etcd cluster (initial_cluster: NAME=PEER_URL,...) starts it as a member of
    the existing cluster, as kubeadm's join does."""
    client, peer = "https://%s:2379" % addr, "https://%s:2380" % addr
    joining = ["--initial-cluster-state=existing"] if initial_cluster else []
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"annotations": {"kubeadm.kubernetes.io/etcd.advertise-client-urls": client},
                     "labels": {"component": "etcd", "tier": "control-plane"}, "name": "etcd", "namespace": "kube-system"},
        "spec": {"containers": [{
            "command": ["etcd", "--advertise-client-urls=" + client,
                        "--cert-file=/etc/kubernetes/pki/etcd/server.crt", "--client-cert-auth=true",
                        "--data-dir=/var/lib/etcd", "--initial-advertise-peer-urls=" + peer,
                        "--initial-cluster=" + (initial_cluster or "%s=%s" % (node, peer))] + joining + [
                        "--key-file=/etc/kubernetes/pki/etcd/server.key",
                        "--listen-client-urls=" + client, "--listen-metrics-urls=http://%s:2381" % addr,
                        "--listen-peer-urls=" + peer, "--name=" + node,
                        "--peer-cert-file=/etc/kubernetes/pki/etcd/peer.crt", "--peer-client-cert-auth=true",
                        "--peer-key-file=/etc/kubernetes/pki/etcd/peer.key",
                        "--peer-trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt", "--snapshot-count=10000",
                        "--trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt"],
            "image": "registry.k8s.io/etcd:3.5.12-0", "imagePullPolicy": "IfNotPresent", "name": "etcd",
            "volumeMounts": [{"mountPath": "/var/lib/etcd", "name": "etcd-data"},
                             {"mountPath": "/etc/kubernetes/pki/etcd", "name": "etcd-certs"}]}],
            "hostNetwork": True, "priority": 2000001000, "priorityClassName": "system-node-critical",
            "volumes": [{"hostPath": {"path": "/etc/kubernetes/pki/etcd", "type": "DirectoryOrCreate"}, "name": "etcd-certs"},
                        {"hostPath": {"path": "/var/lib/etcd", "type": "DirectoryOrCreate"}, "name": "etcd-data"}]}},
        sort_keys=False)


def apiserver_manifest(addr, port, svc_cidr, kver):
    """kubeadm's kube-apiserver static Pod, with its etcd flags and certificates."""
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"annotations": {"kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint": "%s:%d" % (addr, port)},
                     "labels": {"component": "kube-apiserver", "tier": "control-plane"},
                     "name": "kube-apiserver", "namespace": "kube-system"},
        "spec": {"containers": [{
            "command": ["kube-apiserver", "--advertise-address=" + addr, "--client-ca-file=/etc/kubernetes/pki/ca.crt",
                        "--etcd-cafile=/etc/kubernetes/pki/etcd/ca.crt",
                        "--etcd-certfile=/etc/kubernetes/pki/apiserver-etcd-client.crt",
                        "--etcd-keyfile=/etc/kubernetes/pki/apiserver-etcd-client.key",
                        "--etcd-servers=https://%s:2379" % addr, "--secure-port=%d" % port,
                        "--service-cluster-ip-range=" + svc_cidr,
                        "--tls-cert-file=/etc/kubernetes/pki/apiserver.crt",
                        "--tls-private-key-file=/etc/kubernetes/pki/apiserver.key"],
            "image": "registry.k8s.io/kube-apiserver:" + kver, "imagePullPolicy": "IfNotPresent", "name": "kube-apiserver",
            "volumeMounts": [{"mountPath": "/etc/kubernetes/pki", "name": "k8s-certs", "readOnly": True}]}],
            "hostNetwork": True, "priority": 2000001000, "priorityClassName": "system-node-critical",
            "volumes": [{"hostPath": {"path": "/etc/kubernetes/pki", "type": "DirectoryOrCreate"}, "name": "k8s-certs"}]}},
        sort_keys=False)


def spki_hash(ca_pem):
    """kubeadm's CA pin: sha256 of the certificate's SubjectPublicKeyInfo (DER),
    read from the certificate's DER here (two openssl runs cost a join ~8 ms)."""
    body = "".join(l.strip() for l in ca_pem.splitlines() if l.strip() and not l.startswith("-----"))
    der = base64.b64decode(body)

    def tlv(i):  # (tag, start of the contents, length of the contents)
        tag, n = der[i], der[i + 1]
        i += 2
        if n & 0x80:
            k = n & 0x7F
            n = int.from_bytes(der[i:i + k], "big")
            i += k
        return tag, i, n

    _, cert, _ = tlv(0)  # Certificate SEQUENCE
    _, i, _ = tlv(cert)  # tbsCertificate SEQUENCE: its fields
    if der[i] == 0xA0:  # [0] version
        _, c, n = tlv(i)
        i = c + n
    for _ in range(5):  # serialNumber, signature, issuer, validity, subject
        _, c, n = tlv(i)
        i = c + n
    _, c, n = tlv(i)  # subjectPublicKeyInfo
    return "sha256:" + hashlib.sha256(der[i:c + n]).hexdigest()


def spki_hash_openssl(ca_pem):  # the same with openssl (test_fakes.sh compares them)
    pub = openssl("x509", "-pubkey", "-noout", stdin=ca_pem.encode())
    der = openssl("pkey", "-pubin", "-outform", "DER", stdin=pub)
    return "sha256:" + hashlib.sha256(der).hexdigest()


def b64(s):
    return base64.b64encode(s.encode() if isinstance(s, str) else s).decode()


def kubeconfig(server, ca, user, cert=None, key=None, token=None):
    u = {"token": token} if token else {"client-certificate-data": b64(cert), "client-key-data": b64(key)}
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "kubernetes", "cluster": {"certificate-authority-data": b64(ca), "server": server}}],
        "contexts": [{"name": "%s@kubernetes" % user, "context": {"cluster": "kubernetes", "user": user}}],
        "current-context": "%s@kubernetes" % user, "preferences": {},
        "users": [{"name": user, "user": u}]}, sort_keys=False)


# ----------------------------------------------------------------------------- the API server


def api_dir(host=None):
    return (host or tb.HOST) + "/state/apiserver"


def kubelet():
    """The kubelet's static pods (tbkubelet.py): etcd and the API server from their manifests."""
    import tbkubelet
    return tbkubelet


def apiserver_pid():
    return kubelet().apiserver_pid(tb.HOST)


def apiserver_alive():
    return kubelet().running_pid(tb.HOST, "kube-apiserver") is not None


def start_control_plane():
    """What the kubelet does once kubeadm wrote the manifests: etcd, then the API server."""
    k = kubelet()
    for name in ("etcd", "kube-apiserver"):
        text, doc = k.load_manifest(tb.HOST, name)
        if doc is None:
            raise Fail("the static Pod manifest /etc/kubernetes/manifests/%s.yaml is missing or does not parse" % name)
        if k.running_pid(tb.HOST, name):
            continue
        try:
            if name == "etcd":
                k.start_etcd(tb.HOST, text, doc)
            else:
                k.start_apiserver(tb.HOST, text, doc, tb.LIB)
        except RuntimeError as e:
            raise Fail(str(e))


def ensure_apiserver(sd):
    """The kubelet runs the static pods: while it runs and a manifest exists, so does its process."""
    if not os.path.exists(api_dir() + "/config.json"):
        return
    for e in kubelet().sync(tb.HOST, tb.LIB, sd):
        err(e)


def stop_apiserver():
    """The API server, then etcd (kubeadm reset)."""
    kubelet().stop_all(tb.HOST)


def api(method, path, body=None, cfg=None, token=None, raw=False, ctx=None, endpoint=None, headers=None):
    """One request to the API server; returns (status, parsed body, headers)."""
    if cfg is None:
        cfg = json.load(open(api_dir() + "/config.json"))
    if endpoint is None:
        endpoint = "%s:%d" % (cfg["address"], cfg["port"])
        if token is None:
            token = open(api_dir() + "/admin-token").read().strip()
    if ctx is None:
        ctx = ssl.create_default_context(cafile=cfg["ca"]) if cfg else ssl._create_unverified_context()
        ctx.check_hostname = False
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request("https://%s%s" % (endpoint, path), data=data, method=method)
    req.add_header("Content-Type", "application/json")
    req.add_header("Accept", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
            text = r.read()
            return r.status, (text if raw else json.loads(text or b"{}")), dict(r.headers)
    except urllib.error.HTTPError as e:
        text = e.read()
        try:
            return e.code, json.loads(text), dict(e.headers)
        except ValueError:
            return e.code, {"message": text.decode(errors="replace")}, dict(e.headers)


def new_token():
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(secrets.choice(alphabet) for _ in range(6)) + "." + "".join(secrets.choice(alphabet) for _ in range(16))


def token_secret(token, ttl, description="", usages=("signing", "authentication"),
                 groups=("system:bootstrappers:kubeadm:default-node-token",)):
    tid, tsec = token.split(".")
    data = {"token-id": tid, "token-secret": tsec, "auth-extra-groups": ",".join(groups)}
    for u in usages:
        data["usage-bootstrap-" + u] = "true"
    if ttl:
        data["expiration"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + ttl))
    if description:
        data["description"] = description
    return {"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
            "metadata": {"name": "bootstrap-token-" + tid, "namespace": "kube-system"},
            "data": {k: b64(v) for k, v in data.items()}}


def create_token(token, ttl, **kw):
    st, body, _ = api("POST", "/api/v1/namespaces/kube-system/secrets", token_secret(token, ttl, **kw))
    if st == 409:
        raise Fail('failed to create or update bootstrap token with name bootstrap-token-%s: secrets "bootstrap-token-%s" already exists' % (token[:6], token[:6]))
    if st >= 300:
        raise Fail("failed to create bootstrap token: %s" % body.get("message"))


def join_command(token, cfg):
    ca = open(cfg["ca"]).read()
    return "kubeadm join %s --token %s \\\n\t--discovery-token-ca-cert-hash %s" % (cfg["endpoint"], token, spki_hash(ca))


# ----------------------------------------------------------------------------- init


def node_object(name, addr, labels, taints, host):
    info = tb.host_info(host)
    mem_kib = 0
    for l in open(tb.hp("/proc/meminfo", host)):
        if l.startswith("MemTotal:"):
            mem_kib = int(l.split()[1])
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels,
                         "annotations": {"kubeadm.alpha.kubernetes.io/cri-socket": "unix:///var/run/containerd/containerd.sock",
                                         "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
            "spec": {"taints": taints} if taints else {},
            "status": {"capacity": {"cpu": str(info.get("cpus", 8)), "memory": "%dKi" % mem_kib, "pods": "110"},
                       "allocatable": {"cpu": str(info.get("cpus", 8)), "memory": "%dKi" % mem_kib, "pods": "110"},
                       "addresses": [{"type": "InternalIP", "address": addr}, {"type": "Hostname", "address": name}],
                       "nodeInfo": {"kubeletVersion": "v" + (tb.pkg_version("kubelet") or version()),
                                    "containerRuntimeVersion": "containerd://1.7.12", "osImage": info["os"],
                                    "operatingSystem": "linux", "architecture": "amd64"}}}


def base_labels(name):
    return {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}


def kubelet_config(cgroup_driver):
    return yaml.safe_dump({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                           "cgroupDriver": cgroup_driver, "clusterDNS": ["10.96.0.10"], "clusterDomain": "cluster.local",
                           "staticPodPath": "/etc/kubernetes/manifests", "authentication": {"x509": {"clientCAFile": "/etc/kubernetes/pki/ca.crt"}}},
                          sort_keys=False)


def start_kubelet(cgroup_driver):
    """kubelet-start; then the kubelet-check: the runtime must use the kubelet's cgroup driver."""
    sd = tb.load("systemd")
    sd.setdefault("kubelet", {"enabled": False})["state"] = "started"
    tb.kubelet_started(sd["kubelet"])
    tb.save("systemd", sd)
    c = tb.load("containerd").get("running") or {}
    if cgroup_driver == "systemd" and not c.get("SystemdCgroup"):
        err("[kubelet-check] The kubelet is not healthy after 4m0s")
        err("Unfortunately, an error has occurred: the containers of the control plane keep restarting:")
        err("\tthe container runtime uses the cgroupfs driver while the kubelet uses systemd (containerd: SystemdCgroup = false)")
        raise Fail("wait-control-plane: couldn't initialize a Kubernetes cluster")


def init(argv):
    opts, args = tb.parse_opts(argv, VALUE_FLAGS)
    check_flags(opts, INIT_FLAGS, "init")
    docs = {}
    if "config" in opts:
        mixed = set(opts) - {"config", "ignore-preflight-errors", "dry-run", "skip-phases", "v", "upload-certs",
                             "skip-token-print", "skip-certificate-key-print"}
        if mixed:
            raise Fail("can not mix '--config' with arguments [%s]" % " ".join(sorted(mixed)))
        docs = read_config(flag(opts, "config"))
    ic, cc = docs.get("InitConfiguration", {}), docs.get("ClusterConfiguration", {})
    kc = docs.get("KubeletConfiguration", {})
    info = tb.host_info()
    addr = flag(opts, "apiserver-advertise-address") or ic.get("localAPIEndpoint", {}).get("advertiseAddress") or info["address"]
    port = int(flag(opts, "apiserver-bind-port") or ic.get("localAPIEndpoint", {}).get("bindPort") or 6443)
    endpoint = flag(opts, "control-plane-endpoint") or cc.get("controlPlaneEndpoint") or "%s:%d" % (addr, port)
    if ":" not in endpoint:
        endpoint += ":%d" % port
    net = cc.get("networking", {})
    pod_cidr = flag(opts, "pod-network-cidr") or net.get("podSubnet", "")
    svc_cidr = flag(opts, "service-cidr") or net.get("serviceSubnet", "10.96.0.0/12")
    kver = flag(opts, "kubernetes-version") or cc.get("kubernetesVersion") or "v" + version()
    node = flag(opts, "node-name") or ic.get("nodeRegistration", {}).get("name") or info["name"]
    taints = ic.get("nodeRegistration", {}).get("taints")
    if taints is None:
        taints = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    cgroup = kc.get("cgroupDriver", "systemd")
    cert_sans = [str(x) for x in (cc.get("apiServer") or {}).get("certSANs") or []]
    cert_sans += [x for v in opts.get("apiserver-cert-extra-sans", []) for x in str(v).split(",") if x]
    upload = "upload-certs" in opts
    cert_key = None
    if upload:
        cert_key = flag(opts, "certificate-key") or ic.get("certificateKey") or secrets.token_hex(32)
        check_certificate_key(cert_key)
    if vtuple(kver) > vtuple(version()):
        raise Fail("this version of kubeadm only supports deploying clusters with the control plane version >= %d.%d.0. Current version: %s"
                   % (vtuple(version())[0], vtuple(version())[1] - 1, kver) if False else
                   "the specified version to deploy (%s) is greater than the kubeadm version (v%s)" % (kver, version()))
    if "dry-run" in opts:
        out("[dryrun] Would perform action: init on %s with endpoint %s" % (node, endpoint))
        return 0
    preflight(opts, "init")
    st = state()
    st["init_in_progress"] = True
    save_state(st)
    out("[certs] Using certificateDir folder \"/etc/kubernetes/pki\"")
    pki = tb.hp("/etc/kubernetes/pki")
    os.makedirs(pki + "/etcd", exist_ok=True)
    make_ca(pki, "ca", "kubernetes")
    host = endpoint.rsplit(":", 1)[0]
    sans = ["IP:" + addr, "IP:10.96.0.1", "DNS:kubernetes", "DNS:kubernetes.default", "DNS:kubernetes.default.svc",
            "DNS:kubernetes.default.svc.cluster.local", "DNS:" + node]
    sans.append(("IP:" if re.match(r"^[\d.]+$", host) else "DNS:") + host)
    sans += [san_of(x) for x in cert_sans]
    make_cert(pki, "apiserver", "ca", "/CN=kube-apiserver",
              "subjectAltName=%s\n" % ",".join(dict.fromkeys(sans)) + SERVER_EXT)
    make_cert(pki, "apiserver-kubelet-client", "ca", "/O=kubeadm:cluster-admins/CN=kube-apiserver-kubelet-client", CLIENT_EXT)
    make_ca(pki, "front-proxy-ca", "front-proxy-ca")
    make_cert(pki, "front-proxy-client", "front-proxy-ca", "/CN=front-proxy-client", CLIENT_EXT)
    make_key(pki + "/sa.key")
    tb.write_file("/etc/kubernetes/pki/sa.pub", openssl("ec", "-in", pki + "/sa.key", "-pubout").decode(), 0o644)
    etcd_pki(pki, node, addr)
    make_cert(pki, "admin", "ca", "/O=kubeadm:cluster-admins/CN=kubernetes-admin", CLIENT_EXT)
    conf_certs = {}
    if vtuple(version()) >= (1, 29):
        make_cert(pki, "super-admin", "ca", "/O=system:masters/CN=kubernetes-super-admin", CLIENT_EXT)
        conf_certs["super-admin.conf"] = ("kubernetes-super-admin", "super-admin")
    make_cert(pki, "controller-manager", "ca", "/CN=system:kube-controller-manager", CLIENT_EXT)
    make_cert(pki, "scheduler", "ca", "/CN=system:kube-scheduler", CLIENT_EXT)
    make_cert(pki, "kubelet", "ca", "/O=system:nodes/CN=system:node:" + node, CLIENT_EXT)
    conf_certs.update({"admin.conf": ("kubernetes-admin", "admin"),
                       "controller-manager.conf": ("system:kube-controller-manager", "controller-manager"),
                       "scheduler.conf": ("system:kube-scheduler", "scheduler"),
                       "kubelet.conf": ("system:node:" + node, "kubelet")})
    conf_pems = {}
    for c, (user, f) in conf_certs.items():
        conf_pems[c] = (user, open(pki + "/" + f + ".crt").read(), open(pki + "/" + f + ".key").read())
        os.unlink(pki + "/" + f + ".crt")
        os.unlink(pki + "/" + f + ".key")
    for f in PKI:
        p = pki + "/" + f
        if not os.path.exists(p):
            with open(p, "w") as fh:
                fh.write("# testbed placeholder for %s\n" % f)
        os.chmod(p, 0o600 if f.endswith(".key") else 0o644)
    out("[kubeconfig] Using kubeconfig folder \"/etc/kubernetes\"")
    man = tb.hp("/etc/kubernetes/manifests")
    os.makedirs(man, exist_ok=True)
    for m in MANIFESTS:
        comp = m[:-5]
        if comp in ("etcd", "kube-apiserver"):
            tb.write_file("/etc/kubernetes/manifests/" + m, (etcd_manifest(node, addr) if comp == "etcd" else
                                                             apiserver_manifest(addr, port, svc_cidr, kver)), 0o600)
            continue
        tb.write_file("/etc/kubernetes/manifests/" + m, yaml.safe_dump({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": comp, "namespace": "kube-system", "labels": {"component": comp, "tier": "control-plane"}},
            "spec": {"hostNetwork": True, "containers": [{"name": comp, "image": "registry.k8s.io/%s:%s" % (comp, kver),
                                                           "command": [comp, "--advertise-address=%s" % addr,
                                                                       "--service-cluster-ip-range=%s" % svc_cidr]
                                                           + (["--cluster-cidr=%s" % pod_cidr] if pod_cidr and comp == "kube-controller-manager" else [])}]}},
            sort_keys=False), 0o600)
    out("[control-plane] Creating static Pod manifests in \"/etc/kubernetes/manifests\"")
    out("[etcd] Creating static Pod manifest for local etcd in \"/etc/kubernetes/manifests\"")
    tb.knob("kubeadm", "init")
    tb.write_file("/var/lib/kubelet/config.yaml", kubelet_config(cgroup), 0o644)
    tb.write_file("/var/lib/kubelet/kubeadm-flags.env",
                  'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock --pod-infra-container-image=registry.k8s.io/pause:3.9"\n', 0o644)
    out("[kubelet-start] Starting the kubelet")
    start_kubelet(cgroup)
    # The API server (its objects in etcd; its own files in state/apiserver).
    d = api_dir()
    os.makedirs(d, exist_ok=True)
    admin_token = secrets.token_hex(24)
    with open(d + "/admin-token", "w") as f:
        f.write(admin_token + "\n")
    os.chmod(d + "/admin-token", 0o600)
    cfg = {"address": addr, "port": port, "endpoint": endpoint, "ca": pki + "/ca.crt", "ca_key": pki + "/ca.key",
           "cert": pki + "/apiserver.crt", "key": pki + "/apiserver.key", "service_cidr": svc_cidr,
           "pod_cidr": pod_cidr, "version": kver, "run": info["run"], "master_host": tb.HOST,
           "rollout_delay": float(os.environ.get("TESTBED_ROLLOUT_DELAY", info.get("rollout_delay", 0.5)))}
    if several_masters():
        cfg["cluster_lock"] = cluster_lock_path()
    with open(d + "/config.json", "w") as f:
        json.dump(cfg, f, indent=1)
    out("[wait-control-plane] Waiting for the kubelet to boot up the control plane as static Pods from directory \"/etc/kubernetes/manifests\"")
    start_control_plane()
    ca = open(pki + "/ca.crt").read()
    server = "https://" + endpoint
    for c in CONFS:
        if c == "super-admin.conf" and vtuple(version()) < (1, 29):
            continue
        user, crt, key = conf_pems[c]
        tb.write_file("/etc/kubernetes/" + c, kubeconfig(server, ca, user, crt, key), 0o600)
    # What kubeadm uploads.
    api("POST", "/api/v1/namespaces/kube-system/configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "kubeadm-config", "namespace": "kube-system"},
        "data": {"ClusterConfiguration": yaml.safe_dump(dict({"apiVersion": "kubeadm.k8s.io/v1beta4" if vtuple(version()) >= (1, 31) else "kubeadm.k8s.io/v1beta3",
                                                              "kind": "ClusterConfiguration", "kubernetesVersion": kver,
                                                              "controlPlaneEndpoint": endpoint,
                                                              "networking": {"podSubnet": pod_cidr, "serviceSubnet": svc_cidr, "dnsDomain": "cluster.local"}},
                                                             **({"apiServer": {"certSANs": cert_sans}} if cert_sans else {})))}})
    api("POST", "/api/v1/namespaces/kube-system/configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "kubelet-config", "namespace": "kube-system"}, "data": {"kubelet": kubelet_config(cgroup)}})
    api("POST", "/api/v1/namespaces/kube-public/configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cluster-info", "namespace": "kube-public"},
        "data": {"kubeconfig": yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "clusters": [
            {"name": "", "cluster": {"certificate-authority-data": b64(ca), "server": server}}]})}})
    labels = base_labels(node)
    labels["node-role.kubernetes.io/control-plane"] = ""
    labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
    st_, body, _ = api("POST", "/api/v1/nodes", node_object(node, addr, labels, taints, tb.HOST),
                       headers={"X-Testbed-Host": tb.HOST})
    if st_ >= 300:
        raise Fail("unable to register node %s: %s" % (node, body.get("message")))
    out("[mark-control-plane] Marking the node %s as control-plane" % node)
    if upload:
        upload_certs(cert_key, "skip-certificate-key-print" in opts)
    addons(kver)
    token = None
    for bt in ic.get("bootstrapTokens", [{}]):
        token = bt.get("token") or flag(opts, "token") or new_token()
        ttl = go_duration(bt.get("ttl", flag(opts, "token-ttl", "24h0m0s")))
        create_token(token, ttl, description=bt.get("description", ""))
    out("[bootstrap-token] Using token: %s" % ("<value withheld>" if "skip-token-print" in opts else token))
    st = state()
    st["init"] = st.get("init", 0) + 1
    st["init_in_progress"] = False
    save_state(st)
    out("\nYour Kubernetes control-plane has initialized successfully!\n")
    out("To start using your cluster, you need to run the following as a regular user:\n\n"
        "  mkdir -p $HOME/.kube\n  sudo cp -i /etc/kubernetes/admin.conf $HOME/.kube/config\n"
        "  sudo chown $(id -u):$(id -g) $HOME/.kube/config\n")
    if "skip-token-print" not in opts:
        if upload:
            out("You can now join any number of control-plane nodes running the following command on each as root:\n")
            out(join_command(token, cfg) + " \\\n\t--control-plane --certificate-key %s\n" % (
                "<value withheld>" if "skip-certificate-key-print" in opts else cert_key))
            out("Please note that the certificate-key gives access to cluster sensitive data, keep it secret!\n"
                "As a safeguard, uploaded-certs will be deleted in two hours; If necessary, you can use\n"
                "\"kubeadm init phase upload-certs --upload-certs\" to reload certs afterward.\n")
        out("Then you can join any number of worker nodes by running the following on each as root:\n")
        out(join_command(token, cfg))
    return 0


def addons(kver):
    api("POST", "/api/v1/namespaces/kube-system/serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "kube-proxy", "namespace": "kube-system"}})
    api("POST", "/apis/apps/v1/namespaces/kube-system/daemonsets", {"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "kube-proxy", "namespace": "kube-system", "labels": {"k8s-app": "kube-proxy"}},
        "spec": {"selector": {"matchLabels": {"k8s-app": "kube-proxy"}},
                 "template": {"metadata": {"labels": {"k8s-app": "kube-proxy"}},
                              "spec": {"tolerations": [{"operator": "Exists"}], "hostNetwork": True,
                                       "containers": [{"name": "kube-proxy", "image": "registry.k8s.io/kube-proxy:" + kver}]}}}})
    api("POST", "/apis/apps/v1/namespaces/kube-system/deployments", {"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "coredns", "namespace": "kube-system", "labels": {"k8s-app": "kube-dns"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"k8s-app": "kube-dns"}},
                 "template": {"metadata": {"labels": {"k8s-app": "kube-dns"}},
                              "spec": {"tolerations": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
                                       "containers": [{"name": "coredns", "image": "registry.k8s.io/coredns/coredns:v1.11.1"}]}}}})
    api("POST", "/api/v1/namespaces/kube-system/services", {"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": {"k8s-app": "kube-dns"}},
        "spec": {"selector": {"k8s-app": "kube-dns"}, "clusterIP": "10.96.0.10",
                 "ports": [{"name": "dns", "port": 53, "protocol": "UDP"}, {"name": "dns-tcp", "port": 53, "protocol": "TCP"}]}})


# ----------------------------------------------------------------------------- several masters

# What `kubeadm init --upload-certs` stores in the Secret kube-system/kubeadm-certs (kubeadm's
# names): the cluster-wide CAs and the service account key a joining master takes.
UPLOADED = [("ca.crt", "ca.crt"), ("ca.key", "ca.key"), ("sa.key", "sa.key"), ("sa.pub", "sa.pub"),
            ("front-proxy-ca.crt", "front-proxy-ca.crt"), ("front-proxy-ca.key", "front-proxy-ca.key"),
            ("etcd-ca.crt", "etcd/ca.crt"), ("etcd-ca.key", "etcd/ca.key")]
CERTS_SECRET = "/api/v1/namespaces/kube-system/secrets/kubeadm-certs"
CERTS_TTL = 2 * 3600  # kubeadm deletes the uploaded certificates after two hours
EXPIRES = "testbed.paictl/expires"
CERTS_TOKEN_DESCRIPTION = "Proxy for managing TTL for the kubeadm-certs secret"


def san_of(x):
    return ("IP:" if re.match(r"^[\d.]+$", x) or ":" in x else "DNS:") + x


def several_masters(host=None):
    info = tb.host_info(host)
    try:
        run = json.load(open(info["run"] + "/testbed.json"))
    except (OSError, ValueError):
        return False
    return sum(1 for h in run["hosts"] if h["role"] == "master") > 1


def cluster_lock_path(host=None):
    """The masters' API servers take this lock around each request (docs/testbed.md, "Several masters")."""
    return tb.host_info(host)["run"] + "/apiserver-cluster.lock"


def check_certificate_key(key):
    key = str(key)
    bad = next((c for c in key if c not in "0123456789abcdefABCDEF"), None)
    if bad is not None:
        raise Fail("error execution phase upload-certs: error uploading certs: error decoding certificate key: "
                   "encoding/hex: invalid byte: U+%04X %r" % (ord(bad), bad))
    if len(key) != 64:
        raise Fail("error execution phase upload-certs: error uploading certs: error decoding certificate key: "
                   "crypto/aes: invalid key size %d" % (len(key) // 2))


def _openssl_with_key(args, key, data):
    """openssl enc with the certificate key as its passphrase on a descriptor: never in argv."""
    rfd, wfd = os.pipe()
    try:
        os.write(wfd, key.encode() + b"\n")
        os.close(wfd)
        wfd = None
        r = subprocess.run(["openssl", "enc"] + args + ["-aes-256-ctr", "-pbkdf2", "-iter", "1", "-pass", "fd:%d" % rfd],
                           input=data, capture_output=True, pass_fds=(rfd,))
    finally:
        os.close(rfd)
        if wfd is not None:
            os.close(wfd)
    if r.returncode != 0:
        raise Fail("openssl enc: %s" % r.stderr.decode(errors="replace").strip())
    return r.stdout


def encrypt_cert(key, data):
    """AES-256 (CTR, the key by PBKDF2 from the certificate key) and an HMAC-SHA256 tag: kubeadm
    uses AES-GCM, which openssl's enc does not offer; a wrong key fails the same way."""
    import hmac
    ct = _openssl_with_key(["-e"], key, data)
    return ct + hmac.new(bytes.fromhex(key), ct, hashlib.sha256).digest()


def decrypt_cert(key, blob):
    import hmac
    ct, tag = blob[:-32], blob[-32:]
    if len(blob) < 48 or not hmac.compare_digest(hmac.new(bytes.fromhex(key), ct, hashlib.sha256).digest(), tag):
        raise Fail("error execution phase control-plane-prepare/download-certs: error downloading certs: "
                   "error decoding secret data with provided key: cipher: message authentication failed")
    return _openssl_with_key(["-d"], key, ct)


def upload_certs(key, skip_print):
    """kubeadm's upload-certs phase: the CAs and sa keys, encrypted with the certificate key, in the
    Secret kube-system/kubeadm-certs (created or replaced), for two hours."""
    pki = tb.hp("/etc/kubernetes/pki")
    data = {}
    for name, rel in UPLOADED:
        try:
            data[name] = b64(encrypt_cert(key, open(pki + "/" + rel, "rb").read()))
        except FileNotFoundError:
            raise Fail("error execution phase upload-certs: error uploading certs: failed to load %s: open "
                       "/etc/kubernetes/pki/%s: no such file or directory" % (name, rel))
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + CERTS_TTL))
    # As kubeadm: a bootstrap token of two hours without usages owns the Secret (its
    # expiry, or its deletion, takes the Secret with it through the garbage collector).
    proxy = token_secret(new_token(), CERTS_TTL, description=CERTS_TOKEN_DESCRIPTION, usages=(), groups=())
    proxy["data"].pop("auth-extra-groups", None)
    st, owner, _ = api("POST", "/api/v1/namespaces/kube-system/secrets", proxy)
    if st >= 300:
        raise Fail("error execution phase upload-certs: error uploading certs: failed to create the TTL token: %s" % owner.get("message"))
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
              "metadata": {"name": "kubeadm-certs", "namespace": "kube-system", "annotations": {EXPIRES: expires},
                           "ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": owner["metadata"]["name"],
                                                "uid": owner["metadata"]["uid"], "controller": True,
                                                "blockOwnerDeletion": True}]},
              "data": data}
    out("[upload-certs] Storing the certificates in Secret \"kubeadm-certs\" in the \"kube-system\" Namespace")
    st, body, _ = api("POST", "/api/v1/namespaces/kube-system/secrets", secret)
    if st == 409:
        st, body, _ = api("PUT", CERTS_SECRET, secret)
    if st >= 300:
        raise Fail("error execution phase upload-certs: error uploading certs: %s" % body.get("message"))
    out("[upload-certs] Using certificate key:")
    out("<value withheld>" if skip_print else key)


def init_phase(argv):
    """kubeadm init phase upload-certs --upload-certs [--config F | --certificate-key K]."""
    if not argv or argv[0] != "upload-certs":
        raise Fail("the testbed's kubeadm init phase does: upload-certs")
    opts, args = tb.parse_opts(argv[1:], VALUE_FLAGS)
    check_flags(opts, COMMON_FLAGS | {"upload-certs", "certificate-key", "skip-certificate-key-print"}, "init phase upload-certs")
    if "upload-certs" not in opts:
        out("[upload-certs] Skipping phase. Please see --upload-certs")
        return 0
    ic = {}
    if "config" in opts:
        ic = read_config(flag(opts, "config")).get("InitConfiguration", {})
    key = flag(opts, "certificate-key") or ic.get("certificateKey") or secrets.token_hex(32)
    check_certificate_key(key)
    if not os.path.exists(tb.hp("/etc/kubernetes/admin.conf")) or not os.path.exists(api_dir() + "/config.json"):
        raise Fail("error execution phase upload-certs: failed to load admin kubeconfig: open /etc/kubernetes/admin.conf: "
                   "no such file or directory")
    need_admin()
    upload_certs(key, "skip-certificate-key-print" in opts)
    return 0


def etcdctl(endpoints, args, host=None):
    """The machine's real etcdctl against the etcd cluster, with this host's etcd client certificate.
    Returns (exit code, stdout, stderr)."""
    pki = "/etc/kubernetes/pki"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETCD")}
    env["ETCDCTL_API"] = "3"
    cmd = ["etcdctl", "--endpoints", ",".join(endpoints), "--cacert", pki + "/etcd/ca.crt",
           "--cert", pki + "/etcd/healthcheck-client.crt", "--key", pki + "/etcd/healthcheck-client.key",
           "--dial-timeout", "3s", "--command-timeout", "10s"] + args
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return r.returncode, r.stdout, r.stderr


def member_list(endpoints):
    rc, o, e = etcdctl(endpoints, ["member", "list", "-w", "json"])
    if rc != 0:
        last = [l for l in e.strip().splitlines() if l.startswith("Error:")] or e.strip().splitlines()[-1:] or [""]
        raise Fail("etcd cluster is not reachable at %s: %s" % (",".join(endpoints), last[-1].replace("Error: ", "")))
    return json.loads(o).get("members", [])


def etcdctl_reconfigure(endpoints, args):
    """A member added or removed. etcd refuses a change while a peer's connection is less
    than 5 s old (a member just joined, a leader just elected after a loss: its strict
    reconfiguration check, "unhealthy cluster"); kubeadm tries again with a back-off, as
    here (30 s)."""
    deadline = time.time() + 30
    while True:
        rc, o, e = etcdctl(endpoints, args)
        if rc == 0 or "unhealthy cluster" not in e or time.time() > deadline:
            return rc, o, e
        time.sleep(0.25)


def join_etcd(node, addr, masters):
    """kubeadm's control-plane-join/etcd: adds this host as a member of the existing etcd cluster
    (the real etcdctl, `member add`, unless a member of this peer URL was added by an earlier run)
    and returns the initial cluster its manifest names."""
    peer = "https://%s:2380" % addr
    endpoints = ["https://%s:2379" % a for a in masters if a != addr]
    members = member_list(endpoints)
    if not any(peer in m.get("peerURLs", []) for m in members):
        out("[etcd] Announced new etcd member joining to the existing etcd cluster")
        rc, o, e = etcdctl_reconfigure(endpoints, ["member", "add", node, "--peer-urls=" + peer])
        if rc != 0:
            last = [l for l in e.strip().splitlines() if l.startswith("Error:")] or e.strip().splitlines()[-1:] or [""]
            raise Fail("error execution phase control-plane-join/etcd: error creating local etcd static pod manifest file: "
                       "%s" % last[-1].replace("Error: ", ""))
        members = member_list(endpoints)
    parts = []
    for m in members:
        name = m.get("name") or (node if peer in m.get("peerURLs", []) else "")
        if name:
            parts += ["%s=%s" % (name, u) for u in m.get("peerURLs", [])]
    return ",".join(sorted(parts))


def leave_etcd(node, addr):
    """kubeadm reset on a master of several: removes its own etcd member (found by its peer URL)
    through any member that answers; nothing when it is the only member."""
    _, doc = kubelet().load_manifest(tb.HOST, "etcd")
    if doc is None:
        return
    flags = tbetcd_flags(doc)
    peers = [p.split("=", 1)[1] for p in flags.get("initial-cluster", "").split(",") if "=" in p]
    own = flags.get("initial-advertise-peer-urls") or "https://%s:2380" % addr
    endpoints = ([flags["advertise-client-urls"]] if flags.get("advertise-client-urls") else []) + \
                [u.replace(":2380", ":2379") for u in peers if u != own]
    try:
        members = member_list(endpoints)
    except Fail as e:
        err("W0000 reset: [reset] Failed to remove etcd member: %s, please manually remove this etcd member using etcdctl" % e)
        return
    me = next((m for m in members if own in m.get("peerURLs", [])), None)
    if me is None or len(members) < 2:
        return
    mid = "%x" % int(me["ID"])
    others = [u for m in members if m is not me for u in m.get("clientURLs", [])] or endpoints
    rc, o, e = etcdctl_reconfigure(others, ["member", "remove", mid])
    if rc != 0:
        last = [l for l in e.strip().splitlines() if l.startswith("Error:")] or e.strip().splitlines()[-1:] or [""]
        err("W0000 reset: [reset] Failed to remove etcd member: %s, please manually remove this etcd member using etcdctl"
            % last[-1].replace("Error: ", ""))
        return
    out("[reset] Removed member %s (%s) from the etcd cluster" % (node, mid))


def tbetcd_flags(doc):
    args = doc["spec"]["containers"][0]["command"][1:]
    res = {}
    for a in args:
        if a.startswith("--"):
            k, _, v = a[2:].partition("=")
            res[k] = v
    return res


def join_control_plane(jc, opts, node, endpoint, ca, ctx, token, taints):
    """A control-plane join: the uploaded certificates (the key checked), this master's own
    certificates, kubeconfigs and static pod manifests, its etcd member added to the cluster,
    etcd and the API server started by the kubelet. Returns the API server's config."""
    cp = jc.get("controlPlane") or {}
    info = tb.host_info()
    lep = cp.get("localAPIEndpoint") or {}
    addr = flag(opts, "apiserver-advertise-address") or lep.get("advertiseAddress") or info["address"]
    port = int(flag(opts, "apiserver-bind-port") or lep.get("bindPort") or 6443)
    key = flag(opts, "certificate-key") or cp.get("certificateKey")
    out("[preflight] Running pre-flight checks before initializing the new control plane instance")
    for m in MANIFESTS:
        if os.path.exists(tb.hp("/etc/kubernetes/manifests/" + m)):
            raise Fail("[preflight] Some fatal errors occurred:\n\t[ERROR FileAvailable--etc-kubernetes-manifests-%s]: "
                       "/etc/kubernetes/manifests/%s already exists" % (m, m))
    d = tb.hp("/var/lib/etcd")
    if os.path.isdir(d) and os.listdir(d):
        raise Fail("[preflight] Some fatal errors occurred:\n\t[ERROR DirAvailable--var-lib-etcd]: /var/lib/etcd is not empty")
    if not key:
        raise Fail("error execution phase control-plane-prepare/certs: error creating PKI assets: failure loading "
                   "ca certificate: couldn't load the certificate file /etc/kubernetes/pki/ca.crt: open "
                   "/etc/kubernetes/pki/ca.crt: no such file or directory (no certificate key to download the "
                   "uploaded certificates with)")
    key = str(key)
    if not re.fullmatch(r"[0-9a-fA-F]{64}", key):
        raise Fail("error execution phase control-plane-prepare/download-certs: error downloading certs: "
                   "error decoding certificate key: encoding/hex: invalid certificate key (64 hex digits expected)")
    out("[download-certs] Downloading the certificates in Secret \"kubeadm-certs\" in the \"kube-system\" Namespace")
    code, sec, _ = api("GET", CERTS_SECRET, cfg={}, ctx=ctx, endpoint=endpoint, token=token)
    expires = ((sec.get("metadata") or {}).get("annotations") or {}).get(EXPIRES) if code == 200 else None
    if code == 200 and expires and time.mktime(time.strptime(expires, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone < time.time():
        code = 404  # deleted by now on a real cluster (its TTL token expired)
    if code != 200:
        raise Fail("error execution phase control-plane-prepare/download-certs: error downloading certs: error downloading "
                   "the secret: Secret \"kubeadm-certs\" was not found in the \"kube-system\" Namespace. This Secret might "
                   "have expired. Please, run `kubeadm init phase upload-certs --upload-certs` on a control plane to "
                   "generate a new one")
    files = {}
    for name, rel in UPLOADED:
        if name not in (sec.get("data") or {}):
            raise Fail("error execution phase control-plane-prepare/download-certs: error downloading certs: "
                       "the Secret does not include the required certificate or key - name: %s" % name)
        files[rel] = decrypt_cert(key, base64.b64decode(sec["data"][name]))
    code, kc, _ = api("GET", "/api/v1/namespaces/kube-system/configmaps/kubeadm-config", cfg={}, ctx=ctx,
                      endpoint=endpoint, token=token)
    if code != 200:
        raise Fail("unable to fetch the kubeadm-config ConfigMap: %s" % kc.get("message"))
    cc = yaml.load(kc["data"]["ClusterConfiguration"], Loader=SAFE_LOADER)
    kver = cc.get("kubernetesVersion") or "v" + version()
    net = cc.get("networking") or {}
    svc_cidr, pod_cidr = net.get("serviceSubnet", "10.96.0.0/12"), net.get("podSubnet", "")
    cpe = cc.get("controlPlaneEndpoint") or endpoint
    cert_sans = [str(x) for x in (cc.get("apiServer") or {}).get("certSANs") or []]
    code, nodes, _ = api("GET", "/api/v1/nodes?labelSelector=node-role.kubernetes.io/control-plane", cfg={}, ctx=ctx,
                         endpoint=endpoint, token=token)
    masters = [a["address"] for n in (nodes.get("items") or []) for a in n.get("status", {}).get("addresses", [])
               if a.get("type") == "InternalIP"]
    if not masters:
        raise Fail("error execution phase control-plane-join/etcd: no control-plane node to join the etcd cluster of")
    st = state()
    st["join_in_progress"] = True
    save_state(st)
    out("[certs] Using certificateDir folder \"/etc/kubernetes/pki\"")
    pki = tb.hp("/etc/kubernetes/pki")
    os.makedirs(pki + "/etcd", exist_ok=True)
    for rel, data in files.items():
        mode = 0o600 if rel.endswith(".key") else 0o644
        fd = os.open(pki + "/" + rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(pki + "/" + rel, mode)
    host = cpe.rsplit(":", 1)[0]
    sans = ["IP:" + addr, "IP:10.96.0.1", "DNS:kubernetes", "DNS:kubernetes.default", "DNS:kubernetes.default.svc",
            "DNS:kubernetes.default.svc.cluster.local", "DNS:" + node, san_of(host)] + [san_of(x) for x in cert_sans]
    make_cert(pki, "apiserver", "ca", "/CN=kube-apiserver", "subjectAltName=%s\n" % ",".join(dict.fromkeys(sans)) + SERVER_EXT)
    make_cert(pki, "apiserver-kubelet-client", "ca", "/O=kubeadm:cluster-admins/CN=kube-apiserver-kubelet-client", CLIENT_EXT)
    make_cert(pki, "front-proxy-client", "front-proxy-ca", "/CN=front-proxy-client", CLIENT_EXT)
    etcd_pki(pki, node, addr, with_ca=False)
    make_cert(pki, "admin", "ca", "/O=kubeadm:cluster-admins/CN=kubernetes-admin", CLIENT_EXT)
    make_cert(pki, "controller-manager", "ca", "/CN=system:kube-controller-manager", CLIENT_EXT)
    make_cert(pki, "scheduler", "ca", "/CN=system:kube-scheduler", CLIENT_EXT)
    confs = {}
    for c, (user, f) in {"admin.conf": ("kubernetes-admin", "admin"),
                         "controller-manager.conf": ("system:kube-controller-manager", "controller-manager"),
                         "scheduler.conf": ("system:kube-scheduler", "scheduler")}.items():
        confs[c] = (user, open(pki + "/" + f + ".crt").read(), open(pki + "/" + f + ".key").read())
        os.unlink(pki + "/" + f + ".crt")
        os.unlink(pki + "/" + f + ".key")
    for c, (user, crt, k) in confs.items():
        tb.write_file("/etc/kubernetes/" + c, kubeconfig("https://" + cpe, ca, user, crt, k), 0o600)
    out("[kubeconfig] Writing \"admin.conf\", \"controller-manager.conf\" and \"scheduler.conf\" kubeconfig files")
    tb.knob("kubeadm", "join-control-plane")
    out("[control-plane] Creating static Pod manifests in \"/etc/kubernetes/manifests\"")
    os.makedirs(tb.hp("/etc/kubernetes/manifests"), exist_ok=True)
    tb.write_file("/etc/kubernetes/manifests/kube-apiserver.yaml", apiserver_manifest(addr, port, svc_cidr, kver), 0o600)
    for comp in ("kube-controller-manager", "kube-scheduler"):
        tb.write_file("/etc/kubernetes/manifests/%s.yaml" % comp, yaml.safe_dump({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": comp, "namespace": "kube-system", "labels": {"component": comp, "tier": "control-plane"}},
            "spec": {"hostNetwork": True, "containers": [{"name": comp, "image": "registry.k8s.io/%s:%s" % (comp, kver),
                                                           "command": [comp, "--advertise-address=%s" % addr,
                                                                       "--service-cluster-ip-range=%s" % svc_cidr]
                                                           + (["--cluster-cidr=%s" % pod_cidr] if pod_cidr and comp == "kube-controller-manager" else [])}]}},
            sort_keys=False), 0o600)
    initial = join_etcd(node, addr, masters)
    tb.write_file("/etc/kubernetes/manifests/etcd.yaml", etcd_manifest(node, addr, initial), 0o600)
    out("[etcd] Creating static Pod manifest for \"etcd\"")
    d = api_dir()
    os.makedirs(d, exist_ok=True)
    with open(d + "/admin-token", "w") as f:
        f.write(secrets.token_hex(24) + "\n")
    os.chmod(d + "/admin-token", 0o600)
    cfg = {"address": addr, "port": port, "endpoint": cpe, "ca": pki + "/ca.crt", "ca_key": pki + "/ca.key",
           "cert": pki + "/apiserver.crt", "key": pki + "/apiserver.key", "service_cidr": svc_cidr,
           "pod_cidr": pod_cidr, "version": kver, "run": info["run"], "master_host": tb.HOST,
           "rollout_delay": float(os.environ.get("TESTBED_ROLLOUT_DELAY", info.get("rollout_delay", 0.5))),
           "cluster_lock": cluster_lock_path()}
    with open(d + "/config.json", "w") as f:
        json.dump(cfg, f, indent=1)
    return cfg


# ----------------------------------------------------------------------------- join


def join(argv):
    opts, args = tb.parse_opts(argv, VALUE_FLAGS)
    check_flags(opts, JOIN_FLAGS, "join")
    docs = {}
    if "config" in opts:
        mixed = set(opts) - {"config", "ignore-preflight-errors", "dry-run", "skip-phases", "v"}
        if mixed or args:
            raise Fail("can not mix '--config' with arguments [%s]" % " ".join(sorted(mixed | {"api-server-endpoint"} if args else mixed)))
        docs = read_config(flag(opts, "config"))
        jc = docs.get("JoinConfiguration")
        if jc is None:
            raise Fail("no JoinConfiguration found in %s" % flag(opts, "config"))
    jc = docs.get("JoinConfiguration", {})
    control_plane = "control-plane" in opts or jc.get("controlPlane") is not None
    bt = jc.get("discovery", {}).get("bootstrapToken", {})
    endpoint = args[0] if args else bt.get("apiServerEndpoint")
    token = flag(opts, "token") or flag(opts, "discovery-token") or bt.get("token") or jc.get("discovery", {}).get("tlsBootstrapToken")
    hashes = opts.get("discovery-token-ca-cert-hash", []) or bt.get("caCertHashes", [])
    unsafe = "discovery-token-unsafe-skip-ca-verification" in opts or bt.get("unsafeSkipCAVerification", False)
    info = tb.host_info()
    node = flag(opts, "node-name") or jc.get("nodeRegistration", {}).get("name") or info["name"]
    taints = jc.get("nodeRegistration", {}).get("taints")
    if taints is None:
        taints = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}] if control_plane else []
    if not endpoint:
        raise Fail("discovery.bootstrapToken.apiServerEndpoint: Invalid value: \"\": the API server endpoint is required")
    if not token or not TOKEN_RE.match(str(token)):
        raise Fail("discovery.bootstrapToken.token: Invalid value: \"\": the bootstrap token is invalid")
    if not hashes and not unsafe:
        raise Fail("discovery.bootstrapToken: Invalid value: \"\": using token-based discovery without caCertHashes can be unsafe. "
                   "Set unsafeSkipCAVerification as true in your kubeadm config file or pass --discovery-token-unsafe-skip-ca-verification flag to continue")
    if "dry-run" in opts:
        out("[dryrun] Would join %s as node %s" % (endpoint, node))
        return 0
    preflight(opts, "join")
    st = state()
    st["join_in_progress"] = True
    save_state(st)
    tb.knob("kubeadm", "join")
    out("[preflight] Reading configuration from the cluster...")
    insecure = ssl._create_unverified_context()
    try:
        code, ci, _ = api("GET", "/api/v1/namespaces/kube-public/configmaps/cluster-info", cfg={}, ctx=insecure, endpoint=endpoint)
    except (OSError, urllib.error.URLError) as e:
        raise Fail("couldn't validate the identity of the API Server: Get \"https://%s/api/v1/namespaces/kube-public/configmaps/cluster-info?timeout=10s\": %s" % (endpoint, e))
    if code != 200:
        raise Fail("couldn't validate the identity of the API Server: cluster-info: %s" % ci.get("message"))
    ca = base64.b64decode(yaml.load(ci["data"]["kubeconfig"], Loader=SAFE_LOADER)["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
    if not unsafe:
        got = spki_hash(ca)
        if got not in hashes:
            raise Fail("couldn't validate the identity of the API Server: cluster CA found in cluster-info ConfigMap is invalid: "
                       "none of the public keys \"%s\" are pinned" % got)
    cafile = tb.HOST + "/state/join-ca.crt"
    with open(cafile, "w") as f:
        f.write(ca)
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.check_hostname = False
    labels = base_labels(node)
    if control_plane:
        join_control_plane(jc, opts, node, endpoint, ca, ctx, token, taints)
        out("[wait-control-plane] Waiting for the kubelet to boot up the control plane as static Pods from directory \"/etc/kubernetes/manifests\"")
        start_control_plane()
        labels["node-role.kubernetes.io/control-plane"] = ""
        labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
    code, body, headers = api("POST", "/api/v1/nodes", node_object(node, info["address"], labels, taints, tb.HOST),
                              cfg={}, ctx=ctx, endpoint=endpoint, token=token, headers={"X-Testbed-Host": tb.HOST})
    if code == 401:
        raise Fail("couldn't validate the identity of the API Server: could not find a JWS signature in the cluster-info ConfigMap for token ID \"%s\"" % token[:6])
    if code == 409:
        raise Fail("a Node with name \"%s\" and status \"Ready\" already exists in the cluster. You must delete the existing Node or change the name of this new joining Node" % node)
    if code >= 300:
        raise Fail("unable to register node %s: %s" % (node, body.get("message")))
    server = "https://" + endpoint
    node_token = headers.get("X-Testbed-Node-Token", "")
    os.makedirs(tb.hp("/etc/kubernetes/pki"), exist_ok=True)
    tb.write_file("/etc/kubernetes/pki/ca.crt", ca, 0o644)
    tb.write_file("/etc/kubernetes/kubelet.conf", kubeconfig(server, ca, "system:node:" + node, token=node_token), 0o600)
    write_kubelet_client(node)
    tb.write_file("/var/lib/kubelet/config.yaml", kubelet_config("systemd"), 0o644)
    tb.write_file("/var/lib/kubelet/kubeadm-flags.env",
                  'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock"\n', 0o644)
    os.makedirs(tb.hp("/etc/kubernetes/manifests"), exist_ok=True)
    out("[kubelet-start] Starting the kubelet")
    start_kubelet("systemd")
    st = state()
    st["join"] = st.get("join", 0) + 1
    st["join_in_progress"] = False
    save_state(st)
    if control_plane:
        out("[mark-control-plane] Marking the node %s as control-plane" % node)
        out("\nThis node has joined the cluster and a new control plane instance was created:\n\n"
            "* Certificate signing request was sent to apiserver and approval was received.\n"
            "* The Kubelet was informed of the new secure connection details.\n"
            "* Control plane label and taint were applied to the new node.\n"
            "* The Kubernetes control plane instances scaled up.\n"
            "* A new etcd member was added to the local/stacked etcd cluster.\n\n"
            "To start administering your cluster from this node, you need to run the following as a regular user:\n\n"
            "\tmkdir -p $HOME/.kube\n\tsudo cp -i /etc/kubernetes/admin.conf $HOME/.kube/config\n"
            "\tsudo chown $(id -u):$(id -g) $HOME/.kube/config\n\n"
            "Run 'kubectl get nodes' to see this node join the cluster.")
        return 0
    out("\nThis node has joined the cluster:\n* Certificate signing request was sent to apiserver and a response was received.\n"
        "* The Kubelet was informed of the new secure connection details.\n\n"
        "Run 'kubectl get nodes' on the control-plane to see this node join the cluster.")
    return 0


# ----------------------------------------------------------------------------- certs

RENEW_WORDS = {
    "admin.conf": "certificate embedded in the kubeconfig file for the admin to use and for kubeadm itself",
    "super-admin.conf": "certificate embedded in the kubeconfig file for the super-admin",
    "apiserver": "certificate for serving the Kubernetes API",
    "apiserver-etcd-client": "certificate the apiserver uses to access etcd",
    "apiserver-kubelet-client": "certificate for the API server to connect to kubelet",
    "controller-manager.conf": "certificate embedded in the kubeconfig file for the controller manager to use",
    "etcd-healthcheck-client": "certificate for liveness probes to healthcheck etcd",
    "etcd-peer": "certificate for etcd nodes to communicate with each other",
    "etcd-server": "certificate for serving etcd",
    "front-proxy-client": "certificate for the front proxy client",
    "scheduler.conf": "certificate embedded in the kubeconfig file for the scheduler manager to use",
}


def residual(t):
    d = t - time.time()
    if d <= 0:
        return "<invalid>"
    days = int(d // 86400)
    return "%dy" % (days // 365) if days >= 365 else ("%dd" % days if days > 0 else "%dh" % int(d // 3600))


def when(t):
    return time.strftime("%b %d, %Y %H:%M UTC", time.gmtime(t))


def certs_cmd(argv):
    if not argv or argv[0] not in ("check-expiration", "renew"):
        raise Fail("the testbed's kubeadm certs does %s: check-expiration, renew" % ("not implement \"%s\"" % argv[0] if argv else "nothing alone"))
    opts, args = tb.parse_opts(argv[1:], VALUE_FLAGS)
    pki = tb.hp("/etc/kubernetes/pki")
    if not os.path.exists(pki + "/ca.crt"):
        raise Fail("couldn't load the certificate authority: open /etc/kubernetes/pki/ca.crt: no such file or directory")
    leaves = leaf_files()
    confs = [c for c in CONF_LEAVES if os.path.exists(tb.hp("/etc/kubernetes/" + c))]
    cas = {v: k for k, v in ((n, cert_fields(open(pki + "/" + n + ".crt").read())["subject"])
                             for n in CA_NAMES if os.path.exists(pki + "/" + n + ".crt"))}
    if argv[0] == "check-expiration":
        out("[check-expiration] Reading configuration from the cluster...")
        out("[check-expiration] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'\n")
        rows = []
        for c in confs:
            user = yaml.load(open(tb.hp("/etc/kubernetes/" + c)).read(), Loader=SAFE_LOADER)["users"][0]["user"]
            if "client-certificate-data" in user:
                rows.append((c, cert_fields(base64.b64decode(user["client-certificate-data"]).decode())))
        for name, rel in leaves.items():
            rows.append((name, cert_fields(open(pki + "/" + rel + ".crt").read())))
        out("%-25s%-25s%-16s%-24s%s" % ("CERTIFICATE", "EXPIRES", "RESIDUAL TIME", "CERTIFICATE AUTHORITY", "EXTERNALLY MANAGED"))
        for name, f in sorted(rows):
            out("%-25s%-25s%-16s%-24s%s" % (name, when(f["not_after"]), residual(f["not_after"]), cas.get(f["issuer"], "").replace("/", "-"), "no"))
        out("\n%-24s%-25s%-16s%s" % ("CERTIFICATE AUTHORITY", "EXPIRES", "RESIDUAL TIME", "EXTERNALLY MANAGED"))
        for n in CA_NAMES:
            if os.path.exists(pki + "/" + n + ".crt"):
                f = cert_fields(open(pki + "/" + n + ".crt").read())
                out("%-24s%-25s%-16s%s" % (n.replace("/", "-"), when(f["not_after"]), residual(f["not_after"]), "no"))
        return 0
    # renew all|NAME...
    known = sorted(set(leaves) | set(confs))
    if not args:
        raise Fail("missing subcommand; \"renew\" is not meant to be run on its own\nAvailable: all " + " ".join(known))
    want = known if args == ["all"] else args
    for n in want:
        if n not in known:
            raise Fail("unknown command \"%s\" for \"kubeadm certs renew\"" % n)
    st = state()
    st["certs_renew_in_progress"] = True
    save_state(st)
    now = int(time.time())
    out("[renew] Reading configuration from the cluster...")
    out("[renew] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'\n")
    for n in [x for x in want if x in leaves]:
        renew_pki_leaf(leaves[n], now - 60, now + 365 * 86400)
        out("%s renewed" % RENEW_WORDS.get(n, "certificate " + n))
    tb.knob("kubeadm", "certs-renew")
    for n in [x for x in want if x in confs]:
        renew_conf(n, now - 60, now + 365 * 86400)
        out("%s renewed" % RENEW_WORDS.get(n, "certificate embedded in " + n))
    st = state()
    st["certsRenew"] = st.get("certsRenew", 0) + 1
    st["certs_renew_in_progress"] = False
    save_state(st)
    out("\nDone renewing certificates. You must restart the kube-apiserver, kube-controller-manager, kube-scheduler and etcd, "
        "so that they can use the new certificates.")
    return 0


# ----------------------------------------------------------------------------- reset, token, version


def rm(path):
    real = tb.hp(path)
    if os.path.isdir(real) and not os.path.islink(real):
        for n in os.listdir(real):
            rm(path + "/" + n)
        if path not in ("/etc/kubernetes/manifests", "/var/lib/kubelet", "/var/lib/etcd"):
            os.rmdir(real)
    elif os.path.lexists(real):
        os.unlink(real)


def reset(argv):
    opts, args = tb.parse_opts(argv, VALUE_FLAGS)
    check_flags(opts, RESET_FLAGS, "reset")
    if "f" not in opts and "force" not in opts:
        sys.stdout.write("W0000 reset.go: [reset] WARNING: Changes made to this host by 'kubeadm init' or 'kubeadm join' will be reverted.\n"
                         "[reset] Are you sure you want to proceed? [y/N]: ")
        sys.stdout.flush()
        if tb.read_stdin_line().strip().lower() not in ("y", "yes"):
            raise Fail("aborted reset operation")
    tb.knob("kubeadm", "reset")
    out("[preflight] Running pre-flight checks")
    sd = tb.load("systemd")
    if "kubelet" in sd:
        sd["kubelet"]["state"] = "inactive"
        tb.save("systemd", sd)
    out("[reset] Stopping the kubelet service")
    if several_masters():  # one master: its etcd is the cluster's only member
        leave_etcd(tb.host_info()["name"], tb.host_info()["address"])
    # The etcd data directory is the one the etcd manifest's etcd-data volume names.
    _, doc = kubelet().load_manifest(tb.HOST, "etcd")
    data = "/var/lib/etcd"
    for v in (doc or {}).get("spec", {}).get("volumes") or []:
        if v.get("name") == "etcd-data" and (v.get("hostPath") or {}).get("path"):
            data = v["hostPath"]["path"].rstrip("/") or data
    stop_apiserver()
    for d in (api_dir(), tb.HOST + "/state/static-pods"):
        if os.path.isdir(d):
            for n in os.listdir(d):
                os.unlink(d + "/" + n)
            os.rmdir(d)
    if doc is not None or (os.path.isdir(tb.hp(data)) and os.listdir(tb.hp(data))):
        rm(data)
        out("[reset] Deleted contents of the etcd data directory: %s" % data)
    else:
        out("[reset] No etcd config found. Assuming external etcd")
    for p in ("/etc/kubernetes/manifests", "/var/lib/kubelet", "/etc/kubernetes/pki", "/var/lib/etcd", "/etc/kubernetes/tmp"):
        rm(p)
    out("[reset] Deleting contents of directories: [/etc/kubernetes/manifests /var/lib/kubelet /etc/kubernetes/pki]")
    for c in CONFS + ["bootstrap-kubelet.conf"]:
        rm("/etc/kubernetes/" + c)
    out("[reset] Deleting files: [/etc/kubernetes/admin.conf /etc/kubernetes/super-admin.conf /etc/kubernetes/kubelet.conf "
        "/etc/kubernetes/bootstrap-kubelet.conf /etc/kubernetes/controller-manager.conf /etc/kubernetes/scheduler.conf]")
    try:
        os.unlink(tb.HOST + "/state/join-ca.crt")
    except FileNotFoundError:
        pass
    st = state()
    st["init_in_progress"] = False
    st["join_in_progress"] = False
    save_state(st)
    out("\nThe reset process does not clean CNI configuration. To do so, you must remove /etc/cni/net.d\n"
        "The reset process does not reset or clean up iptables rules or IPVS tables.\n"
        "The reset process does not clean your kubeconfig files and you must remove them manually.")
    return 0


def need_admin():
    if not os.path.exists(tb.hp("/etc/kubernetes/admin.conf")) or not os.path.exists(api_dir() + "/config.json"):
        raise Fail('failed to load admin kubeconfig: open /etc/kubernetes/admin.conf: no such file or directory')
    sd = tb.load("systemd")
    with tb.Lock():
        ensure_apiserver(sd)
    if not apiserver_alive():
        cfg = json.load(open(api_dir() + "/config.json"))
        raise Fail('Get "https://%s/api/v1/namespaces/kube-system/secrets": dial tcp %s: connect: connection refused' % (cfg["endpoint"], cfg["endpoint"]))


def tokens_list():
    st, body, _ = api("GET", "/api/v1/namespaces/kube-system/secrets")
    res = []
    for s in body.get("items", []):
        if s.get("type") != "bootstrap.kubernetes.io/token":
            continue
        d = {k: base64.b64decode(v).decode() for k, v in s.get("data", {}).items()}
        res.append(d)
    return res


def token(argv):
    opts, args = tb.parse_opts(argv, VALUE_FLAGS)
    if not args:
        raise Fail("missing subcommand; \"token\" is not meant to be run on its own")
    sub, rest = args[0], args[1:]
    if sub == "generate":
        out(new_token())
        return 0
    need_admin()
    if sub == "create":
        tb.knob("kubeadm", "token-create")
        t = rest[0] if rest else new_token()
        if not TOKEN_RE.match(t):
            raise Fail("the bootstrap token \"%s\" was not of the form \"[a-z0-9]{6}.[a-z0-9]{16}\"" % t)
        ttl = go_duration(flag(opts, "ttl", "24h0m0s"))
        usages = tuple(flag(opts, "usages", "signing,authentication").split(","))
        create_token(t, ttl, description=flag(opts, "description", ""), usages=usages)
        if "print-join-command" in opts:
            out(join_command(t, json.load(open(api_dir() + "/config.json"))).replace(" \\\n\t", " "))
        else:
            out(t)
        return 0
    if sub == "delete":
        tb.knob("kubeadm", "token-delete")
        if not rest:
            raise Fail("missing argument; 'token delete' is missing token of form \"[a-z0-9]{6}\" or \"[a-z0-9]{6}\\.[a-z0-9]{16}\"")
        for t in rest:
            tid = t.split(".")[0]
            if not re.match(r"^[a-z0-9]{6}$", tid):
                raise Fail("given token didn't match pattern \"[a-z0-9]{6}\" or \"[a-z0-9]{6}\\.[a-z0-9]{16}\"")
            st, body, _ = api("DELETE", "/api/v1/namespaces/kube-system/secrets/bootstrap-token-" + tid)
            if st == 404:
                raise Fail("failed to delete bootstrap token with name \"bootstrap-token-%s\": secrets \"bootstrap-token-%s\" not found" % (tid, tid))
            out("bootstrap token \"%s\" deleted" % tid)
        return 0
    if sub == "list":
        ts = tokens_list()
        if flag(opts, "o") == "json" or flag(opts, "output") == "json":
            for d in ts:
                out(json.dumps({"kind": "BootstrapToken", "apiVersion": "output.kubeadm.k8s.io/v1alpha3",
                                "token": d["token-id"] + "." + d["token-secret"], "description": d.get("description", ""),
                                "expires": d.get("expiration", ""),
                                "usages": sorted(k[len("usage-bootstrap-"):] for k in d if k.startswith("usage-bootstrap-")),
                                "groups": d.get("auth-extra-groups", "").split(",")}, indent=4))
            return 0
        out("TOKEN                     TTL         EXPIRES                USAGES                   DESCRIPTION   EXTRA GROUPS")
        for d in ts:
            exp = d.get("expiration", "")
            ttl = "<forever>"
            if exp:
                left = time.mktime(time.strptime(exp, "%Y-%m-%dT%H:%M:%SZ")) - time.mktime(time.gmtime())
                ttl = "%dh" % (left // 3600) if left >= 3600 else "%dm" % max(left // 60, 0)
            usages = ",".join(sorted(k[len("usage-bootstrap-"):] for k in d if k.startswith("usage-bootstrap-"))) or "<none>"
            out("%s   %-10s  %-21s  %-23s  %-12s  %s" % (d["token-id"] + "." + d["token-secret"], ttl, exp or "<never>", usages,
                                                     d.get("description", "<none>") or "<none>", d.get("auth-extra-groups") or "<none>"))
        return 0
    raise Fail("unknown command \"%s\" for \"kubeadm token\"" % sub)


def version_cmd(argv):
    opts, _ = tb.parse_opts(argv, VALUE_FLAGS)
    v = "v" + version()
    o = flag(opts, "o") or flag(opts, "output")
    major, minor = v[1:].split(".")[:2]
    info = {"major": major, "minor": minor, "gitVersion": v, "gitCommit": "testbed", "gitTreeState": "clean",
            "buildDate": "2024-01-01T00:00:00Z", "goVersion": "go1.22.0", "compiler": "gc", "platform": "linux/amd64"}
    if o == "short":
        out(v)
    elif o == "json":
        out(json.dumps({"clientVersion": info}, indent=2))
    elif o == "yaml":
        out(yaml.safe_dump({"clientVersion": info}))
    else:
        out('kubeadm version: &version.Info{Major:"%s", Minor:"%s", GitVersion:"%s", GitCommit:"testbed", GitTreeState:"clean", '
            'BuildDate:"2024-01-01T00:00:00Z", GoVersion:"go1.22.0", Compiler:"gc", Platform:"linux/amd64"}' % (major, minor, v))
    return 0


def config_cmd(argv):
    _, args = tb.parse_opts(argv, VALUE_FLAGS)
    api_v = "kubeadm.k8s.io/v1beta4" if vtuple(version()) >= (1, 31) else "kubeadm.k8s.io/v1beta3"
    if args[:2] == ["print", "init-defaults"]:
        out(yaml.safe_dump({"apiVersion": api_v, "kind": "InitConfiguration",
                            "localAPIEndpoint": {"advertiseAddress": "1.2.3.4", "bindPort": 6443},
                            "nodeRegistration": {"criSocket": "unix:///var/run/containerd/containerd.sock", "name": "node"}}, sort_keys=False)
            + "---\n" + yaml.safe_dump({"apiVersion": api_v, "kind": "ClusterConfiguration", "kubernetesVersion": "v" + version(),
                                        "networking": {"dnsDomain": "cluster.local", "serviceSubnet": "10.96.0.0/12"}}, sort_keys=False))
        return 0
    if args[:2] == ["print", "join-defaults"]:
        out(yaml.safe_dump({"apiVersion": api_v, "kind": "JoinConfiguration",
                            "discovery": {"bootstrapToken": {"apiServerEndpoint": "kube-apiserver:6443", "token": "abcdef.0123456789abcdef",
                                                             "unsafeSkipCAVerification": True}},
                            "nodeRegistration": {"criSocket": "unix:///var/run/containerd/containerd.sock", "name": "node"}}, sort_keys=False))
        return 0
    if args[:2] == ["images", "list"]:
        for i in control_plane_images():
            out(i)
        return 0
    raise Fail("the testbed's kubeadm config answers: print init-defaults|join-defaults, images list")


VALUE_FLAGS = ("config", "apiserver-advertise-address", "apiserver-bind-port", "control-plane-endpoint", "pod-network-cidr",
               "service-cidr", "kubernetes-version", "node-name", "ignore-preflight-errors", "token", "token-ttl", "cri-socket",
               "discovery-token-ca-cert-hash", "discovery-token", "discovery-file", "tls-bootstrap-token", "ttl", "description",
               "usages", "groups", "o", "output", "kubeconfig", "skip-phases", "v", "certificate-key", "service-dns-domain",
               "image-repository", "cert-dir", "apiserver-cert-extra-sans", "feature-gates", "patches", "cleanup-tmp-dir")
COMMON_FLAGS = {"v", "kubeconfig", "rootfs", "dry-run", "ignore-preflight-errors", "config", "cri-socket", "skip-phases", "h", "help"}
INIT_FLAGS = COMMON_FLAGS | {"apiserver-advertise-address", "apiserver-bind-port", "control-plane-endpoint", "pod-network-cidr",
                             "service-cidr", "kubernetes-version", "node-name", "token", "token-ttl", "upload-certs",
                             "skip-token-print", "skip-certificate-key-print", "certificate-key", "service-dns-domain",
                             "image-repository", "cert-dir", "apiserver-cert-extra-sans", "feature-gates", "patches"}
JOIN_FLAGS = COMMON_FLAGS | {"token", "discovery-token", "discovery-token-ca-cert-hash", "discovery-token-unsafe-skip-ca-verification",
                             "discovery-file", "tls-bootstrap-token", "node-name", "control-plane", "certificate-key",
                             "apiserver-advertise-address", "apiserver-bind-port", "patches"}
RESET_FLAGS = COMMON_FLAGS | {"f", "force", "cert-dir", "cleanup-tmp-dir"}


def check_flags(opts, allowed, cmd):
    for k in opts:
        if k not in allowed:
            raise Fail("unknown flag: --%s\nTo see the stack trace of this error execute with --v=5 or higher" % k
                       if len(k) > 1 else "unknown shorthand flag: '%s' in -%s" % (k, k))


# ----------------------------------------------------------------------------- upgrade plan|apply|node

COREDNS = {(1, 28): "v1.10.1", (1, 29): "v1.11.1", (1, 30): "v1.11.1", (1, 31): "v1.11.3", (1, 32): "v1.11.3", (1, 33): "v1.12.0"}
UPGRADE_FLAGS = COMMON_FLAGS | {"y", "yes", "f", "force", "certificate-renewal", "etcd-upgrade", "allow-experimental-upgrades",
                                "allow-release-candidate-upgrades", "print-config", "o", "output", "skip-phases", "patches"}


def vtriple(v):
    m = re.match(r"^v?(\d+)\.(\d+)\.(\d+)$", v or "")
    return tuple(int(x) for x in m.groups()) if m else None


def upgrade_cluster_version(endpoint=None):
    """The control plane's version as kubeadm reads it: the API server's /version."""
    try:
        if endpoint:
            code, v, _ = api("GET", "/version", cfg={}, ctx=ssl._create_unverified_context(), endpoint=endpoint, token="")
        else:
            code, v, _ = api("GET", "/version")
    except (OSError, urllib.error.URLError) as e:
        raise Fail("[upgrade/config] FATAL: failed to get the API server's version: %s" % e)
    if code != 200:
        raise Fail("[upgrade/config] FATAL: failed to get the API server's version: %s" % v.get("message"))
    return v["gitVersion"]


def upgrade_need_master():
    if not os.path.exists(tb.hp("/etc/kubernetes/admin.conf")) or not os.path.exists(api_dir() + "/config.json"):
        raise Fail("[upgrade/config] FATAL: this is not a control-plane node: /etc/kubernetes/admin.conf does not exist "
                   "(run 'kubeadm upgrade node' on workers)")


def upgrade_nodes():
    code, body, _ = api("GET", "/api/v1/nodes")
    return body.get("items", []) if code == 200 else []


def upgrade_plan(argv):
    opts, args = tb.parse_opts(argv, VALUE_FLAGS)
    check_flags(opts, UPGRADE_FLAGS, "upgrade plan")
    upgrade_need_master()
    out("[preflight] Running pre-flight checks.")
    out("[upgrade/config] Reading configuration from the \"kubeadm-config\" ConfigMap in namespace \"kube-system\"...")
    out("[upgrade] Running cluster health checks")
    cur = upgrade_cluster_version()
    kv = "v" + version()
    target = args[0] if args else kv
    if not target.startswith("v"):
        target = "v" + target
    out("[upgrade] Fetching available versions to upgrade to")
    out("[upgrade/versions] Cluster version: %s" % cur)
    out("[upgrade/versions] kubeadm version: %s" % kv)
    out("[upgrade/versions] Target version: %s" % target)
    out("[upgrade/versions] Latest version in the v%d.%d series: %s" % (vtuple(cur) + (cur,)))
    if vtriple(target) and vtriple(cur) and vtriple(target) <= vtriple(cur):
        out("\nAwesome, you're up-to-date! Enjoy!")
        return 0
    out("\nComponents that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':")
    out("COMPONENT   NODE%s CURRENT    TARGET" % (" " * 10))
    for n in upgrade_nodes():
        out("kubelet     %-14s%-11s%s" % (n["metadata"]["name"], n.get("status", {}).get("nodeInfo", {}).get("kubeletVersion", ""), target))
    out("\nUpgrade to the latest version in the v%d.%d series:\n" % vtuple(target))
    out("COMPONENT                 NODE          CURRENT    TARGET")
    master = tb.host_info()["name"]
    for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
        out("%-26s%-14s%-11s%s" % (c, master, cur, target))
    out("%-26s%-14s%-11s%s" % ("kube-proxy", "", cur[1:], target))
    out("%-26s%-14s%-11s%s" % ("CoreDNS", "", COREDNS.get(vtuple(cur), "v1.11.1"), COREDNS.get(vtuple(target), "v1.11.3")))
    out("\nYou can now apply the upgrade by executing the following command:\n\n\tkubeadm upgrade apply %s\n" % target)
    if vtuple(target) > vtuple(kv):
        out("Note: Before you can perform this upgrade, you have to update kubeadm to %s.\n" % target)
    out("_____________________________________________________________________")
    return 0


def upgrade_rules(cur, target, kv):
    """kubeadm's version rules for `upgrade apply` (cmd/kubeadm/app/phases/upgrade/policy.go)."""
    c, t, k = vtriple(cur), vtriple(target), vtriple(kv)
    if t is None:
        raise Fail("[upgrade/version] FATAL: unable to parse version \"%s\"" % target)
    if t[:2] > k[:2] or (t[:2] == k[:2] and t > k):
        raise Fail("[upgrade/version] FATAL: the --version argument is invalid due to these fatal errors:\n\n"
                   "\t- Specified version to upgrade to \"%s\" is higher than the kubeadm version \"%s\". "
                   "Upgrade kubeadm first using the tool you used to install kubeadm" % (target, kv))
    if t[:2] < c[:2] or (t[:2] == c[:2] and t[2] < c[2]):
        raise Fail("[upgrade/version] FATAL: the --version argument is invalid due to these fatal errors:\n\n"
                   "\t- Specified version to upgrade to \"%s\" is equal to or lower than the cluster version \"%s\". "
                   "Downgrades are not supported yet" % (target, cur))
    if t[1] > c[1] + 1:
        raise Fail("[upgrade/version] FATAL: the --version argument is invalid due to these fatal errors:\n\n"
                   "\t- Specified version to upgrade to \"%s\" is too high; kubeadm can upgrade only 1 minor version at a time" % target)


def upgrade_apply(argv):
    opts, args = tb.parse_opts(argv, VALUE_FLAGS)
    check_flags(opts, UPGRADE_FLAGS, "upgrade apply")
    upgrade_need_master()
    if not args:
        raise Fail("[upgrade/version] FATAL: missing one or more required arguments. Required arguments: [version]")
    target = args[0] if args[0].startswith("v") else "v" + args[0]
    out("[preflight] Running pre-flight checks.")
    out("[upgrade/config] Reading configuration from the \"kubeadm-config\" ConfigMap in namespace \"kube-system\"...")
    cur = upgrade_cluster_version()
    kv = "v" + version()
    out("[upgrade] Running cluster health checks")
    upgrade_rules(cur, target, kv)
    if "dry-run" in opts:
        out("[dryrun] Would upgrade the control plane from %s to %s" % (cur, target))
        return 0
    if not ("y" in opts or "yes" in opts or "f" in opts or "force" in opts):
        out("[upgrade] Are you sure you want to proceed? [y/N]: ")
        if not sys.stdin.readline().strip().lower().startswith("y"):
            raise Fail("won't proceed; the user didn't answer (Y|y) in order to continue")
    preflight_upgrade(opts)
    st = state()
    st["upgradeApply_in_progress"] = True
    st.setdefault("upgradeApply", 0)
    save_state(st)
    out("[upgrade/version] You have chosen to change the cluster version to \"%s\"" % target)
    out("[upgrade/versions] Cluster version: %s" % cur)
    out("[upgrade/versions] kubeadm version: %s" % kv)
    out("[upgrade/staticpods] Writing new Static Pod manifests to \"/etc/kubernetes/tmp/kubeadm-upgraded-manifests\"")
    tb.knob("kubeadm", "upgrade-apply")
    # Nothing is printed between here and the count: the control plane, its version
    # and the kube-system objects move together, and the run is counted once they did.
    upgrade_static_pods(target)
    upgrade_objects(target)
    d = api_dir()
    cfg = json.load(open(d + "/config.json"))
    cfg["version"] = target
    with open(d + "/config.json.tmp", "w") as f:
        json.dump(cfg, f, indent=1)
    os.rename(d + "/config.json.tmp", d + "/config.json")
    st = state()
    st["upgradeApply"] = st.get("upgradeApply", 0) + 1
    st["upgradeApply_in_progress"] = False
    save_state(st)
    out("[upgrade/staticpods] Component \"kube-apiserver\" upgraded successfully!")
    out("[upgrade/staticpods] Component \"kube-controller-manager\" upgraded successfully!")
    out("[upgrade/staticpods] Component \"kube-scheduler\" upgraded successfully!")
    out("[upgrade/postupgrade] Applying label node-role.kubernetes.io/control-plane='' to Nodes with label node-role.kubernetes.io/master=''")
    out("[addons] Applied essential addon: CoreDNS")
    out("[addons] Applied essential addon: kube-proxy")
    out("\n[upgrade/successful] SUCCESS! Your cluster was upgraded to \"%s\". Enjoy!\n" % target)
    out("[upgrade/kubelet] Now that your control plane is upgraded, please proceed with upgrading your kubelets if you haven't already done so.")
    return 0


def preflight_upgrade(opts):
    """`upgrade apply`'s preflight: the control plane must be healthy (the API server answers, the kubelet runs)."""
    ignored = {x.lower() for v in opts.get("ignore-preflight-errors", []) for x in str(v).split(",")}
    tb.knob("kubeadm", "preflight")
    sd = tb.load("systemd")
    if tb.unit_state("kubelet", sd.get("kubelet", {})) != "active" and "all" not in ignored and "controlplanenodesready" not in ignored:
        raise Fail("[preflight] Some fatal errors occurred:\n\t[ERROR ControlPlaneNodesReady]: the kubelet of this control-plane node is not running\n"
                   "[preflight] If you know what you are doing, you can make a check non-fatal with `--ignore-preflight-errors=...`")


def upgrade_static_pods(target):
    man = tb.hp("/etc/kubernetes/manifests")
    for m in ("kube-apiserver.yaml", "kube-controller-manager.yaml", "kube-scheduler.yaml"):
        p = man + "/" + m
        if not os.path.exists(p):
            continue
        pod = yaml.load(open(p), Loader=SAFE_LOADER)
        for c in pod.get("spec", {}).get("containers", []):
            c["image"] = re.sub(r":v[\d.]+$", ":" + target, c.get("image", ""))
        tb.write_file("/etc/kubernetes/manifests/" + m, yaml.safe_dump(pod, sort_keys=False), 0o600)


def upgrade_objects(target):
    """What `upgrade apply` changes in kube-system: kubeadm-config's kubernetesVersion, kube-proxy's and CoreDNS's images."""
    code, cm, _ = api("GET", "/api/v1/namespaces/kube-system/configmaps/kubeadm-config")
    if code == 200:
        cc = yaml.load(cm["data"]["ClusterConfiguration"], Loader=SAFE_LOADER)
        cc["kubernetesVersion"] = target
        if vtuple(target) >= (1, 31):
            cc["apiVersion"] = "kubeadm.k8s.io/v1beta4"
        cm["data"]["ClusterConfiguration"] = yaml.safe_dump(cc)
        api("PUT", "/api/v1/namespaces/kube-system/configmaps/kubeadm-config", cm)
    for path, name, image in (("/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy", "kube-proxy", "registry.k8s.io/kube-proxy:" + target),
                              ("/apis/apps/v1/namespaces/kube-system/deployments/coredns", "coredns",
                               "registry.k8s.io/coredns/coredns:" + COREDNS.get(vtuple(target), "v1.11.3"))):
        code, o, _ = api("GET", path)
        if code != 200:
            continue
        for c in o["spec"]["template"]["spec"].get("containers", []):
            if c["name"] == name:
                c["image"] = image
        api("PUT", path, o)


def upgrade_node(argv):
    opts, args = tb.parse_opts(argv, VALUE_FLAGS)
    check_flags(opts, UPGRADE_FLAGS, "upgrade node")
    if not os.path.exists(tb.hp("/etc/kubernetes/kubelet.conf")):
        raise Fail("error execution phase preflight: unable to read kubelet.conf: open /etc/kubernetes/kubelet.conf: no such file or directory "
                   "(this node has not joined a cluster)")
    master = os.path.exists(tb.hp("/etc/kubernetes/admin.conf")) and os.path.exists(api_dir() + "/config.json")
    out("[upgrade] Reading configuration from the \"kubeadm-config\" ConfigMap in namespace \"kube-system\"...")
    own = None  # a master of several: its own control plane's version, and the cluster's in kubeadm-config
    if master and several_masters():
        own = upgrade_cluster_version()
        code, cm, _ = api("GET", "/api/v1/namespaces/kube-system/configmaps/kubeadm-config")
        if code != 200:
            raise Fail("[upgrade/config] FATAL: failed to get the kubeadm-config ConfigMap: %s" % cm.get("message"))
        cur = yaml.load(cm["data"]["ClusterConfiguration"], Loader=SAFE_LOADER).get("kubernetesVersion") or own
    elif master:
        cur = upgrade_cluster_version()
    else:
        server = yaml.load(open(tb.hp("/etc/kubernetes/kubelet.conf")), Loader=SAFE_LOADER)["clusters"][0]["cluster"]["server"]
        cur = upgrade_cluster_version(server.split("://", 1)[1])
    kv = "v" + version()
    if vtriple(kv) < vtriple(cur):
        raise Fail("error execution phase preflight: the installed kubeadm %s is older than the control plane %s; "
                   "upgrade the kubeadm package first" % (kv, cur))
    if "dry-run" in opts:
        out("[dryrun] Would upgrade this node's configuration to %s" % cur)
        return 0
    out("[preflight] Running pre-flight checks")
    st = state()
    st["upgradeNode_in_progress"] = True
    st.setdefault("upgradeNode", 0)
    save_state(st)
    tb.knob("kubeadm", "upgrade-node")
    if own is not None and own != cur:
        # Another master ran `upgrade apply`: this one's control plane follows, as kubeadm's
        # upgrade node does on a control-plane node.
        out("[upgrade/staticpods] Writing new Static Pod manifests to \"/etc/kubernetes/tmp/kubeadm-upgraded-manifests\"")
        upgrade_static_pods(cur)
        d = api_dir()
        cfg = json.load(open(d + "/config.json"))
        cfg["version"] = cur
        with open(d + "/config.json.tmp", "w") as f:
            json.dump(cfg, f, indent=1)
        os.rename(d + "/config.json.tmp", d + "/config.json")
        with tb.Lock():  # the kubelet restarts the changed static pod; kubeadm waits for it
            ensure_apiserver(tb.load("systemd"))
        for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
            out("[upgrade/staticpods] Component \"%s\" upgraded successfully!" % c)
    elif master:
        out("[upgrade/staticpods] The control plane of this node is already at %s" % cur)
    else:
        out("[preflight] Skipping prepull. Not a control plane node.")
        out("[upgrade] Skipping phase. Not a control plane node.")
    text = tb.read_file("/var/lib/kubelet/config.yaml") or kubelet_config("systemd")
    tb.write_file("/var/lib/kubelet/config.yaml", text, 0o644)
    st = state()
    st["upgradeNode"] = st.get("upgradeNode", 0) + 1
    st["upgradeNode_in_progress"] = False
    save_state(st)
    out("[kubelet-start] Writing kubelet configuration to file \"/var/lib/kubelet/config.yaml\"")
    out("[upgrade] The configuration for this node was successfully updated!")
    out("[upgrade] Now you should go ahead and upgrade the kubelet package using your package manager.")
    return 0


def upgrade(argv):
    if not argv or argv[0] in ("-h", "--help"):
        out("Usage:\n  kubeadm upgrade [command]\n\nAvailable Commands:\n  apply  node  plan")
        return 0
    sub, rest = argv[0], argv[1:]
    if sub == "plan":
        return upgrade_plan(rest)
    if sub == "apply":
        with InitLock():
            return upgrade_apply(rest)
    if sub == "node":
        with InitLock():
            return upgrade_node(rest)
    raise Fail("unknown command \"%s\" for \"kubeadm upgrade\"" % sub)


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        out("Usage:\n  kubeadm [command]\n\nAvailable Commands:\n  certs  config  init  join  reset  token  upgrade  version")
        return 0
    cmd, rest = argv[0], argv[1:]
    try:
        if cmd == "version":
            return version_cmd(rest)
        if cmd == "init" and rest[:1] == ["phase"]:
            with InitLock():
                return init_phase(rest[1:])
        if cmd == "init":
            with InitLock():
                return init(rest)
        if cmd == "join":
            with InitLock():
                return join(rest)
        if cmd == "reset":
            with InitLock():
                return reset(rest)
        if cmd == "token":
            return token(rest)
        if cmd == "config":
            return config_cmd(rest)
        if cmd == "upgrade":
            return upgrade(rest)
        if cmd == "certs":
            with InitLock():
                return certs_cmd(rest)
        raise Fail("the testbed's kubeadm does not implement \"%s\"" % cmd)
    except Fail as e:
        msg = str(e)
        if cmd in ("init", "join") and not msg.startswith("error execution phase") and not msg.startswith("unknown flag") \
                and not msg.startswith("can not mix") and "Invalid value" not in msg:
            msg = "error execution phase %s: %s" % ({"init": "wait-control-plane", "join": "preflight"}[cmd]
                                                    if "wait-control-plane" not in msg else "wait-control-plane", msg.replace("wait-control-plane: ", ""))
        err(msg)
        if "stack trace" not in msg:
            err("To see the stack trace of this error execute with --v=5 or higher")
        return 1


class InitLock:
    """Two kubeadm init/join/reset on one host at once would fight over the same files; the real ones do too.
    The fake serialises them so the counters stay exact."""

    def __enter__(self):
        import fcntl
        self.fd = os.open(tb.HOST + "/state/.kubeadm-lock", os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *a):
        import fcntl
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
