"""The testbed's etcd client: etcd's v3 JSON gateway over TLS with a client
certificate (Python's http.client and ssl, no other package), and
kube-apiserver's key layout under /registry.

The fake API server (kube_apiserver.py) keeps its objects here, `testbed.sh
state` reads them back. Values are the objects' JSON; a real kube-apiserver
writes protobuf (`k8s\\0` and an envelope) for the built-in kinds and JSON
for custom resources, so `etcdctl get` shows JSON here where it would show
bytes on a real cluster. docs/testbed.md, "The etcd".
"""

import base64
import http.client
import json
import ssl
import urllib.parse

# etcd's defaults (--max-txn-ops, --max-request-bytes 1.5 MiB): one write of the
# API server is one transaction unless it needs more operations or bytes.
MAX_TXN_OPS = 128
MAX_TXN_BYTES = 1000000
# Where kube-apiserver keeps a resource, when not at /registry/PLURAL (built-in)
# or /registry/GROUP/PLURAL (custom resources).
SPECIAL = {("", "services"): "services/specs", ("", "endpoints"): "services/endpoints", ("", "nodes"): "minions",
           ("networking.k8s.io", "ingresses"): "ingress",
           ("apiextensions.k8s.io", "customresourcedefinitions"): "apiextensions.k8s.io/customresourcedefinitions"}
REVERSE = {v: k for k, v in SPECIAL.items()}
# The API server's own bookkeeping (its resourceVersion counter, the service IP and
# node port allocators, the nodes' hosts): one key outside /registry.
STATE_KEY = "/testbed.paictl/apiserver-state"


class EtcdError(Exception):
    pass


class EtcdReplaced(EtcdError):
    """etcd holds other data than this client wrote (a snapshot restored under
    it), or answers for another cluster than it did."""


def _b64(b):
    return base64.b64encode(b.encode() if isinstance(b, str) else b).decode()


def prefix_end(prefix):
    b = bytearray(prefix.encode())
    b[-1] += 1
    return bytes(b)


def registry_key(group, plural, ns, name, builtin=True):
    res = SPECIAL.get((group, plural)) or (plural if builtin else group + "/" + plural)
    return "/registry/%s/%s%s" % (res, ns + "/" if ns else "", name)


def parse_registry_key(key, builtin_groups):
    """(group, plural, namespace, name) of a key registry_key() made, or None.
    builtin_groups: plural -> group of the built-in kinds."""
    if not key.startswith("/registry/"):
        return None
    rest = key[len("/registry/"):]
    for path, gp in REVERSE.items():
        if rest.startswith(path + "/"):
            parts = rest[len(path) + 1:].split("/")
            return (gp[0], gp[1], parts[0] if len(parts) == 2 else "", parts[-1])
    parts = rest.split("/")
    if "." in parts[0]:  # a custom resource: GROUP/PLURAL/[NS/]NAME
        if len(parts) not in (3, 4):
            return None
        return (parts[0], parts[1], parts[2] if len(parts) == 4 else "", parts[-1])
    if parts[0] not in builtin_groups or len(parts) not in (2, 3):
        return None
    return (builtin_groups[parts[0]], parts[0], parts[1] if len(parts) == 3 else "", parts[-1])


class Client:
    """One kept HTTPS connection to one etcd endpoint (not thread-safe: its
    callers hold their own lock)."""

    def __init__(self, url, ca, cert, key, timeout=10.0):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "https" or not u.hostname:
            raise EtcdError("etcd endpoint %s: expected https://HOST:PORT" % url)
        self.host, self.port, self.timeout = u.hostname, u.port or 2379, timeout
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.load_cert_chain(cert, key)
        self.conn = None
        self.cluster_id = None  # of the first answer

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def call(self, path, body):
        data = json.dumps(body).encode()
        for attempt in (0, 1):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=self.timeout)
                self.conn.request("POST", "/v3/" + path, body=data, headers={"Content-Type": "application/json"})
                r = self.conn.getresponse()
                text = r.read()
            except (OSError, http.client.HTTPException) as e:
                self.close()
                if attempt:
                    raise EtcdError("etcd %s:%d: %s" % (self.host, self.port, e))
                continue
            if r.status != 200:
                raise EtcdError("etcd %s: %d %s" % (path, r.status, text.decode(errors="replace")[:300]))
            res = json.loads(text or b"{}")
            cid = (res.get("header") or {}).get("cluster_id")
            if cid and self.cluster_id and cid != self.cluster_id:
                raise EtcdReplaced("etcd %s:%d now answers for cluster %s, not %s" % (self.host, self.port, cid, self.cluster_id))
            self.cluster_id = self.cluster_id or cid
            return res
        raise EtcdError("etcd %s:%d: no answer" % (self.host, self.port))

    def range_prefix(self, prefix, count_only=False):
        """[(key, value bytes)] under prefix, or the count with count_only."""
        body = {"key": _b64(prefix), "range_end": _b64(prefix_end(prefix))}
        if count_only:
            body["count_only"] = True
            return int(self.call("kv/range", body).get("count", 0))
        r = self.call("kv/range", body)
        return [(base64.b64decode(kv["key"]).decode(), base64.b64decode(kv.get("value", ""))) for kv in r.get("kvs", [])]

    def get(self, key, serializable=False):
        """The key's value or None; serializable: this member's own copy, answered without
        the cluster's quorum (a member of several started before the others)."""
        body = {"key": _b64(key)}
        if serializable:
            body["serializable"] = True
        r = self.call("kv/range", body)
        kvs = r.get("kvs", [])
        return base64.b64decode(kvs[0].get("value", "")) if kvs else None

    def txn(self, ops, guard=None):
        """ops: ("put", key, bytes) | ("delete", key); as few transactions as
        etcd's limits allow (one for most writes). guard: (key, value or None):
        the first transaction only if the key holds that value (None: the key
        does not exist), else EtcdReplaced and nothing written."""
        batch, size = [], 0
        compare = None
        if guard is not None:
            k, v = guard
            compare = [{"target": "CREATE", "key": _b64(k), "create_revision": "0", "result": "EQUAL"} if v is None else
                       {"target": "VALUE", "key": _b64(k), "value": _b64(v), "result": "EQUAL"}]

        def send(batch):
            nonlocal compare
            body = {"success": batch}
            if compare:
                body["compare"] = compare
            r = self.call("kv/txn", body)
            if compare and not r.get("succeeded"):
                raise EtcdReplaced("etcd %s:%d: %s is not what this client wrote last" % (self.host, self.port, guard[0]))
            compare = None
        for op in ops:
            if op[0] == "put":
                req = {"request_put": {"key": _b64(op[1]), "value": _b64(op[2])}}
            else:
                req = {"request_delete_range": {"key": _b64(op[1])}}
            n = len(req.get("request_put", {}).get("value", "")) + len(op[1]) * 2 + 64
            if batch and (len(batch) >= MAX_TXN_OPS or size + n > MAX_TXN_BYTES):
                send(batch)
                batch, size = [], 0
            batch.append(req)
            size += n
        if batch:
            send(batch)


    def members(self):
        return self.call("cluster/member/list", {}).get("members", [])


def manifest_flags(command):
    """{flag: value} of a static pod's command (--k=v)."""
    res = {}
    for a in command[1:]:
        if a.startswith("--"):
            k, _, v = a[2:].partition("=")
            res[k] = v
    return res
