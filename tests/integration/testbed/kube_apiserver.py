#!/usr/bin/python3
"""A small fake Kubernetes API server for the testbed (Python 3 standard library + PyYAML).

It keeps objects in memory and in the master's etcd (--etcd-servers, with
kube-apiserver's keys under /registry, one transaction per request or
controllers' tick; read back at its start), or without --etcd-servers in
DIR/objects.json, and answers what
kubectl and kubeadm need over TLS (the cluster CA that the fake kubeadm makes):

  discovery   /api, /apis, /api/v1, /apis/G/V (legacy, not aggregated),
              /version, /healthz, /readyz, /livez, /openapi/v2 (a minimal
              protobuf document: kubectl finds no schema and skips client-side
              validation), /openapi/v3 is 404 (kubectl falls back)
  verbs       get, list (labelSelector, fieldSelector metadata.name/namespace,
              spec.nodeName), watch (chunked JSON events, resourceVersion,
              timeoutSeconds), create, replace (resourceVersion conflicts),
              patch (json, merge, strategic-merge for the usual list keys,
              server-side apply with field managers, conflicts and force),
              delete (and collection delete), status subresources, dryRun=All
  auth        client certificates signed by the cluster CA (admin), the
              admin bearer token in DIR/admin-token, kubeadm bootstrap tokens
              (Secrets kube-system/bootstrap-token-<id>, expiry honoured) for
              joining nodes, per-node tokens issued at join
  controllers after `rollout_delay` seconds Deployments, DaemonSets and
              StatefulSets get pods scheduled on Ready nodes (nodeSelector,
              taints/tolerations, nvidia.com/gpu requests) and an available
              status; Jobs complete; Nodes follow their host's kubelet and
              containerd and get nvidia.com/gpu allocatable once the device
              plugin DaemonSet runs on them and containerd's default runtime is
              nvidia; CRDs become Established and serve their resources.

Knobs: DIR/knobs, one per line: `unavailable NAMESPACE/NAME` keeps that
workload's pods in CrashLoopBackOff (with an Event). docs/testbed.md has the
whole subset.
"""

import argparse
import base64
import copy
import hashlib
import json
import os
import re
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pai_doubles  # noqa: E402
import tbetcd  # noqa: E402

# (group, version, plural, kind, namespaced, shortNames, has status)
BUILTIN = [
    ("", "v1", "namespaces", "Namespace", False, ["ns"], True),
    ("", "v1", "configmaps", "ConfigMap", True, ["cm"], False),
    ("", "v1", "secrets", "Secret", True, [], False),
    ("", "v1", "serviceaccounts", "ServiceAccount", True, ["sa"], False),
    ("", "v1", "services", "Service", True, ["svc"], True),
    ("", "v1", "endpoints", "Endpoints", True, ["ep"], False),
    ("", "v1", "pods", "Pod", True, ["po"], True),
    ("", "v1", "events", "Event", True, ["ev"], False),
    ("", "v1", "nodes", "Node", False, ["no"], True),
    ("", "v1", "persistentvolumes", "PersistentVolume", False, ["pv"], True),
    ("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ["pvc"], True),
    ("", "v1", "limitranges", "LimitRange", True, ["limits"], False),
    ("", "v1", "resourcequotas", "ResourceQuota", True, ["quota"], True),
    ("apps", "v1", "deployments", "Deployment", True, ["deploy"], True),
    ("apps", "v1", "daemonsets", "DaemonSet", True, ["ds"], True),
    ("apps", "v1", "statefulsets", "StatefulSet", True, ["sts"], True),
    ("apps", "v1", "replicasets", "ReplicaSet", True, ["rs"], True),
    ("apps", "v1", "controllerrevisions", "ControllerRevision", True, [], False),
    ("batch", "v1", "jobs", "Job", True, [], True),
    ("batch", "v1", "cronjobs", "CronJob", True, ["cj"], True),
    ("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False, [], False),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False, [], False),
    ("rbac.authorization.k8s.io", "v1", "roles", "Role", True, [], False),
    ("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True, [], False),
    ("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False, ["crd", "crds"], True),
    ("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ["pc"], False),
    ("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ["sc"], False),
    ("networking.k8s.io", "v1", "ingresses", "Ingress", True, ["ing"], True),
    ("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ["netpol"], False),
    ("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ["pdb"], True),
    ("coordination.k8s.io", "v1", "leases", "Lease", True, [], False),
    ("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest", False, ["csr"], True),
]
BUILTIN_KEYS = {(b[0], b[2]) for b in BUILTIN}
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
WORKLOADS = ("deployments", "daemonsets", "statefulsets", "jobs")
# Strategic merge patch: the merge key of a list, by field name (and the key its items carry).
MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
              "volumes": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath", "imagePullSecrets": "name",
              "hostAliases": "ip", "conditions": "type", "taints": "key", "secrets": "name", "topologySpreadConstraints": "topologyKey",
              "ownerReferences": "uid", "addresses": "type", "resourceClaims": "name"}
PRIMITIVE_MERGE = {"finalizers"}


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def short_hash(s, n=10):
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = int(hashlib.sha256(s.encode()).hexdigest(), 16)
    out = ""
    for _ in range(n):
        out += alphabet[h % len(alphabet)]
        h //= len(alphabet)
    return out


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details or {}

    def status(self):
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": self.message,
                "reason": self.reason, "details": self.details, "code": self.code}


class Resource:
    def __init__(self, group, version, plural, kind, namespaced, short, status, crd=None):
        self.group, self.version, self.plural, self.kind = group, version, plural, kind
        self.namespaced, self.short, self.has_status, self.crd = namespaced, short, status, crd
        self.singular = kind.lower()

    @property
    def gv(self):
        return self.group + "/" + self.version if self.group else self.version

    def qualified(self):
        return self.plural + ("." + self.group if self.group else "")


def leaf_paths(obj, prefix=()):
    """Leaf paths of a config (lists and scalars are leaves; an empty map is one)."""
    if isinstance(obj, dict) and obj:
        res = set()
        for k, v in obj.items():
            res |= leaf_paths(v, prefix + (k,))
        return res
    return {prefix}


def get_path(obj, path):
    for p in path:
        if not isinstance(obj, dict) or p not in obj:
            return (False, None)
        obj = obj[p]
    return (True, obj)


def set_path(obj, path, value):
    for p in path[:-1]:
        if not isinstance(obj.get(p), dict):
            obj[p] = {}
        obj = obj[p]
    obj[path[-1]] = copy.deepcopy(value)


def del_path(obj, path):
    chain = []
    for p in path[:-1]:
        if not isinstance(obj, dict) or p not in obj:
            return
        chain.append((obj, p))
        obj = obj[p]
    if isinstance(obj, dict):
        obj.pop(path[-1], None)
    for parent, key in reversed(chain):  # drop maps the removal left empty
        if parent[key] == {}:
            del parent[key]
        else:
            break


def to_fields(paths):
    f = {}
    for p in sorted(paths):
        cur = f
        for k in p:
            cur = cur.setdefault("f:" + k, {})
    return f


def from_fields(f, prefix=()):
    res = set()
    for k, v in f.items():
        if not k.startswith("f:"):
            continue
        p = prefix + (k[2:],)
        sub = from_fields(v, p)
        res |= sub if sub else {p}
    return res


def json_merge(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    target = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = json_merge(target.get(k), v)
    return target


def strategic_merge(target, patch, field=None):
    """Strategic merge patch for the list keys of the core types; lists without a key are replaced."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        p = {k: v for k, v in patch.items() if k != "$patch"}
        return copy.deepcopy(p)
    target = copy.deepcopy(target) if isinstance(target, dict) else {}
    order = {}
    for k, v in patch.items():
        if k.startswith("$setElementOrder/"):
            order[k.split("/", 1)[1]] = v
        elif k.startswith("$deleteFromPrimitiveList/"):
            name = k.split("/", 1)[1]
            target[name] = [x for x in target.get(name, []) if x not in v]
        elif k == "$retainKeys":
            for tk in list(target):
                if tk not in v and tk not in patch:
                    del target[tk]
    for k, v in patch.items():
        if k.startswith("$"):
            continue
        if v is None:
            target.pop(k, None)
        elif isinstance(v, list):
            target[k] = merge_list(target.get(k), v, k, order.get(k))
        elif isinstance(v, dict):
            if v.get("$patch") == "delete":
                target.pop(k, None)
            else:
                target[k] = strategic_merge(target.get(k), v, k)
        else:
            target[k] = v
    for k, v in order.items():  # $setElementOrder alone reorders
        if k not in patch and isinstance(target.get(k), list):
            target[k] = merge_list(target[k], [], k, v)
    return target


def merge_list(live, patch, field, order):
    live = live if isinstance(live, list) else []
    if field in PRIMITIVE_MERGE:
        res = list(live)
        for x in patch:
            if x not in res:
                res.append(x)
        return res
    key = MERGE_KEYS.get(field)
    if field == "ports":
        sample = (patch or live or [{}])[0]
        key = "containerPort" if isinstance(sample, dict) and "containerPort" in sample else "port"
    if not key or not all(isinstance(x, dict) for x in patch + live):
        return copy.deepcopy([x for x in patch if not (isinstance(x, dict) and x.get("$patch"))])
    res = [copy.deepcopy(x) for x in live]
    for item in patch:
        k = item.get(key)
        idx = next((i for i, x in enumerate(res) if x.get(key) == k), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                res.pop(idx)
            continue
        if idx is None:
            res.append(strategic_merge({}, item))
        else:
            res[idx] = strategic_merge(res[idx], item)
    if order:
        keys = [o.get(key) if isinstance(o, dict) else o for o in order]
        res.sort(key=lambda x: keys.index(x.get(key)) if x.get(key) in keys else len(keys))
    return res


def json_patch(doc, ops):
    doc = copy.deepcopy(doc)

    def walk(path):
        parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
        cur = doc
        for p in parts[:-1]:
            cur = cur[int(p)] if isinstance(cur, list) else cur[p]
        return cur, parts[-1]

    for op in ops:
        try:
            parent, last = walk(op["path"])
            kind = op["op"]
            if kind in ("add", "replace"):
                if isinstance(parent, list):
                    i = len(parent) if last == "-" else int(last)
                    if kind == "add":
                        parent.insert(i, op["value"])
                    else:
                        parent[i] = op["value"]
                else:
                    if kind == "replace" and last not in parent:
                        raise KeyError(last)
                    parent[last] = op["value"]
            elif kind == "remove":
                if isinstance(parent, list):
                    parent.pop(int(last))
                else:
                    del parent[last]
            elif kind == "test":
                val = parent[int(last)] if isinstance(parent, list) else parent[last]
                if val != op["value"]:
                    raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request: test failed")
            else:
                raise ApiError(400, "BadRequest", "unsupported JSON patch operation %s" % kind)
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request: %s" % e)
    return doc


def match_labels(labels, selector):
    """A label selector string (=, ==, !=, in, notin, exists, !key)."""
    labels = labels or {}
    if not selector:
        return True
    parts = re.findall(r"[^,(]+(?:\([^)]*\))?", selector)
    for part in parts:
        part = part.strip()
        if not part:
            continue
        m = re.match(r"^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$", part)
        if m:
            vals = {v.strip() for v in m.group(3).split(",")}
            has = m.group(1) in labels and labels[m.group(1)] in vals
            if (m.group(2) == "in") != has:
                return False
            continue
        m = re.match(r"^([\w./-]+)\s*(==|=|!=)\s*([\w./-]*)$", part)
        if m:
            k, op, v = m.groups()
            if op == "!=":
                if labels.get(k) == v:
                    return False
            elif labels.get(k) != v:
                return False
            continue
        if part.startswith("!"):
            if part[1:] in labels:
                return False
        elif part not in labels:
            return False
    return True


def selector_string(sel):
    parts = ["%s=%s" % kv for kv in (sel or {}).get("matchLabels", {}).items()]
    for e in (sel or {}).get("matchExpressions", []):
        op = e.get("operator")
        if op in ("In", "NotIn"):
            parts.append("%s %s (%s)" % (e["key"], op.lower(), ",".join(e.get("values", []))))
        elif op == "Exists":
            parts.append(e["key"])
        elif op == "DoesNotExist":
            parts.append("!" + e["key"])
    return ",".join(parts)


def match_fields(obj, selector):
    if not selector:
        return True
    for part in selector.split(","):
        m = re.match(r"^([\w.]+)\s*(==|=|!=)\s*(.*)$", part.strip())
        if not m:
            continue
        k, op, v = m.groups()
        ok, got = get_path(obj, tuple(k.split(".")))
        got = got if ok else ""
        if (op == "!=") == (str(got) == v):
            return False
    return True


class ClusterLock:
    """The store's lock when several masters' API servers keep their objects in one etcd
    cluster (config.json's `cluster_lock`, docs/testbed.md "Several masters"): the
    process's own lock, then an flock that every master's API server takes on the same
    file (they run on one machine), then what another master wrote since is read from
    etcd (Store.sync_etcd) before anything is read or written. Each request and each
    controllers' tick so sees the cluster's latest objects and writes on top of them, as
    if one API server served them all; one killed with the lock held drops it. Works
    with threading.Condition (wait releases both)."""

    def __init__(self, store, path):
        import fcntl
        self.flock = fcntl.flock
        self.LOCK_EX, self.LOCK_UN = fcntl.LOCK_EX, fcntl.LOCK_UN
        self.rlock = threading.RLock()
        self.store = store
        self.fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
        self.depth = 0  # the owner's nesting

    def acquire(self, blocking=True, timeout=-1):
        if not self.rlock.acquire(blocking, timeout):
            return False
        self.depth += 1
        if self.depth == 1:
            try:
                self.flock(self.fd, self.LOCK_EX)
                self.store.sync_etcd()
            except BaseException:
                self.depth -= 1
                self.flock(self.fd, self.LOCK_UN)
                self.rlock.release()
                raise
        return True

    def release(self):
        self.depth -= 1
        if self.depth == 0:
            self.flock(self.fd, self.LOCK_UN)
        self.rlock.release()

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *a):
        self.release()

    def _is_owned(self):
        return self.rlock._is_owned()

    def _release_save(self):
        depth, self.depth = self.depth, 0
        self.flock(self.fd, self.LOCK_UN)
        return (depth, self.rlock._release_save())

    def _acquire_restore(self, saved):
        depth, inner = saved
        self.rlock._acquire_restore(inner)
        self.flock(self.fd, self.LOCK_EX)
        self.depth = depth
        self.store.sync_etcd()


class Store:
    def __init__(self, d, cfg):
        self.dir, self.cfg = d, cfg
        # With several masters (and etcd), the lock is the masters' one (ClusterLock).
        self.shared = bool(cfg.get("cluster_lock") and cfg.get("etcd"))
        self.lock = ClusterLock(self, cfg["cluster_lock"]) if self.shared else threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.objects = {}
        self.rv = 0
        self.deferred = None  # True/False while a controllers' tick holds persist() back
        self.encoded = {}  # key -> (resourceVersion, object, its JSON in objects.json)
        self.events = []  # (rv, type, resource plural/group, obj)
        self.changed = {}  # key -> time of the last spec change (controllers wait rollout_delay)
        self.side = {"node_hosts": {}, "node_tokens": {}, "next_ip": 11, "next_port": 30000}
        self.etcd = None
        self.stored = {}  # with etcd: key -> (resourceVersion, object) as etcd has it
        self.stored_state = None
        self.unstored = False  # etcd did not take the last write: tried again at the next tick
        self.on_etcd_replaced = lambda: os._exit(1)  # main() stops the HiveD double first
        self.resources = {}
        if cfg.get("etcd"):
            self.etcd = tbetcd.Client(*cfg["etcd"])
            self.load_etcd()  # (waits for etcd)
            if self.shared:
                # Another master may have written meanwhile: read all again under their lock.
                self.stored_state = None
                with self.lock:
                    pass
        else:
            path = d + "/objects.json"
            if os.path.exists(path):
                with open(path) as f:
                    data = json.load(f)
                self.rv = data["rv"]
                self.side = data.get("side", self.side)
                for o in data["objects"]:
                    self.objects[tuple(o["key"])] = o["object"]
        for b in BUILTIN:
            r = Resource(*b)
            self.resources[(r.group, r.plural)] = r
        self.refresh_crds()
        if not self.objects:
            for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
                self.create(self.resources[("", "namespaces")], None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, "kube-apiserver")
            self.create(self.resources[("", "services")], "default", {"apiVersion": "v1", "kind": "Service",
                        "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}},
                        "spec": {"clusterIP": self.first_ip(), "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": cfg["port"]}]}}, "kube-apiserver")

    def load_etcd(self):
        """Every object under /registry and the server's own state, from etcd (retried
        while etcd starts)."""
        builtin = {b[2]: b[0] for b in BUILTIN}
        deadline = time.time() + 30
        while True:
            try:
                kvs = self.etcd.range_prefix("/registry/")
                state = self.etcd.get(tbetcd.STATE_KEY)
                break
            except tbetcd.EtcdError as e:
                if time.time() > deadline:
                    raise
                sys.stderr.write("waiting for etcd: %s\n" % e)
                time.sleep(0.2)
        rv = 0
        for key, value in kvs:
            k = tbetcd.parse_registry_key(key, builtin)
            if k is None:
                continue
            try:
                o = json.loads(value)
            except ValueError:
                sys.stderr.write("etcd: %s is not JSON; left out\n" % key)
                continue
            self.objects[k] = o
            self.stored[k] = (o.get("metadata", {}).get("resourceVersion"), o)
            try:
                rv = max(rv, int(o.get("metadata", {}).get("resourceVersion", 0)))
            except ValueError:
                pass
        if state:
            data = json.loads(state)
            self.side = data.get("side", self.side)
            rv = max(rv, data.get("rv", 0))
            self.stored_state = state.decode()
        self.rv = rv

    def persist_etcd(self):
        """What changed since the last write, as one etcd transaction (or as few as
        etcd's limits allow). A write etcd did not take is tried again with the next."""
        state = json.dumps({"rv": self.rv, "side": self.side}, sort_keys=True)
        # The server's own state first: with the guard below, the first transaction
        # writes it only where etcd still holds what this server wrote last.
        ops, done = [("put", tbetcd.STATE_KEY, state.encode())] if state != self.stored_state else [], {}
        for k, v in self.objects.items():
            rv = v.get("metadata", {}).get("resourceVersion")
            hit = self.stored.get(k)
            if hit is None or hit[0] != rv or hit[1] is not v:
                ops.append(("put", self.etcd_key(k), json.dumps(v).encode()))
                done[k] = (rv, v)
        gone = [k for k in self.stored if k not in self.objects]
        for k in gone:
            ops.append(("delete", self.etcd_key(k)))
        if not ops:
            return
        try:
            self.etcd.txn(ops, guard=(tbetcd.STATE_KEY, self.stored_state))
        except tbetcd.EtcdReplaced as e:
            self.etcd_replaced(e)
        except tbetcd.EtcdError as e:
            sys.stderr.write("etcd: %d writes not stored yet: %s\n" % (len(ops), e))
            self.unstored = True
            try:  # the first of several transactions may have been taken
                if ops[0][1] == tbetcd.STATE_KEY and self.etcd.get(tbetcd.STATE_KEY) == ops[0][2]:
                    self.stored_state = state
            except tbetcd.EtcdError:
                pass
            return
        self.unstored = False
        self.stored.update(done)
        for k in gone:
            self.stored.pop(k, None)
        self.stored_state = state

    def sync_etcd(self):
        """With several masters: what the others wrote since this server last read or wrote
        etcd (its state key moved), read from etcd and made this server's objects, with the
        watch events their changes make. Called with the masters' lock held."""
        if self.etcd is None or not self.shared:
            return
        try:
            got = self.etcd.get(tbetcd.STATE_KEY)
        except tbetcd.EtcdReplaced as e:
            self.etcd_replaced(e)
            return
        except tbetcd.EtcdError:
            return  # etcd not there for a moment: serve what this server has
        got = got.decode() if got is not None else None
        if got == self.stored_state:
            return
        builtin = {b[2]: b[0] for b in BUILTIN}
        try:
            kvs = self.etcd.range_prefix("/registry/")
        except tbetcd.EtcdError:
            return
        new = {}
        for key, value in kvs:
            k = tbetcd.parse_registry_key(key, builtin)
            if k is None:
                continue
            try:
                new[k] = json.loads(value)
            except ValueError:
                continue
        data = json.loads(got) if got else {}
        rv = data.get("rv", 0)
        for o in new.values():
            try:
                rv = max(rv, int(o.get("metadata", {}).get("resourceVersion", 0)))
            except ValueError:
                pass
        events, now_ = [], time.time()
        crds = False
        for k, o in new.items():
            old = self.objects.get(k)
            # The whole object, not its resourceVersion: the controllers change some
            # statuses in place, keeping it (what persist_etcd writes all the same).
            if old is not None and old == o:
                new[k] = old
                continue
            # The events carry the store's version, as emit() gives them (a status write
            # keeps the object's resourceVersion here): past what any watch has seen.
            events.append((rv, "ADDED" if old is None else "MODIFIED", (k[0], k[1]), o))
            if old is None or old.get("spec") != o.get("spec"):
                self.changed[k] = now_
            crds = crds or k[1] == "customresourcedefinitions"
        for k, o in self.objects.items():
            if k not in new:
                events.append((rv, "DELETED", (k[0], k[1]), o))
                crds = crds or k[1] == "customresourcedefinitions"
        self.objects.clear()
        self.objects.update(new)
        self.stored = {k: (o.get("metadata", {}).get("resourceVersion"), o) for k, o in new.items()}
        self.side = data.get("side", self.side)
        self.rv = max(self.rv, rv)
        self.stored_state = got
        if crds and self.resources:
            self.refresh_crds()
        for e in events:
            self.events.append((e[0], e[1], e[2], copy.deepcopy(e[3])))
        if len(self.events) > 20000:
            del self.events[:10000]
        if events:
            self.cond.notify_all()

    def etcd_replaced(self, e):
        """etcd was restored under this server: what it holds in memory is not etcd's
        any more. It exits; the kubelet starts it again, and it reads etcd anew."""
        sys.stderr.write("%s: exiting, to start again from etcd\n" % e)
        sys.stderr.flush()
        self.on_etcd_replaced()

    def check_etcd(self):
        """etcd still holds the state this server wrote last (read every 2 s)."""
        try:
            got = self.etcd.get(tbetcd.STATE_KEY)
        except tbetcd.EtcdReplaced as e:
            self.etcd_replaced(e)
            return
        except tbetcd.EtcdError:
            return  # not there for a moment: its writes wait
        if (got.decode() if got is not None else None) != self.stored_state:
            self.etcd_replaced("etcd's %s is not what this server wrote last" % tbetcd.STATE_KEY)

    def etcd_key(self, k):
        r = self.resources.get((k[0], k[1]))
        builtin = not (r and r.crd) and (k[0], k[1]) in BUILTIN_KEYS
        return tbetcd.registry_key(k[0], k[1], k[2], k[3], builtin)

    def persist(self):
        # A controllers' tick writes many objects (a DaemonSet's pods on 50 nodes,
        # their statuses, the nodes'): the store is written once at its end
        # (Controllers.run), not once a write, each a dump of every object.
        if self.deferred is not None:
            self.deferred = True
            return
        if self.etcd is not None:
            self.persist_etcd()
            return
        path = self.dir + "/objects.json"
        tmp = path + ".tmp"
        # Each object's text is kept by its resourceVersion (every write gives it a
        # new one): only what changed since the last write is encoded again.
        cache, parts = self.encoded, []
        for k, v in sorted(self.objects.items()):
            rv = v.get("metadata", {}).get("resourceVersion")
            hit = cache.get(k)
            if hit is None or hit[0] != rv or hit[1] is not v:
                hit = (rv, v, json.dumps({"key": list(k), "object": v}))
                cache[k] = hit
            parts.append(hit[2])
        for k in [k for k in cache if k not in self.objects]:
            del cache[k]
        with open(tmp, "w") as f:
            f.write('{"rv": %d, "side": %s, "objects": [' % (self.rv, json.dumps(self.side)))
            f.write(", ".join(parts))
            f.write("]}")
        os.rename(tmp, path)

    def refresh_crds(self):
        for k in [k for k, r in self.resources.items() if r.crd]:
            del self.resources[k]
        for (g, plural, ns, name), o in self.objects.items():
            if g == "apiextensions.k8s.io" and plural == "customresourcedefinitions":
                spec = o.get("spec", {})
                names = spec.get("names", {})
                versions = [v for v in spec.get("versions", []) if v.get("served", True)]
                if not versions or not names.get("plural"):
                    continue
                storage = next((v for v in versions if v.get("storage")), versions[0])
                r = Resource(spec.get("group", ""), storage["name"], names["plural"], names.get("kind", ""),
                             spec.get("scope", "Namespaced") == "Namespaced", names.get("shortNames", []),
                             "status" in storage.get("subresources", {}), crd=name)
                r.singular = names.get("singular", r.kind.lower())
                r.versions = [v["name"] for v in versions]
                self.resources[(r.group, r.plural)] = r

    def find(self, group, version, plural):
        r = self.resources.get((group, plural))
        if r is None:
            return None
        if version != r.version and version not in getattr(r, "versions", []):
            return None
        return r

    def key(self, r, ns, name):
        return (r.group, r.plural, ns or "", name)

    def emit(self, kind, r, obj):
        self.events.append((self.rv, kind, (r.group, r.plural), copy.deepcopy(obj)))
        if len(self.events) > 20000:
            del self.events[:10000]
        self.cond.notify_all()

    # --------------------------------------------------------------------- writes

    def create(self, r, ns, obj, manager, dry=False, user=None):
        with self.lock:
            meta = obj.setdefault("metadata", {})
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = meta["generateName"] + short_hash(str(uuid.uuid4()), 5)
            name = meta.get("name")
            self.validate_meta(r, ns, obj)
            if r.namespaced:
                if not self.objects.get(("", "namespaces", "", ns)):
                    raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns, {"name": ns, "kind": "namespaces"})
                meta["namespace"] = ns
            else:
                meta.pop("namespace", None)
            k = self.key(r, ns, name)
            if k in self.objects:
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (r.qualified(), name),
                               {"name": name, "group": r.group, "kind": r.plural})
            obj["apiVersion"], obj["kind"] = r.gv, r.kind
            self.defaults(r, obj, None)
            self.validate(r, obj, None)
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = now()
            if self.has_spec(r):
                meta["generation"] = 1
            self.own_update(obj, None, manager, "Update")
            if dry:
                return obj
            self.rv += 1
            meta["resourceVersion"] = str(self.rv)
            self.objects[k] = obj
            self.changed[k] = time.time()
            self.after_write(r, obj, "ADDED")
            return copy.deepcopy(obj)

    def has_spec(self, r):
        return r.kind not in ("ConfigMap", "Secret", "ServiceAccount", "Event", "Namespace", "Endpoints", "ClusterRole",
                              "ClusterRoleBinding", "Role", "RoleBinding", "PriorityClass", "StorageClass", "Lease")

    def update(self, r, ns, name, new, manager, subresource=None, dry=False, check_rv=True, op="Update"):
        """Replaces an object; a write that changes nothing keeps its resourceVersion."""
        with self.lock:
            k = self.key(r, ns, name)
            old = self.objects.get(k)
            if old is None:
                raise ApiError(404, "NotFound", '%s "%s" not found' % (r.qualified(), name), {"name": name, "group": r.group, "kind": r.plural})
            meta = new.setdefault("metadata", {})
            if meta.get("name", name) != name:
                raise ApiError(400, "BadRequest", 'the name of the object (%s) does not match the name on the URL (%s)' % (meta.get("name"), name))
            want_rv = meta.get("resourceVersion")
            if check_rv and want_rv and want_rv != old["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been modified; please apply your changes to the latest version and try again' % (r.qualified(), name),
                               {"name": name, "group": r.group, "kind": r.plural})
            new["apiVersion"], new["kind"] = r.gv, r.kind
            for f in ("uid", "creationTimestamp", "generation", "namespace", "deletionTimestamp"):
                if f in old["metadata"]:
                    meta[f] = old["metadata"][f]
                else:
                    meta.pop(f, None)
            meta["name"] = name
            if "managedFields" not in meta and "managedFields" in old["metadata"]:
                meta["managedFields"] = old["metadata"]["managedFields"]
            if subresource == "status":
                merged = copy.deepcopy(old)
                merged["status"] = new.get("status", {})
                new = merged
            elif r.has_status and "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            elif r.has_status:
                new.pop("status", None)
            self.defaults(r, new, old)
            self.validate(r, new, old)
            if op == "Update":
                self.own_update(new, old, manager, "Update")
            if self.same(old, new):
                return copy.deepcopy(old)
            if self.spec_of(old) != self.spec_of(new) and "generation" in meta:
                meta["generation"] = old["metadata"].get("generation", 1) + 1
                self.changed[k] = time.time()
            if dry:
                return new
            self.rv += 1
            meta["resourceVersion"] = str(self.rv)
            self.objects[k] = new
            self.after_write(r, new, "MODIFIED")
            return copy.deepcopy(new)

    def spec_of(self, o):
        return {k: v for k, v in o.items() if k not in ("metadata", "status")}

    def same(self, a, b):
        def strip(o):
            o = copy.deepcopy(o)
            o["metadata"].pop("resourceVersion", None)
            for m in o["metadata"].get("managedFields", []):
                m.pop("time", None)
            return o
        return strip(a) == strip(b)

    def delete(self, r, ns, name, dry=False):
        with self.lock:
            k = self.key(r, ns, name)
            old = self.objects.get(k)
            if old is None:
                raise ApiError(404, "NotFound", '%s "%s" not found' % (r.qualified(), name), {"name": name, "group": r.group, "kind": r.plural})
            if dry:
                return old
            del self.objects[k]
            self.rv += 1
            old = copy.deepcopy(old)
            old["metadata"]["resourceVersion"] = str(self.rv)
            self.emit("DELETED", r, old)
            # Garbage collection: what a namespace, a CRD or a workload owned goes with it.
            if r.plural == "namespaces" and not r.group:
                for kk in [kk for kk in self.objects if kk[2] == name]:
                    rr = self.resources.get((kk[0], kk[1]))
                    if rr and kk in self.objects:
                        self.delete(rr, kk[2], kk[3])
            if r.plural == "customresourcedefinitions":
                g, _, plural = old["spec"]["group"], None, old["spec"]["names"]["plural"]
                rr = self.resources.get((g, plural))
                for kk in [kk for kk in self.objects if kk[0] == g and kk[1] == plural]:
                    if kk in self.objects:
                        self.delete(rr, kk[2], kk[3])
                self.refresh_crds()
            uid = old["metadata"].get("uid")
            for kk, o in list(self.objects.items()):
                if any(ref.get("uid") == uid for ref in o.get("metadata", {}).get("ownerReferences", [])):
                    rr = self.resources.get((kk[0], kk[1]))
                    if rr and kk in self.objects:
                        self.delete(rr, kk[2], kk[3])
            self.persist()
            return old

    def after_write(self, r, obj, kind):
        if r.plural == "customresourcedefinitions":
            self.refresh_crds()
        self.emit(kind, r, obj)
        self.persist()

    # --------------------------------------------------------------------- field managers

    def own_update(self, new, old, manager, op):
        """An Update by `manager` owns the leaf fields it changed; other managers lose them."""
        def body(o):
            return {k: v for k, v in (o or {}).items() if k not in ("status", "apiVersion", "kind")} | \
                   {"metadata": {k: v for k, v in (o or {}).get("metadata", {}).items() if k in ("labels", "annotations")}}
        nb, ob = body(new), body(old)
        changed = {p for p in leaf_paths(nb) if get_path(nb, p) != get_path(ob, p)}
        changed.discard(("metadata",))
        if not changed:
            return
        mf = new["metadata"].get("managedFields", [])
        for m in mf:
            if m["manager"] != manager or m.get("operation") != op:
                owned = from_fields(m.get("fieldsV1", {})) - changed
                m["fieldsV1"] = to_fields(owned)
        mine = next((m for m in mf if m["manager"] == manager and m.get("operation") == op), None)
        if mine is None:
            mine = {"manager": manager, "operation": op, "apiVersion": new["apiVersion"], "fieldsType": "FieldsV1", "fieldsV1": {}}
            mf.append(mine)
        mine["fieldsV1"] = to_fields(from_fields(mine["fieldsV1"]) | changed)
        mine["time"] = now()
        new["metadata"]["managedFields"] = [m for m in mf if m.get("fieldsV1")]

    def apply(self, r, ns, name, applied, manager, force, dry=False):
        with self.lock:
            if not isinstance(applied, dict):
                raise ApiError(400, "BadRequest", "apply patch must be an object")
            ameta = applied.setdefault("metadata", {})
            if ameta.get("name", name) != name:
                raise ApiError(400, "BadRequest", "metadata.name does not match the name on the URL")
            if applied.get("kind") != r.kind:
                raise ApiError(400, "BadRequest", "the kind in the apply patch (%s) does not match %s" % (applied.get("kind"), r.kind))
            cfg = copy.deepcopy(applied)
            cfg.pop("status", None)
            for f in ("name", "namespace", "resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"):
                cfg["metadata"].pop(f, None)
            if not cfg["metadata"]:
                cfg.pop("metadata")
            paths = {p for p in leaf_paths({k: v for k, v in cfg.items() if k not in ("apiVersion", "kind")})}
            k = self.key(r, ns, name)
            live = self.objects.get(k)
            if live is None:
                obj = copy.deepcopy(cfg)
                obj.setdefault("metadata", {})["name"] = name
                created = self.create(r, ns, obj, manager, dry=True)
                created["metadata"]["managedFields"] = [{"manager": manager, "operation": "Apply", "apiVersion": r.gv,
                                                         "time": now(), "fieldsType": "FieldsV1", "fieldsV1": to_fields(paths)}]
                if dry:
                    return created
                self.rv += 1
                created["metadata"]["resourceVersion"] = str(self.rv)
                self.objects[k] = created
                self.changed[k] = time.time()
                self.after_write(r, created, "ADDED")
                return copy.deepcopy(created)
            mf = copy.deepcopy(live["metadata"].get("managedFields", []))
            mine = next((m for m in mf if m["manager"] == manager and m.get("operation") == "Apply"), None)
            before = from_fields(mine["fieldsV1"]) if mine else set()
            others = [(m, from_fields(m.get("fieldsV1", {}))) for m in mf if m is not mine]
            conflicts = []
            for p in paths:
                ok, lv = get_path(live, p)
                _, av = get_path(cfg, p)
                if ok and lv != av:
                    for m, owned in others:
                        if any(p[:len(o)] == o or o[:len(p)] == p for o in owned):
                            conflicts.append((m["manager"], p))
            if conflicts and not force:
                msg = "Apply failed with %d conflict%s: " % (len(conflicts), "s" if len(conflicts) > 1 else "") + "; ".join(
                    'conflict with "%s"%s: .%s' % (m, " using " + r.gv, ".".join(p)) for m, p in conflicts)
                raise ApiError(409, "Conflict", msg, {"causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "%s"' % m,
                                                                   "field": "." + ".".join(p)} for m, p in conflicts]})
            new = copy.deepcopy(live)
            owned_by_others = set().union(*[o for _, o in others]) if others else set()
            for p in before - paths:
                if p not in owned_by_others:
                    del_path(new, p)
            for p in paths:
                _, av = get_path(cfg, p)
                set_path(new, p, av)
            for m, owned in others:
                if force:
                    owned = {o for o in owned if not any(o[:len(p)] == p or p[:len(o)] == o for p in paths)}
                    m["fieldsV1"] = to_fields(owned)
            if mine is None:
                mine = {"manager": manager, "operation": "Apply", "apiVersion": r.gv, "fieldsType": "FieldsV1"}
                mf.append(mine)
            if from_fields(mine.get("fieldsV1", {})) != paths:
                mine["time"] = now()
            mine["fieldsV1"] = to_fields(paths)
            mine.setdefault("time", now())
            new["metadata"]["managedFields"] = [m for m in mf if m.get("fieldsV1")]
            new["metadata"].pop("resourceVersion", None)
            return self.update(r, ns, name, new, manager, dry=dry, check_rv=False, op="Apply")

    # --------------------------------------------------------------------- defaults and validation

    def validate_meta(self, r, ns, obj):
        name = obj["metadata"].get("name")
        if not name:
            raise ApiError(422, "Invalid", "%s.%s \"\" is invalid: metadata.name: Required value: name or generateName is required" % (r.kind, r.group or "core"))
        if not NAME_RE.match(name) or len(name) > 253:
            raise ApiError(422, "Invalid", '%s "%s" is invalid: metadata.name: Invalid value: "%s": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\'' % (r.kind, name, name))
        if r.namespaced and obj["metadata"].get("namespace") not in (None, "", ns):
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request")

    def invalid(self, r, obj, field, msg):
        name = obj["metadata"].get("name", "")
        raise ApiError(422, "Invalid", '%s.%s "%s" is invalid: %s: %s' % (r.kind, r.group or "core", name, field, msg)
                       if r.group else '%s "%s" is invalid: %s: %s' % (r.kind, name, field, msg),
                       {"name": name, "group": r.group, "kind": r.kind, "causes": [{"reason": "FieldValueInvalid", "message": msg, "field": field}]})

    def validate(self, r, obj, old):
        spec = obj.get("spec", {})
        if r.kind in ("ConfigMap", "Secret"):
            for f in ("data", "stringData", "binaryData"):
                for k, v in (obj.get(f) or {}).items():
                    if not isinstance(v, str):
                        raise ApiError(400, "BadRequest", "json: cannot unmarshal %s into Go struct field %s.%s of type string"
                                       % (type(v).__name__.replace("int", "number").replace("bool", "bool"), r.kind, f))
                    if not re.match(r"^[-._a-zA-Z0-9]+$", k):
                        self.invalid(r, obj, "%s[%s]" % (f, k), "Invalid value: \"%s\": a valid config key must consist of alphanumeric characters, '-', '_' or '.'" % k)
        if r.kind in ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job"):
            tmpl = spec.get("template", {})
            sel = spec.get("selector")
            if r.kind != "Job":
                if not sel:
                    self.invalid(r, obj, "spec.selector", "Required value")
                if not match_labels(tmpl.get("metadata", {}).get("labels", {}), selector_string(sel)):
                    self.invalid(r, obj, "spec.template.metadata.labels", "Invalid value: %s: `selector` does not match template `labels`"
                                 % json.dumps(tmpl.get("metadata", {}).get("labels", {})))
                if old and old.get("spec", {}).get("selector") != sel:
                    self.invalid(r, obj, "spec.selector", "Invalid value: %s: field is immutable" % json.dumps(sel))
            self.validate_pod_spec(r, obj, tmpl.get("spec", {}), "spec.template.spec")
        if r.kind == "Pod":
            self.validate_pod_spec(r, obj, spec, "spec")
        if r.kind == "Service":
            if spec.get("type", "ClusterIP") != "ExternalName" and not spec.get("ports") and spec.get("clusterIP") != "None":
                self.invalid(r, obj, "spec.ports", "Required value")
            if old and old.get("spec", {}).get("clusterIP") not in (None, spec.get("clusterIP")):
                self.invalid(r, obj, "spec.clusterIPs[0]", "Invalid value: %s: may not change once set" % json.dumps(spec.get("clusterIP")))
        if r.kind == "CustomResourceDefinition":
            names = spec.get("names", {})
            want = "%s.%s" % (names.get("plural"), spec.get("group"))
            if obj["metadata"]["name"] != want:
                self.invalid(r, obj, "metadata.name", 'Invalid value: "%s": must be spec.names.plural+"."+spec.group' % obj["metadata"]["name"])
            if not spec.get("versions"):
                self.invalid(r, obj, "spec.versions", "Invalid value: null: must have exactly one version marked as storage version")
        if r.kind in ("RoleBinding", "ClusterRoleBinding"):
            if not obj.get("roleRef"):
                self.invalid(r, obj, "roleRef.name", "Required value")
            if old and old.get("roleRef") != obj.get("roleRef"):
                self.invalid(r, obj, "roleRef", "Invalid value: cannot change roleRef")

    def validate_pod_spec(self, r, obj, ps, field):
        cs = ps.get("containers")
        if not cs:
            self.invalid(r, obj, field + ".containers", "Required value")
        for i, c in enumerate(cs):
            if not c.get("name"):
                self.invalid(r, obj, "%s.containers[%d].name" % (field, i), "Required value")
            if not c.get("image"):
                self.invalid(r, obj, "%s.containers[%d].image" % (field, i), "Required value")

    def defaults(self, r, obj, old):
        spec = obj.get("spec")
        meta = obj["metadata"]
        if r.kind == "Namespace":
            meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
            obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
            obj["status"] = {"phase": "Active"}
        elif r.kind == "Secret":
            obj.setdefault("type", "Opaque")
            sd = obj.pop("stringData", None)
            if sd:
                obj.setdefault("data", {})
                for k, v in sd.items():
                    obj["data"][k] = base64.b64encode(str(v).encode()).decode()
        elif r.kind == "Service":
            spec = obj.setdefault("spec", {})
            spec.setdefault("type", "ClusterIP")
            spec.setdefault("sessionAffinity", "None")
            ospec = (old or {}).get("spec", {})
            if "clusterIP" not in spec and ospec.get("clusterIP"):
                spec["clusterIP"] = ospec["clusterIP"]
            if "clusterIP" not in spec:
                spec["clusterIP"] = self.alloc_ip()
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
            if spec["clusterIP"] != "None":
                spec.setdefault("ipFamilies", ["IPv4"])
                spec.setdefault("ipFamilyPolicy", "SingleStack")
            for i, p in enumerate(spec.get("ports", [])):
                p.setdefault("protocol", "TCP")
                p.setdefault("targetPort", p.get("port"))
                if spec["type"] in ("NodePort", "LoadBalancer") and "nodePort" not in p:
                    prev = next((q for q in ospec.get("ports", []) if q.get("port") == p.get("port") and q.get("nodePort")), None)
                    p["nodePort"] = prev["nodePort"] if prev else self.alloc_port()
            if spec["type"] == "LoadBalancer":
                obj.setdefault("status", {"loadBalancer": {}})
        elif r.kind in ("Deployment", "StatefulSet", "ReplicaSet"):
            spec.setdefault("replicas", 1)
            spec.setdefault("revisionHistoryLimit", 10)
            if r.kind == "Deployment":
                spec.setdefault("strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
                spec.setdefault("progressDeadlineSeconds", 600)
            if r.kind == "StatefulSet":
                spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
                spec.setdefault("podManagementPolicy", "OrderedReady")
            self.pod_defaults(spec.get("template", {}).get("spec"))
        elif r.kind == "DaemonSet":
            spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
            spec.setdefault("revisionHistoryLimit", 10)
            self.pod_defaults(spec.get("template", {}).get("spec"))
        elif r.kind == "Job":
            spec.setdefault("completions", 1)
            spec.setdefault("parallelism", 1)
            spec.setdefault("backoffLimit", 6)
            self.pod_defaults(spec.get("template", {}).get("spec"), "Never")
        elif r.kind == "Pod":
            self.pod_defaults(spec)
        elif r.kind == "CustomResourceDefinition":
            names = spec.get("names", {})
            acc = dict(names)
            acc.setdefault("singular", names.get("kind", "").lower())
            acc.setdefault("listKind", names.get("kind", "") + "List")
            obj["status"] = {"acceptedNames": acc, "storedVersions": [v["name"] for v in spec.get("versions", []) if v.get("storage")],
                             "conditions": [{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                                             "message": "no conflicts found", "lastTransitionTime": now()},
                                            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                                             "message": "the initial names have been accepted", "lastTransitionTime": now()}]}
            if old and old.get("status", {}).get("conditions"):
                obj["status"]["conditions"] = old["status"]["conditions"]

    def pod_defaults(self, ps, restart="Always"):
        if not isinstance(ps, dict):
            return
        ps.setdefault("restartPolicy", restart)
        ps.setdefault("dnsPolicy", "ClusterFirst")
        ps.setdefault("schedulerName", "default-scheduler")
        ps.setdefault("terminationGracePeriodSeconds", 30)
        for c in ps.get("containers", []) + ps.get("initContainers", []):
            if isinstance(c, dict):
                img = str(c.get("image", ""))
                c.setdefault("imagePullPolicy", "Always" if img.endswith(":latest") or ":" not in img.split("/")[-1] else "IfNotPresent")
                c.setdefault("terminationMessagePath", "/dev/termination-log")
                c.setdefault("terminationMessagePolicy", "File")

    def first_ip(self):
        net = self.cfg.get("service_cidr", "10.96.0.0/12").split("/")[0].split(".")
        return "%s.%s.%s.%d" % (net[0], net[1], net[2], int(net[3]) + 1)

    def alloc_ip(self):
        net = self.cfg.get("service_cidr", "10.96.0.0/12").split("/")[0].split(".")
        n = self.side["next_ip"]
        self.side["next_ip"] += 1
        return "%s.%s.%d.%d" % (net[0], net[1], n // 250, n % 250 + 1)

    def alloc_port(self):
        p = self.side["next_port"]
        self.side["next_port"] += 1
        return p


# ----------------------------------------------------------------------------- controllers


def tolerates(tolerations, taint):
    for t in tolerations or []:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t.get("key") == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def node_fits(node, ps, daemon=False):
    labels = node["metadata"].get("labels", {})
    for k, v in (ps.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    aff = ps.get("affinity", {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = aff.get("nodeSelectorTerms")
    if terms:
        ok_any = False
        for t in terms:
            sel = selector_string({"matchExpressions": t.get("matchExpressions", [])})
            if match_labels(labels, sel):
                ok_any = True
        if not ok_any:
            return False
    for taint in node.get("spec", {}).get("taints", []) or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(ps.get("tolerations"), taint):
            if daemon and taint.get("key", "").startswith("node.kubernetes.io/"):
                continue
            return False
    return True


def node_kubelet_version(host):
    """The version the host's kubelet runs (set when it last started), None when unknown."""
    if not host:
        return None
    import tbfake
    try:
        return tbfake.load("systemd", host=host).get("kubelet", {}).get("version")
    except (OSError, ValueError):
        return None


def api_version(server):
    """The control plane's version: config.json's, which `kubeadm upgrade apply` moves."""
    path = server.cfg_dir + "/config.json"
    try:
        m = os.stat(path).st_mtime_ns
        if m != getattr(server, "version_mtime", None):
            with open(path) as f:
                server.version = json.load(f)["version"]
            server.version_mtime = m
    except (OSError, ValueError, KeyError):
        pass
    return server.version


def node_ready(node):
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in node.get("status", {}).get("conditions", []))


def gpu_request(ps):
    n = 0
    for c in ps.get("containers", []):
        res = c.get("resources", {})
        n += int(str(res.get("limits", {}).get("nvidia.com/gpu", res.get("requests", {}).get("nvidia.com/gpu", 0))))
    return n


def workload_available(o, plural):
    st, spec, meta = o.get("status", {}) or {}, o.get("spec", {}), o["metadata"]
    ready = st.get("availableReplicas" if plural == "deployments" else "readyReplicas", 0)
    return ready >= spec.get("replicas", 1) and st.get("observedGeneration") == meta.get("generation")


class EndpointHandler(BaseHTTPRequestHandler):
    """What HiveD answers once its pod runs (the testbed runs no images): HiveD's
    inspect API (GET /v1/inspect/...), from the HiveD double (pai_doubles.Hived:
    lib/scheduler's state of the ConfigMap's cells and of the pods HiveD binds).
    Without that double's program, GET /v1/inspect/clusterstatus alone, built here
    from the HiveD ConfigMap and the Nodes (every cell free). Knobs: `endpoint
    clusterstatus fail`, `endpoint affinitygroups fail` (503)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, code, doc):
        body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        ep, path = self.server.endpoint, urllib.parse.urlsplit(self.path).path
        if not path.startswith("/v1/inspect/"):
            return self.answer(404, "NotFound: %s" % path)
        what = path.split("/")[3]
        if ("endpoint", what) in ep.controllers.fail_knobs():
            return self.answer(503, "the testbed was told to fail %s" % path)
        hived = pai_doubles.hived_of(ep.store)
        if hived.available():
            code, body = hived.inspect(ep.ns, self.path)
            return self.answer(code, body)
        if path != "/v1/inspect/clusterstatus":
            return self.answer(503, "the testbed has no HiveD scheduler double (%s is missing: build the target "
                                    "hived_test_server, or scripts/testbed.sh up --hived-server PATH)" % hived.binary)
        with ep.store.lock:
            cm = ep.store.objects.get(("", "configmaps", ep.ns, "hivedscheduler-config"))
            nodes = {n["metadata"]["name"]: node_ready(n) for (g, p, _, _), n in ep.store.objects.items() if not g and p == "nodes"}
        try:
            cfg = yaml.safe_load((cm or {}).get("data", {}).get("hivedscheduler.yaml", "")) or {}
        except yaml.YAMLError:
            cfg = {}
        pc = cfg.get("physicalCluster") or {}
        types = pc.get("cellTypes") or {}

        def cell(c, addr, t=""):
            t = c.get("cellType") or t  # children take their parent's childCellType
            node = bool((types.get(t) or {}).get("isNodeLevel"))
            out = {"cellType": t, "cellAddress": addr, "cellState": "Free",
                   "cellHealthiness": "Healthy" if not node or nodes.get(addr.split("/")[-1]) else "Bad", "cellPriority": -2}
            if node:
                out["isNodeLevel"] = True
            child = (types.get(t) or {}).get("childCellType", "")
            kids = [cell(k, k.get("cellAddress") or "%s/%d" % (addr, i), child) for i, k in enumerate(c.get("cellChildren") or [])]
            if kids:
                out["cellChildren"] = kids
            return out

        phys = [cell(c, c.get("cellAddress") or str(i)) for i, c in enumerate(pc.get("physicalCells") or [])]
        return self.answer(200, {"physicalCluster": phys, "virtualClusters": {vc: [] for vc in (cfg.get("virtualClusters") or {})}})


class PylonHandler(pai_doubles.GatewayHandler):
    """The gateway once pylon's pod runs: OpenPAI's REST API v2 under /rest-server
    (pylon's route to the REST server, which must be available too: else 502) and
    GET /api/v2/info at its root, from the REST server double (pai_doubles), and
    GET /a/HOST:PORT/PATH passed on (pylon's route to HiveD and the other services).
    Knob: `endpoint info fail` (503 on the info paths)."""

    def _handle(self):
        ep, path = self.server.endpoint, urllib.parse.urlsplit(self.path).path
        info = path in ("/api/v2/info", "/rest-server/api/v2/info")
        if info and ("endpoint", "info") in ep.controllers.fail_knobs():
            self._body()
            return self._send(503, json.dumps("the testbed was told to fail %s" % path))
        with ep.store.lock:
            rest = ep.store.objects.get(("apps", "deployments", ep.ns, "rest-server"))
            up = bool(rest) and workload_available(rest, "deployments")
            tag = ep.workload["spec"]["template"]["spec"]["containers"][0]["image"].rsplit(":", 1)[-1]
        if not up:
            self._body()
            return self._send(502, json.dumps("Bad Gateway: rest-server does not answer"))
        self.server.state.version = tag
        proxied = re.match(r"^/a/([A-Za-z0-9.-]+):(\d+)(/.*)$", self.path)
        if proxied:
            return self.proxy(*proxied.groups())
        if path == "/api/v2/info":
            self._body()
            return self._send(200, {"name": "PAI RESTful API", "version": tag, "launcherType": "k8s", "authnMethod": "basic"})
        return super()._handle()

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

    def proxy(self, host, port, rest):
        """pylon's /a/HOST:PORT/PATH: a GET passed on to http://HOST:PORT/PATH (how
        clients reach HiveD's inspect API behind the gateway), its answer as it came."""
        self._body()
        if self.command != "GET":
            return self._send(405, json.dumps("the testbed's pylon passes GET on to /a/HOST:PORT/ only"))
        try:
            with urllib.request.urlopen("http://%s:%s%s" % (host, port, rest), timeout=30) as r:
                code, body, ctype = r.status, r.read(), r.headers.get("Content-Type", "application/json")
        except urllib.error.HTTPError as e:
            code, body, ctype = e.code, e.read(), e.headers.get("Content-Type", "application/json")
        except (OSError, ValueError) as e:
            return self._send(502, json.dumps("Bad Gateway: %s:%s: %s" % (host, port, e)))
        return self._send(code, body, ctype)


class NoDelayServer(ThreadingHTTPServer):
    """Answers without waiting on Nagle's algorithm, as kube-apiserver (Go's
    net/http) does: a response's headers and body are two writes, and with Nagle
    the second waits for the client's delayed ACK of the first, 40 ms a request."""

    def get_request(self):
        sock, addr = super().get_request()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock, addr


class Endpoint:
    """One server for a workload's host port, while the workload is available."""

    def __init__(self, store, controllers, kind, ns, workload, port):
        self.store, self.controllers, self.kind, self.ns, self.workload = store, controllers, kind, ns, workload
        self.srv = NoDelayServer((store.cfg["address"], port), PylonHandler if kind == "pylon" else EndpointHandler)
        self.srv.daemon_threads = True
        self.srv.endpoint = self
        if kind == "pylon":  # what the REST server double reads from its server
            self.srv.state = pai_doubles.gateway_of(store, ns).state
            self.srv.prefix, self.srv.latency, self.srv.tls = "/rest-server", 0, False
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


ENDPOINT_WORKLOADS = {("deployments", "pylon"): "pylon", ("statefulsets", "hivedscheduler-hs"): "hived"}


class Controllers(threading.Thread):
    def __init__(self, store):
        super().__init__(daemon=True)
        self.s = store
        self.delay = float(store.cfg.get("rollout_delay", 0.5))
        self.endpoints = {}  # (plural, ns, name, port) -> Endpoint
        self.pending = False  # a workload waits out its rollout delay: tick again

    def fail_knobs(self):
        try:
            with open(self.s.dir + "/../../knobs") as f:
                return {tuple(l.split()[:2]) for l in f if len(l.split()) == 3 and l.split()[2] == "fail"}
        except FileNotFoundError:
            return set()

    def sync_endpoints(self):
        """The gateway and HiveD listen on the master's network while their workloads are available."""
        want = {}
        for (g, plural, ns, name), o in self.s.objects.items():
            kind = ENDPOINT_WORKLOADS.get((plural, name))
            if g != "apps" or not kind or not workload_available(o, plural):
                continue
            ps = o.get("spec", {}).get("template", {}).get("spec", {})
            for c in ps.get("containers", []):
                for port in c.get("ports", []):
                    p = port.get("hostPort") or (port.get("containerPort") if ps.get("hostNetwork") else None)
                    if p:
                        want[(plural, ns, name, int(p))] = (kind, o)
        for k in [k for k in self.endpoints if k not in want]:
            self.endpoints.pop(k).stop()
        for k, (kind, o) in want.items():
            if k in self.endpoints:
                self.endpoints[k].workload = o
                continue
            try:
                self.endpoints[k] = Endpoint(self.s, self, kind, k[1], o, k[3])
            except OSError as e:
                sys.stderr.write("endpoint %s on port %d: %s\n" % (k[2], k[3], e))

    def hived_pods(self):
        """While HiveD's double runs: it binds the pods that wait for it, and the
        pods it bound succeed when their time is up (pai_doubles)."""
        ns = next((k[1] for k, e in self.endpoints.items() if e.kind == "hived"), None)
        hived = pai_doubles.hived_of(self.s)
        if ns is None or not hived.available() or not hived.busy():
            return
        hived.sync(ns)
        if hived.busy():
            self.pending = True  # tick again: a pod's time will be up

    def fingerprint(self):
        """What a tick reads besides the store: the knobs and, per node's host, its
        state directory (each fake's state file is renamed into it) and the kubelet's
        two files. With the store's resourceVersion, a tick that would find all of
        them as the last one left them has nothing to do (no pod, node or status
        changes) and is skipped: the controllers cost CPU only when something moved,
        as kube-controller-manager's watches do, not 0.1 s of it every 0.15 s."""
        import tbfake
        parts = []
        paths = [self.s.dir + "/../../knobs"]
        for _, host in sorted(self.s.side["node_hosts"].items()):
            paths += [host + "/state", tbfake.hp("/etc/kubernetes/kubelet.conf", host),
                      tbfake.hp("/var/lib/kubelet/config.yaml", host)]
        for p in paths:
            try:
                st = os.stat(p)
                parts.append((st.st_mtime_ns, st.st_ino, st.st_size))
            except OSError:
                parts.append(None)
        return tuple(parts)

    def leader(self):
        """With several masters the controllers run in one API server at a time, as
        kube-controller-manager's leader election has it: the one holding an flock on
        RUNDIR/controllers-leader.lock (dropped when its process ends: a lost master's
        leadership passes to another within a loop's sleep)."""
        if not self.s.shared:
            return True
        if getattr(self, "leader_fd", None) is not None:
            return True
        import fcntl
        fd = os.open(os.path.join(self.s.cfg["run"], "controllers-leader.lock"), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self.leader_fd = fd
        sys.stderr.write("controllers: this API server leads\n")
        return True

    def run(self):
        last = None
        next_check = time.time() + 2
        while True:
            if not self.leader():
                # Not the leader: only what the other masters wrote is read (watches see it).
                try:
                    with self.s.lock:
                        if self.s.unstored:
                            self.s.persist()
                except Exception as e:  # noqa: BLE001
                    sys.stderr.write("etcd sync error: %r\n" % e)
                time.sleep(0.15)
                continue
            try:
                with self.s.lock:
                    files, rv = self.fingerprint(), self.s.rv
                    if self.pending or last != (files, rv):
                        self.pending = False
                        self.s.deferred = False
                        try:
                            self.tick()
                        finally:
                            dirty, self.s.deferred = self.s.deferred, None
                            if dirty:
                                self.s.persist()
                        # The store's version after the tick's own writes; the files as
                        # they were before it, so that one changed meanwhile is seen.
                        last = (files, self.s.rv)
                    if self.s.etcd is not None:
                        if self.s.unstored:
                            self.s.persist()
                        elif time.time() >= next_check and not self.s.shared:
                            self.s.check_etcd()
                            next_check = time.time() + 2
            except Exception as e:  # a bug in a controller must not kill the server
                sys.stderr.write("controller error: %r\n" % e)
                last = None
            time.sleep(0.15)

    def knobs(self):
        try:
            with open(self.s.dir + "/../../knobs") as f:
                return {l.split()[1] for l in f if len(l.split()) == 2 and l.split()[0] == "unavailable"}
        except FileNotFoundError:
            return set()

    def res(self, g, p):
        return self.s.resources[(g, p)]

    def tick(self):
        s = self.s
        with s.lock:
            self.nodes()
            unavailable = self.knobs()
            pods_wanted = {}
            for (g, plural, ns, name), o in list(s.objects.items()):
                if g in ("apps", "batch") and plural in WORKLOADS:
                    self.workload(plural, ns, name, o, pods_wanted, "%s/%s" % (ns, name) in unavailable)
            # Pods of workloads: create the missing, delete the stale.
            for (g, plural, ns, name), o in list(s.objects.items()):
                if plural == "pods" and not g and o["metadata"].get("labels", {}).get("testbed.paictl/owner"):
                    if (ns, name) not in pods_wanted:
                        s.delete(self.res("", "pods"), ns, name)
            self.sync_endpoints()
            self.hived_pods()
            for (ns, name), pod in pods_wanted.items():
                ev = pod.pop("_event", None)
                k = ("", "pods", ns, name)
                cur = s.objects.get(k)
                if cur is None:
                    s.create(self.res("", "pods"), ns, copy.deepcopy(pod), "kube-controller-manager")
                    cur = s.objects.get(k)
                if cur["spec"].get("nodeName") != pod["spec"].get("nodeName"):
                    new = copy.deepcopy(cur)
                    new["spec"]["nodeName"] = pod["spec"].get("nodeName")
                    s.update(self.res("", "pods"), ns, name, new, "kube-scheduler", check_rv=False, op="Controller")
                    cur = s.objects[k]
                if cur.get("status") != pod["status"]:
                    st = copy.deepcopy(cur)
                    st["status"] = pod["status"]
                    s.update(self.res("", "pods"), ns, name, st, "kubelet", subresource="status", check_rv=False, op="Controller")
                if ev:
                    self.event(ns, name, "Pod", *ev)

    def event(self, ns, name, kind, reason, message, etype="Warning"):
        s = self.s
        ename = "%s.%s" % (name, short_hash(reason + message, 8))
        k = ("", "events", ns, ename)
        if k in s.objects:
            return
        s.create(self.res("", "events"), ns, {"apiVersion": "v1", "kind": "Event", "metadata": {"name": ename, "namespace": ns},
                                               "involvedObject": {"kind": kind, "namespace": ns, "name": name, "apiVersion": "v1"},
                                               "reason": reason, "message": message, "type": etype, "count": 1,
                                               "firstTimestamp": now(), "lastTimestamp": now(),
                                               "source": {"component": "kubelet"}}, "kubelet")

    def nodes(self):
        s = self.s
        ds_plugin = [o for (g, p, ns, n), o in s.objects.items()
                     if g == "apps" and p == "daemonsets" and ("nvidia-device-plugin" in n or any(
                         "k8s-device-plugin" in str(c.get("image", "")) for c in o.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])))]
        for (g, p, ns, name), node in list(s.objects.items()):
            if g or p != "nodes":
                continue
            host = s.side["node_hosts"].get(name)
            ready, reason, msg = True, "KubeletReady", "kubelet is posting ready status"
            gpus = 0
            if host:
                import tbfake
                try:
                    sd = tbfake.load("systemd", host=host)
                    c = tbfake.load("containerd", host=host).get("running") or {}
                    kubelet_ok = tbfake.unit_state("kubelet", sd.get("kubelet", {}), host) == "active" and \
                        os.path.exists(tbfake.hp("/etc/kubernetes/kubelet.conf", host)) and \
                        not os.path.exists(host + "/state/lost")  # testbed.sh stop-host
                    cri_ok = sd.get("containerd", {}).get("state") == "active" and c.get("cri")
                    if not kubelet_ok:
                        ready, reason, msg = False, "NodeStatusUnknown", "Kubelet stopped posting node status."
                    elif not cri_ok:
                        ready, reason, msg = False, "KubeletNotReady", "container runtime is down"
                    info = tbfake.host_info(host)
                    pkgs = tbfake.load("dpkg", host=host)
                    if info.get("gpus") and ready and c.get("default_runtime") == "nvidia" and "nvidia-container-toolkit" in pkgs:
                        for ds in ds_plugin:
                            if node_fits(node, ds["spec"]["template"].get("spec", {}), daemon=True):
                                gpus = info["gpus"]
                except (OSError, ValueError):
                    ready, reason, msg = False, "NodeStatusUnknown", "Kubelet stopped posting node status."
            st = copy.deepcopy(node.get("status", {}))
            cond = {"type": "Ready", "status": "True" if ready else "Unknown" if reason == "NodeStatusUnknown" else "False",
                    "reason": reason, "message": msg}
            old = next((c for c in st.get("conditions", []) if c["type"] == "Ready"), None)
            if old and all(old.get(k) == cond[k] for k in cond):
                cond = old
            else:
                cond["lastTransitionTime"] = now()
                cond["lastHeartbeatTime"] = now()
            st["conditions"] = [cond]
            running = node_kubelet_version(host)
            if running:
                st.setdefault("nodeInfo", {})["kubeletVersion"] = "v" + running
            for f in ("capacity", "allocatable"):
                st.setdefault(f, {})
                if gpus:
                    st[f]["nvidia.com/gpu"] = str(gpus)
                else:
                    st[f].pop("nvidia.com/gpu", None)
            if st != node.get("status"):
                new = copy.deepcopy(node)
                new["status"] = st
                s.update(self.res("", "nodes"), "", name, new, "kubelet", subresource="status", check_rv=False, op="Controller")

    def workload(self, plural, ns, name, o, pods_wanted, broken):
        s = self.s
        r = self.res("apps" if plural != "jobs" else "batch", plural)
        spec = o.get("spec", {})
        tmpl = spec.get("template", {})
        ps = tmpl.get("spec", {})
        k = (r.group, plural, ns, name)
        settled = time.time() - s.changed.get(k, 0) >= self.delay
        if not settled:
            self.pending = True
        thash = short_hash(json.dumps(tmpl, sort_keys=True), 10)
        nodes = [n for (g, p, _, _), n in s.objects.items() if not g and p == "nodes"]
        used_gpu = {}
        for (g, p, _, _), pod in s.objects.items():
            if not g and p == "pods" and pod["spec"].get("nodeName"):
                used_gpu[pod["spec"]["nodeName"]] = used_gpu.get(pod["spec"]["nodeName"], 0) + gpu_request(pod["spec"])
        want = []
        if plural == "daemonsets":
            for n in sorted(nodes, key=lambda n: n["metadata"]["name"]):
                if node_fits(n, ps, daemon=True):
                    want.append(("%s-%s" % (name, short_hash(n["metadata"]["name"], 5)), n))
        else:
            count = spec.get("replicas", 1) if plural != "jobs" else spec.get("parallelism", 1)
            fit = [n for n in sorted(nodes, key=lambda n: n["metadata"]["name"]) if node_ready(n) and node_fits(n, ps)]
            for i in range(count):
                pname = "%s-%d" % (name, i) if plural == "statefulsets" else "%s-%s-%s" % (name, thash, short_hash("%s/%d" % (name, i), 5))
                node = None
                g = gpu_request(ps)
                for j in range(len(fit)):
                    cand = fit[(i + j) % len(fit)]
                    alloc = int(cand.get("status", {}).get("allocatable", {}).get("nvidia.com/gpu", "0"))
                    if used_gpu.get(cand["metadata"]["name"], 0) + g <= alloc or g == 0:
                        node = cand
                        used_gpu[cand["metadata"]["name"]] = used_gpu.get(cand["metadata"]["name"], 0) + g
                        break
                want.append((pname, node))
        ready = 0
        for pname, node in want:
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": pname, "namespace": ns, "labels": dict(tmpl.get("metadata", {}).get("labels", {}), **{"testbed.paictl/owner": plural + "." + name}),
                                "annotations": tmpl.get("metadata", {}).get("annotations", {}),
                                "ownerReferences": [{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": name,
                                                     "uid": o["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]},
                   "spec": copy.deepcopy(ps)}
            containers = [c.get("name", "c") for c in ps.get("containers", [])]
            if node is None:
                pod["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                                                     "message": "0/%d nodes are available: no node matches the pod's node selector, tolerations and resources." % len(nodes)}]}
                pod["_event"] = ("FailedScheduling", "0/%d nodes are available: no node matches the pod's node selector, tolerations and resources." % len(nodes))
            else:
                pod["spec"]["nodeName"] = node["metadata"]["name"]
                ip = next((a["address"] for a in node.get("status", {}).get("addresses", []) if a["type"] == "InternalIP"), "")
                h = int(hashlib.sha256(pname.encode()).hexdigest()[:4], 16)
                good = settled and node_ready(node) and not broken
                pod["status"] = {"phase": "Succeeded" if plural == "jobs" and good else "Running" if good or broken else "Pending",
                                 "hostIP": ip, "podIP": "10.244.%d.%d" % (h // 250 % 250, h % 250 + 2),
                                 "conditions": [{"type": t, "status": "True" if (good or t == "PodScheduled") else "False"}
                                                for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
                                 "containerStatuses": [{"name": c, "ready": good, "restartCount": 3 if broken else 0, "image": "",
                                                        "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed container=%s pod=%s" % (c, pname)}}
                                                        if broken else {"running": {}} if good else {"waiting": {"reason": "ContainerCreating"}}}
                                                       for c in containers]}
                if broken:
                    pod["_event"] = ("BackOff", "Back-off restarting failed container %s in pod %s_%s" % (containers[0] if containers else "", pname, ns))
                if good:
                    ready += 1
            pods_wanted[(ns, pname)] = pod
        gen = o["metadata"].get("generation", 1)
        n = len(want)
        if plural == "deployments":
            st = {"observedGeneration": gen, "replicas": n, "updatedReplicas": n, "readyReplicas": ready, "availableReplicas": ready,
                  "unavailableReplicas": n - ready,
                  "conditions": [{"type": "Available", "status": "True" if ready >= n else "False",
                                  "reason": "MinimumReplicasAvailable" if ready >= n else "MinimumReplicasUnavailable"},
                                 {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable" if ready >= n else "ReplicaSetUpdated"}]}
            if not ready:
                st.pop("readyReplicas")
                st.pop("availableReplicas")
            if ready == n:
                st.pop("unavailableReplicas")
        elif plural == "daemonsets":
            st = {"observedGeneration": gen, "desiredNumberScheduled": n, "currentNumberScheduled": n, "updatedNumberScheduled": n,
                  "numberReady": ready, "numberAvailable": ready, "numberMisscheduled": 0}
            if n - ready:
                st["numberUnavailable"] = n - ready
            if not ready:
                st.pop("numberAvailable")
        elif plural == "statefulsets":
            st = {"observedGeneration": gen, "replicas": n, "readyReplicas": ready, "currentReplicas": n, "updatedReplicas": n,
                  "availableReplicas": ready, "currentRevision": "%s-%s" % (name, thash), "updateRevision": "%s-%s" % (name, thash),
                  "collisionCount": 0}
        else:
            done = ready >= spec.get("completions", 1)
            st = {"succeeded": ready} if ready else {"active": n}
            if done:
                st["conditions"] = [{"type": "Complete", "status": "True"}]
        if not settled:
            st = dict(o.get("status", {}), observedGeneration=o.get("status", {}).get("observedGeneration", 0))
            if st == o.get("status", {}) and not st:
                return
        if st != o.get("status"):
            new = copy.deepcopy(o)
            new["status"] = st
            s.update(r, ns, name, new, "kube-controller-manager", subresource="status", check_rv=False, op="Controller")
            if broken:
                self.event(ns, name, o["kind"], "Unavailable", "%s %s/%s has pods in CrashLoopBackOff" % (o["kind"], ns, name))


# ----------------------------------------------------------------------------- HTTP


def openapi_v2_protobuf(version):
    """A gnostic openapi_v2.Document with swagger and info only (fields 1 and 2)."""
    def field(num, payload):
        b = payload.encode() if isinstance(payload, str) else payload
        return bytes([num << 3 | 2]) + varint(len(b)) + b

    def varint(n):
        out = b""
        while True:
            byte = n & 0x7F
            n >>= 7
            if n:
                out += bytes([byte | 0x80])
            else:
                return out + bytes([byte])
    info = field(1, "Kubernetes") + field(2, version)
    return field(1, "2.0") + field(2, info)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "testbed-kube-apiserver"

    def log_message(self, fmt, *args):
        if os.environ.get("TESTBED_APISERVER_LOG"):
            sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))

    @property
    def store(self):
        return self.server.store

    def send_json(self, code, obj, headers=None):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_text(self, code, text, ctype="text/plain; charset=utf-8"):
        body = text if isinstance(text, bytes) else text.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def user(self):
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            tok = auth[7:].strip()
            if tok == self.server.admin_token:
                return ("admin", None)
            for node, t in self.store.side["node_tokens"].items():
                if t == tok:
                    return ("node", node)
            m = re.match(r"^([a-z0-9]{6})\.([a-z0-9]{16})$", tok)
            if m:
                sec = self.store.objects.get(("", "secrets", "kube-system", "bootstrap-token-" + m.group(1)))
                if sec:
                    d = {k: base64.b64decode(v).decode() for k, v in sec.get("data", {}).items()}
                    exp = d.get("expiration")
                    expired = exp and time.mktime(time.strptime(exp, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone < time.time()
                    if d.get("token-secret") == m.group(2) and d.get("usage-bootstrap-authentication") == "true" and not expired:
                        return ("bootstrap", m.group(1))
            raise ApiError(401, "Unauthorized", "Unauthorized")
        cert = self.connection.getpeercert() if hasattr(self.connection, "getpeercert") else None
        if cert:
            return ("admin", None)
        return ("anonymous", None)

    def authorize(self, who, method, r, ns, name):
        kind, ident = who
        if kind == "admin":
            return
        if kind == "anonymous" and method == "GET" and r and r.plural == "configmaps" and ns == "kube-public" and name == "cluster-info":
            return
        if kind == "bootstrap" and r and ((r.plural == "nodes" and method in ("POST", "GET", "PUT")) or
                                          (r.plural == "configmaps" and ns == "kube-system" and method == "GET") or
                                          # kubeadm's Role for its bootstrap tokens: a joining master
                                          # downloads the uploaded certificates
                                          (r.plural == "secrets" and ns == "kube-system" and name == "kubeadm-certs"
                                           and method == "GET")):
            return
        if kind == "node" and r and r.plural == "nodes" and name == ident:
            return
        if kind == "node" and r and method == "GET":
            return
        user = {"anonymous": "system:anonymous", "bootstrap": "system:bootstrap:%s" % ident, "node": "system:node:%s" % ident}[kind]
        what = r.qualified() if r else "path"
        raise ApiError(403, "Forbidden", '%s%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s"%s' % (
            what, ' "%s"' % name if name else "", user, {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method, method.lower()),
            r.plural if r else "", r.group if r else "", ' in the namespace "%s"' % ns if ns else ""))

    def do_GET(self):
        self.dispatch("GET")

    def do_HEAD(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def injected_failure(self, method, plural):
        """A knob `apiserver METHOD:PLURAL fail-once` (or `fail`) in the master's knobs fails that write with a 500."""
        path = self.store.dir + "/../../knobs"
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return False
        want = "%s:%s" % (method, plural)
        for i, line in enumerate(lines):
            parts = line.split()
            if len(parts) == 3 and parts[0] == "apiserver" and parts[1] == want and parts[2] in ("fail", "fail-once"):
                if parts[2] == "fail-once":
                    with open(path + ".tmp", "w") as f:
                        f.write("".join(l + "\n" for j, l in enumerate(lines) if j != i))
                    os.rename(path + ".tmp", path)
                return True
        return False

    def body(self):
        n = int(self.headers.get("Content-Length", "0") or 0)
        data = self.rfile.read(n) if n else b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        return data

    def parse(self, data, ctype):
        try:
            if "yaml" in ctype:
                return yaml.safe_load(data.decode())
            return json.loads(data.decode() or "null")
        except (ValueError, yaml.YAMLError) as e:
            raise ApiError(400, "BadRequest", "the body of the request was in an unknown format: %s" % e)

    def dispatch(self, method):
        # With several masters, a request is served under the masters' lock, on what etcd
        # holds (ClusterLock); a watch only for its start (later changes come as events).
        s = self.store
        if s.shared:
            url = urllib.parse.urlsplit(self.path)
            path = url.path.rstrip("/")
            watch = urllib.parse.parse_qs(url.query).get("watch", [""])[-1] in ("1", "true")
            if not watch and path not in ("/healthz", "/readyz", "/livez", "/version"):
                with s.lock:
                    return self.dispatch_request(method)
        return self.dispatch_request(method)

    def dispatch_request(self, method):
        url = urllib.parse.urlsplit(self.path)
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        path = url.path.rstrip("/") or "/"
        try:
            data = self.body() if method in ("POST", "PUT", "PATCH", "DELETE") else b""
            if path in ("/healthz", "/readyz", "/livez") or path.startswith(("/healthz/", "/readyz/", "/livez/")):
                return self.send_text(200, "ok")
            if path == "/version":
                v = api_version(self.server)
                m = re.match(r"v(\d+)\.(\d+)", v)
                return self.send_json(200, {"major": m.group(1), "minor": m.group(2), "gitVersion": v, "gitCommit": "testbed",
                                            "gitTreeState": "clean", "buildDate": "2024-01-01T00:00:00Z", "goVersion": "go1.22.0",
                                            "compiler": "gc", "platform": "linux/amd64"})
            who = self.user()
            if path == "/openapi/v2":
                body = openapi_v2_protobuf(self.server.version)
                if "protobuf" in self.headers.get("Accept", ""):
                    return self.send_text(200, body, "application/octet-stream")
                return self.send_json(200, {"swagger": "2.0", "info": {"title": "Kubernetes", "version": self.server.version}, "paths": {}})
            if path == "/api":
                return self.send_json(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": "%s:%d" % (self.server.cfg["address"], self.server.cfg["port"])}]})
            if path == "/apis":
                return self.send_json(200, self.groups())
            parts = path.strip("/").split("/")
            if parts[0] == "api" and len(parts) >= 2:
                group, version, rest = "", parts[1], parts[2:]
            elif parts[0] == "apis" and len(parts) >= 3:
                group, version, rest = parts[1], parts[2], parts[3:]
            elif parts[0] == "apis" and len(parts) == 2:
                g = next((g for g in self.groups()["groups"] if g["name"] == parts[1]), None)
                if not g:
                    raise ApiError(404, "NotFound", "the server could not find the requested resource")
                return self.send_json(200, dict(g, kind="APIGroup", apiVersion="v1"))
            else:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            if not rest:
                return self.send_json(200, self.resource_list(group, version))
            ns = None
            if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in ("status", "finalize"):
                ns, rest = rest[1], rest[2:]
            plural, name, sub = rest[0], rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None
            r = self.store.find(group, version, plural)
            if r is None or len(rest) > 3:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            if r.namespaced and name is not None and ns is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            if not r.namespaced:
                ns = None
            self.authorize(who, method, r, ns, name)
            if method != "GET" and self.injected_failure(method, plural):
                raise ApiError(500, "InternalError", "testbed: injected failure at %s %s" % (method, plural))
            return self.resource(method, r, ns, name, sub, q, data, who)
        except ApiError as e:
            return self.send_json(e.code, e.status())
        except (BrokenPipeError, ConnectionResetError):
            return
        except Exception as e:
            import traceback
            traceback.print_exc()
            return self.send_json(500, ApiError(500, "InternalError", "testbed API server: %r" % e).status())

    def groups(self):
        by = {}
        for r in self.store.resources.values():
            if r.group:
                by.setdefault(r.group, [])
                for v in getattr(r, "versions", [r.version]):
                    if v not in by[r.group]:
                        by[r.group].append(v)
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": g, "versions": [{"groupVersion": "%s/%s" % (g, v), "version": v} for v in vs],
             "preferredVersion": {"groupVersion": "%s/%s" % (g, vs[0]), "version": vs[0]}} for g, vs in sorted(by.items())]}

    def resource_list(self, group, version):
        rs = [r for r in self.store.resources.values() if r.group == group and version in getattr(r, "versions", [r.version])]
        if not rs:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        res = []
        for r in sorted(rs, key=lambda r: r.plural):
            e = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind, "verbs": VERBS}
            if r.short:
                e["shortNames"] = r.short
            res.append(e)
            if r.has_status:
                res.append({"name": r.plural + "/status", "singularName": "", "namespaced": r.namespaced, "kind": r.kind,
                            "verbs": ["get", "patch", "update"]})
            if r.plural == "pods":
                res.append({"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]})
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "%s/%s" % (group, version) if group else version, "resources": res}

    def manager(self, q, default):
        if q.get("fieldManager"):
            return q["fieldManager"]
        ua = self.headers.get("User-Agent", "")
        return ua.split("/")[0] if ua else default

    def resource(self, method, r, ns, name, sub, q, data, who):
        s = self.store
        dry = q.get("dryRun") == "All"
        if sub not in (None, "status", "log"):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if sub == "status" and not r.has_status:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if method == "GET" and sub == "log":
            return self.send_text(200, "testbed: the fake kubelet keeps no container logs for %s/%s\n" % (ns, name))
        if method == "GET" and name is None:
            if q.get("watch") in ("1", "true"):
                return self.watch(r, ns, q)
            # As kube-apiserver lists them: the items without their kind and
            # apiVersion (the list's say them; kubectl fills them in).
            lst = self.list(r, ns, q)
            lst["items"] = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in lst["items"]]
            return self.send_json(200, lst)
        if method == "GET":
            o = s.objects.get(s.key(r, ns, name))
            if o is None:
                raise ApiError(404, "NotFound", '%s "%s" not found' % (r.qualified(), name), {"name": name, "group": r.group, "kind": r.plural})
            return self.send_json(200, o)
        ctype = self.headers.get("Content-Type", "application/json").split(";")[0].strip()
        if method == "POST":
            if name is not None:
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
            obj = self.parse(data, ctype)
            if not isinstance(obj, dict):
                raise ApiError(400, "BadRequest", "the object is not a JSON object")
            if r.plural == "nodes" and who[0] in ("bootstrap", "admin") and self.headers.get("X-Testbed-Host"):
                return self.join_node(obj, who)
            created = s.create(r, ns, obj, self.manager(q, "unknown"), dry=dry)
            return self.send_json(201, created)
        if method == "PUT":
            obj = self.parse(data, ctype)
            if not isinstance(obj, dict):
                raise ApiError(400, "BadRequest", "the object is not a JSON object")
            return self.send_json(200, s.update(r, ns, name, obj, self.manager(q, "unknown"), subresource=sub, dry=dry))
        if method == "PATCH":
            patch = self.parse(data, ctype)
            if ctype == "application/apply-patch+yaml":
                if not q.get("fieldManager"):
                    raise ApiError(400, "BadRequest", "PATCH %s: fieldManager is required for apply requests" % self.path)
                if sub:
                    raise ApiError(400, "BadRequest", "the testbed API server applies to the main resource only")
                return self.send_json(200, s.apply(r, ns, name, patch, q["fieldManager"], q.get("force") == "true", dry=dry))
            with s.lock:
                o = s.objects.get(s.key(r, ns, name))
                if o is None:
                    raise ApiError(404, "NotFound", '%s "%s" not found' % (r.qualified(), name), {"name": name, "group": r.group, "kind": r.plural})
                if ctype == "application/json-patch+json":
                    new = json_patch(o, patch)
                elif ctype == "application/merge-patch+json":
                    new = json_merge(o, patch)
                elif ctype == "application/strategic-merge-patch+json":
                    if r.crd:
                        raise ApiError(415, "UnsupportedMediaType", "strategic merge patch is not supported for custom resources")
                    new = strategic_merge(o, patch)
                else:
                    raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
                rv_in_patch = isinstance(patch, dict) and patch.get("metadata", {}).get("resourceVersion")
                return self.send_json(200, s.update(r, ns, name, new, self.manager(q, "unknown"), subresource=sub, dry=dry, check_rv=bool(rv_in_patch)))
        if method == "DELETE":
            if name is None:
                items = self.list(r, ns, q)["items"]
                for o in items:
                    s.delete(r, o["metadata"].get("namespace"), o["metadata"]["name"], dry=dry)
                return self.send_json(200, {"kind": r.kind + "List", "apiVersion": r.gv, "metadata": {}, "items": items})
            old = s.delete(r, ns, name, dry=dry)
            return self.send_json(200, old)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def join_node(self, obj, who):
        """A kubelet registering: the bootstrap token's holder creates its Node (kubeadm join)."""
        s = self.store
        r = s.resources[("", "nodes")]
        name = obj.get("metadata", {}).get("name")
        host = self.headers["X-Testbed-Host"]
        with s.lock:
            cur = s.objects.get(("", "nodes", "", name))
            if cur is not None and who[0] == "bootstrap":
                if node_ready(cur) and s.side["node_hosts"].get(name) != host:
                    raise ApiError(409, "AlreadyExists", 'a Node with name "%s" and status "Ready" already exists' % name)
                if node_ready(cur) and os.path.exists(host + "/fs/etc/kubernetes/kubelet.conf"):
                    raise ApiError(409, "AlreadyExists", 'a Node with name "%s" and status "Ready" already exists' % name)
            s.side["node_hosts"][name] = host
            token = base64.b32encode(os.urandom(20)).decode().lower().rstrip("=")
            s.side["node_tokens"][name] = token
            status = obj.pop("status", {})
            if cur is None:
                created = s.create(r, None, obj, "kubelet")
            else:
                new = copy.deepcopy(cur)
                new["metadata"]["labels"] = dict(cur["metadata"].get("labels", {}), **obj["metadata"].get("labels", {}))
                created = s.update(r, None, name, new, "kubelet", check_rv=False)
            st = copy.deepcopy(s.objects[("", "nodes", "", name)])
            keep = st.get("status", {})
            st["status"] = dict(status, conditions=keep.get("conditions", []))
            for f in ("capacity", "allocatable"):
                if "nvidia.com/gpu" in keep.get(f, {}):
                    st["status"][f]["nvidia.com/gpu"] = keep[f]["nvidia.com/gpu"]
            created = s.update(r, None, name, st, "kubelet", subresource="status", check_rv=False, op="Controller")
            s.persist()
        return self.send_json(201, created, {"X-Testbed-Node-Token": token})

    def list(self, r, ns, q):
        s = self.store
        items = []
        with s.lock:
            for (g, p, ons, name), o in sorted(s.objects.items()):
                if (g, p) != (r.group, r.plural):
                    continue
                if ns and ons != ns:
                    continue
                if not match_labels(o["metadata"].get("labels"), q.get("labelSelector", "")):
                    continue
                if not match_fields(o, q.get("fieldSelector", "")):
                    continue
                items.append(o)
            return {"kind": r.kind + "List", "apiVersion": r.gv, "metadata": {"resourceVersion": str(s.rv)}, "items": items}

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def watch(self, r, ns, q):
        s = self.store
        timeout = float(q.get("timeoutSeconds", "1800") or 1800)
        deadline = time.time() + min(timeout, 3600)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def wanted(o):
            if ns and o["metadata"].get("namespace") != ns:
                return False
            return match_labels(o["metadata"].get("labels"), q.get("labelSelector", "")) and match_fields(o, q.get("fieldSelector", ""))

        rv = q.get("resourceVersion", "")
        with s.lock:
            if rv in ("", "0"):
                for o in self.list(r, ns, q)["items"]:
                    self.chunk((json.dumps({"type": "ADDED", "object": o}) + "\n").encode())
                since = s.rv
            else:
                since = int(rv)
        try:
            while time.time() < deadline:
                with s.lock:
                    evs = [e for e in s.events if e[0] > since and e[2] == (r.group, r.plural)]
                    if not evs:
                        s.cond.wait(timeout=min(1.0, max(deadline - time.time(), 0.01)))
                        evs = [e for e in s.events if e[0] > since and e[2] == (r.group, r.plural)]
                    since = max([since] + [e[0] for e in s.events])
                for _, kind, _, o in evs:
                    if wanted(o):
                        self.chunk((json.dumps({"type": kind, "object": o}) + "\n").encode())
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass
        self.close_connection = True


class Server(NoDelayServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    # kube-apiserver's flags for its etcd (the static pod manifest's): without
    # them, the objects are kept in DIR/objects.json.
    ap.add_argument("--etcd-servers")
    ap.add_argument("--etcd-cafile")
    ap.add_argument("--etcd-certfile")
    ap.add_argument("--etcd-keyfile")
    a = ap.parse_args()
    with open(a.dir + "/config.json") as f:
        cfg = json.load(f)
    if a.etcd_servers:
        cfg["etcd"] = (a.etcd_servers.split(",")[0], a.etcd_cafile, a.etcd_certfile, a.etcd_keyfile)
    store = Store(a.dir, cfg)
    srv = Server((cfg["address"], cfg["port"]), Handler)
    srv.store, srv.cfg, srv.version = store, cfg, cfg["version"]
    srv.cfg_dir = a.dir
    with open(a.dir + "/admin-token") as f:
        srv.admin_token = f.read().strip()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cfg["cert"], cfg["key"])
    ctx.load_verify_locations(cfg["ca"])
    ctx.verify_mode = ssl.CERT_OPTIONAL
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    Controllers(store).start()

    def stop(*_, code=0):
        hived = getattr(store, "hived_double", None)
        if hived:
            hived.stop()  # the HiveD double's server is this process's child
        os._exit(code)
    signal.signal(signal.SIGTERM, stop)
    store.on_etcd_replaced = lambda: stop(code=1)
    srv.serve_forever()


if __name__ == "__main__":
    main()
