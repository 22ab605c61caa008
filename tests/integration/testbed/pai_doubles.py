"""The testbed's doubles of OpenPAI's gateway (pylon and its REST server) and of HiveD.

The testbed runs no images, so the fake API server (kube_apiserver.py) answers on
the master's address for the pods install's openpai phase starts, while their
workloads are available. These are test doubles, not OpenPAI or HiveD:

* the gateway (the `pylon` Deployment's host port, 80): OpenPAI's REST API v2 as
  the REST server double of tests/integration/rest/pai_rest_server.py serves it
  (copied next to this file by `testbed.sh up`), with the cluster's own state: the
  user `admin` signs in with the password install put in the Secret
  openpai/pai-secrets (`admin-password`), the virtual clusters and SKUs come from
  the ConfigMap hivedscheduler-config. A submitted job makes one Pod per task
  instance in the namespace `default`, with HiveD's pod-scheduling-spec
  annotation, for the HiveD double to bind; the job waits (WAITING) until its pods
  are bound, runs (RUNNING, a log that grows at each read) for RUN_SECONDS, then its
  pods succeed and the job is SUCCEEDED.
* HiveD (the `hivedscheduler-hs` StatefulSet's port, 30096): HiveD's inspect API,
  computed by lib/scheduler in tests/integration/hived/hived_test_server (copied
  into the run's lib/ as `hived_test_server` by `up`): the physical cluster from
  that ConfigMap, the bad nodes from the Nodes that are not Ready or are cordoned (as HiveD's), and the affinity
  groups from the pods on this API server: the pods HiveD bound (their
  pod-bind-info annotation) are restored as HiveD restores them when it starts,
  the pods that wait for HiveD (a pod-scheduling-spec, no node) are scheduled, and
  those that got a placement are bound here (nodeName, pod-bind-info,
  pod-leaf-cell-isolation), as HiveD's binding does. Pods that ended (Succeeded,
  Failed) or were deleted hold no cells.
"""

import base64
import copy
import hashlib
import hmac
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import yaml

import pai_rest_server as rest

ANN = "hivedscheduler.microsoft.com/"
SPEC = ANN + "pod-scheduling-spec"
BIND = ANN + "pod-bind-info"
ISOLATION = ANN + "pod-leaf-cell-isolation"
# How long a job's tasks run once their pods are bound.
RUN_SECONDS = float(os.environ.get("TESTBED_JOB_SECONDS", "3"))
# OpenPAI's job priority classes (extras.hivedScheduler.jobPriorityClass).
PRIORITY = {"crit": 1000, "prod": 100, "test": 10, "oppo": -1}
JOB_NS = "default"


def hived_config(store, ns):
    cm = store.objects.get(("", "configmaps", ns, "hivedscheduler-config"))
    return (cm or {}).get("data", {}).get("hivedscheduler.yaml", "")


def parsed_config(store, ns):
    try:
        return yaml.safe_load(hived_config(store, ns)) or {}
    except yaml.YAMLError:
        return {}


def node_ready(node):
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in node.get("status", {}).get("conditions", []))


def node_healthy(node):
    """HiveD's health of a node: Ready and not cordoned (spec.unschedulable)."""
    return node_ready(node) and not node.get("spec", {}).get("unschedulable")


def pods(store):
    return [p for (g, plural, _, _), p in store.objects.items() if not g and plural == "pods"]


def ended(pod):
    return pod.get("status", {}).get("phase") in ("Succeeded", "Failed") or pod["metadata"].get("deletionTimestamp")


def annotation(pod, key):
    v = (pod["metadata"].get("annotations") or {}).get(key)
    if v is None:
        return None
    try:
        return yaml.safe_load(v)
    except yaml.YAMLError:
        return None


def complete_due(store, res):
    """Pods bound by the HiveD double whose run time is over succeed (what their
    containers would do). Called with the store's lock held."""
    now = time.time()
    for pod in pods(store):
        ann = pod["metadata"].get("annotations") or {}
        due = ann.get("testbed.paictl/runs-until")
        if not due or ended(pod) or not pod["spec"].get("nodeName") or float(due) > now:
            continue
        new = copy.deepcopy(pod)
        new["status"] = dict(new.get("status", {}), phase="Succeeded",
                             containerStatuses=[{"name": c["name"], "ready": False, "restartCount": 0, "image": c.get("image", ""),
                                                 "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
                                                for c in pod["spec"].get("containers", [])])
        store.update(res, pod["metadata"]["namespace"], pod["metadata"]["name"], new, "kubelet", subresource="status",
                     check_rv=False, op="Controller")


# ----------------------------------------------------------------------------- HiveD


class Hived:
    """The HiveD double of one API server: a hived_test_server it starts when first
    asked, and the sync of its state with the pods."""

    def __init__(self, store):
        self.store = store
        self.lock = threading.Lock()
        self.binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hived_test_server")
        # Beside the API server's data, not in it (kubeadm reset empties that directory).
        self.dir = os.path.join(store.cfg.get("master_host") or os.path.dirname(os.path.dirname(store.dir)), "hived-double")
        self.proc = None
        self.port = None
        self.pushed = None  # the last document pushed
        self.error = None  # why the last push failed (an invalid config)

    def available(self):
        return os.access(self.binary, os.X_OK)

    def start(self):
        if self.proc is not None and self.proc.poll() is None:
            return True
        os.makedirs(self.dir, exist_ok=True)
        # Its first config only has to load: every sync pushes the cluster's.
        with open(self.dir + "/boot.yaml", "w") as f:
            f.write("physicalCluster:\n  cellTypes:\n    BOOT-NODE: {childCellType: BOOT, childCellNumber: 1, isNodeLevel: true}\n"
                    "  physicalCells:\n  - {cellType: BOOT-NODE, cellAddress: boot}\n"
                    "virtualClusters:\n  boot:\n    virtualCells:\n    - {cellType: BOOT-NODE, cellNumber: 1}\n")
        with open(self.dir + "/scenario.json", "w") as f:
            json.dump({"config": "boot.yaml"}, f)
        port_file = self.dir + "/port"
        if os.path.exists(port_file):
            os.unlink(port_file)
        log = open(self.dir + "/server.log", "a")
        self.proc = subprocess.Popen([self.binary, self.dir + "/scenario.json", port_file], stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=log, close_fds=True)
        log.close()
        with open(self.dir + "/pid", "w") as f:
            f.write("%d\n" % self.proc.pid)
        deadline = time.time() + 10
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if self.proc.poll() is not None or time.time() > deadline:
                self.proc = None
                return False
            time.sleep(0.02)
        self.port = int(open(port_file).read())
        self.pushed = None
        return True

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def call(self, method, path, body=None):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path), data=body, method=method)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def document(self, ns):
        """What HiveD would learn from the cluster: its config, the bad nodes, the
        groups its pods hold (bound) and those that wait for it (pending)."""
        s = self.store
        bad = sorted(n["metadata"]["name"] for (g, p, _, _), n in s.objects.items() if not g and p == "nodes" and not node_healthy(n))
        bound, pending, waiting_pods = {}, {}, {}
        for pod in sorted(pods(s), key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"])):
            spec = annotation(pod, SPEC)
            if not isinstance(spec, dict) or ended(pod):
                continue
            group = (spec.get("affinityGroup") or {}).get("name") or "%s/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"])
            bind = annotation(pod, BIND)
            if pod["spec"].get("nodeName") and isinstance(bind, dict):
                if group not in bound:
                    bound[group] = {"name": group, "vc": spec.get("virtualCluster", ""), "priority": spec.get("priority", 0),
                                    "chain": bind.get("cellChain", ""), "lazy": bool(spec.get("lazyPreemptionEnable")),
                                    "pods": [{"node": pl.get("physicalNode"), "leafCellIndices": pl.get("physicalLeafCellIndices") or [],
                                              "preassignedCellTypes": [t or "" for t in (pl.get("preassignedCellTypes") or [])]}
                                             for m in bind.get("affinityGroupBindInfo") or [] for pl in m.get("podPlacements") or []]}
            elif not pod["spec"].get("nodeName"):
                members = (spec.get("affinityGroup") or {}).get("members") or [{"podNumber": 1, "leafCellNumber": spec.get("leafCellNumber", 1)}]
                pending.setdefault(group, {"group": group, "vc": spec.get("virtualCluster", ""), "priority": spec.get("priority", 0),
                                           "leafType": spec.get("leafCellType") or "", "pinned": spec.get("pinnedCellId") or "",
                                           "lazy": bool(spec.get("lazyPreemptionEnable")),
                                           "pods": [[m.get("podNumber", 1), m.get("leafCellNumber", 1)] for m in members]})
                waiting_pods.setdefault(group, []).append(pod)
        # A gang is scheduled once all its pods exist (HiveD waits for them too).
        for g in list(pending):
            if len(waiting_pods[g]) < sum(p[0] for p in pending[g]["pods"]):
                pending.pop(g)
        doc = {"config": hived_config(s, ns), "bad": bad, "bound": list(bound.values()), "pending": list(pending.values())}
        return doc, waiting_pods

    def sync(self, ns):
        """Makes the server's state the cluster's, and binds the pods it placed.
        Returns None, or why the inspect API cannot answer (503)."""
        s = self.store
        # The store's lock first, as the controllers' tick holds it when it syncs.
        with s.lock, self.lock:
            if not self.available():
                return "the testbed has no HiveD scheduler double (%s is missing: build the target hived_test_server, " \
                       "scripts/testbed.sh up --hived-server PATH)" % self.binary
            if not self.start():
                return "the HiveD double did not start (%s/server.log)" % self.dir
            if True:
                complete_due(s, s.resources[("", "pods")])
                doc, waiting_pods = self.document(ns)
                if doc == self.pushed:
                    return self.error
                code, body = self.call("PUT", "/__control/pods", json.dumps(doc).encode())
                if code != 200:
                    self.error = "HiveD does not start on the config of ConfigMap %s/hivedscheduler-config: %s" % (
                        ns, body.decode("utf-8", "replace").strip())
                    self.pushed = doc
                    return self.error
                self.error = None
                self.pushed = doc
                placed = json.loads(body).get("placed", {})
                for group, placement in placed.items():
                    self.bind(group, placement, waiting_pods.get(group, []))
            return None

    def bind(self, group, placement, group_pods):
        """Binds the pods of a placed group, as HiveD's binding does: its node, and the
        annotations HiveD writes (the GPU indices and the bind info it restores from)."""
        s = self.store
        by_number = {}
        for pl in placement["pods"]:
            by_number.setdefault(pl["leafCellNumber"], []).append(pl)
        info = [{"leafCellNumber": n, "podPlacements": [{"physicalNode": pl["node"], "physicalLeafCellIndices": pl["leafCellIndices"],
                                                         "preassignedCellTypes": pl["preassignedCellTypes"]} for pl in pls]}
                for n, pls in sorted(by_number.items())]
        used = {n: 0 for n in by_number}
        for pod in sorted(group_pods, key=lambda p: p["metadata"]["name"]):
            spec = annotation(pod, SPEC) or {}
            n = spec.get("leafCellNumber", 1)
            pls = by_number.get(n) or []
            if used.get(n, 0) >= len(pls):
                continue
            pl = pls[used[n]]
            used[n] += 1
            node = s.objects.get(("", "nodes", "", pl["node"]))
            ip = next((a["address"] for a in (node or {}).get("status", {}).get("addresses", []) if a["type"] == "InternalIP"), "")
            new = copy.deepcopy(pod)
            ann = new["metadata"].setdefault("annotations", {})
            ann[ISOLATION] = ",".join(str(i) for i in pl["leafCellIndices"])
            ann[BIND] = yaml.safe_dump({"node": pl["node"], "leafCellIsolation": pl["leafCellIndices"], "cellChain": placement["chain"],
                                        "affinityGroupBindInfo": info}, sort_keys=False)
            secs = float(ann.get("testbed.paictl/runs-for", RUN_SECONDS))
            ann["testbed.paictl/runs-until"] = "%.3f" % (time.time() + secs)
            new["spec"]["nodeName"] = pl["node"]
            r = s.resources[("", "pods")]
            s.update(r, pod["metadata"]["namespace"], pod["metadata"]["name"], new, "hivedscheduler", check_rv=False, op="Controller")
            cur = copy.deepcopy(s.objects[("", "pods", pod["metadata"]["namespace"], pod["metadata"]["name"])])
            h = int(hashlib.sha256(pod["metadata"]["name"].encode()).hexdigest()[:4], 16)
            cur["status"] = {"phase": "Running", "hostIP": ip, "podIP": "10.244.%d.%d" % (h // 250 % 250, h % 250 + 2),
                             "conditions": [{"type": t, "status": "True"} for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
                             "containerStatuses": [{"name": c["name"], "ready": True, "restartCount": 0, "image": c.get("image", ""),
                                                    "state": {"running": {}}} for c in pod["spec"].get("containers", [])]}
            s.update(r, pod["metadata"]["namespace"], pod["metadata"]["name"], cur, "kubelet", subresource="status",
                     check_rv=False, op="Controller")

    def busy(self):
        """Whether some pod waits for HiveD or runs until a time (the controllers
        then sync, and tick again)."""
        for p in pods(self.store):
            if ended(p) or not isinstance(annotation(p, SPEC), dict):
                continue
            if not p["spec"].get("nodeName") or (p["metadata"].get("annotations") or {}).get("testbed.paictl/runs-until"):
                return True
        return False

    def inspect(self, ns, path):
        """(status, body) of GET path (an inspect path) on HiveD's state now."""
        why = self.sync(ns)
        if why:
            return 503, json.dumps(why).encode()
        return self.call("GET", path)


def hived_of(store):
    with store.lock:
        if not hasattr(store, "hived_double"):
            store.hived_double = Hived(store)
        return store.hived_double


# ----------------------------------------------------------------------------- the gateway


def run_seconds(task_role):
    """How long a task runs once bound: the sum of its `sleep N` commands, else
    RUN_SECONDS (nothing is run)."""
    secs = [float(m.group(1)) for c in (task_role.get("commands") or [])
            for m in [re.match(r"^\s*sleep\s+(\d+(?:\.\d+)?)\s*$", str(c))] if m]
    return sum(secs) if secs else RUN_SECONDS


class JwtTokens:
    """The gateway's tokens as OpenPAI's REST server makes them: JWTs (HS256) signed
    with the cluster's `jwt-secret` (Secret openpai/pai-secrets), so a token stays
    valid across a restart of the API server (where the double's jobs live) and
    until it expires, and no other secret signs one. Looked up like the REST
    double's token table (`get`)."""

    def __init__(self, state):
        self.state = state

    def key(self):
        s = self.state.store
        with s.lock:
            sec = s.objects.get(("", "secrets", self.state.ns, "pai-secrets"))
            k = (sec or {}).get("data", {}).get("jwt-secret")
        return base64.b64decode(k) if k else None

    def sign(self, user, application=False, seconds=7 * 24 * 3600):
        key = self.key()
        now = int(time.time())
        head = rest.b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        body = rest.b64url(json.dumps({"username": user, "application": application, "iat": now, "exp": now + seconds}).encode())
        sig = rest.b64url(hmac.new(key or b"", (head + "." + body).encode(), hashlib.sha256).digest())
        return head + "." + body + "." + sig

    def get(self, token, default=None):
        key = self.key()
        parts = (token or "").split(".")
        if key is None or len(parts) != 3:
            return default
        want = rest.b64url(hmac.new(key, (parts[0] + "." + parts[1]).encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(want, parts[2]):
            return default
        try:
            claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        except ValueError:
            return default
        if not isinstance(claims, dict) or claims.get("exp", 0) < time.time():
            return default
        return claims.get("username", default)

    def __setitem__(self, token, user):
        pass  # nothing to keep: a token carries its user and is checked by its signature

    def __len__(self):
        return 0


class GatewayState(rest.State):
    """The REST server double's state, on the cluster's users, VCs and pods."""

    def __init__(self, store, ns):
        super().__init__({"users": {}, "version": "v1.8.0"}, "testbed")
        self.store, self.ns = store, ns
        self.tokens = JwtTokens(self)

    def issue_token(self, user, application=False):
        return self.tokens.sign(user, application)

    def refresh(self):
        """The admin and the VCs as the cluster has them now (install may change them)."""
        s = self.store
        with s.lock:
            sec = s.objects.get(("", "secrets", self.ns, "pai-secrets"))
            cfg = parsed_config(s, self.ns)
            user = (sec or {}).get("data", {}).get("admin-username")
            pw = (sec or {}).get("data", {}).get("admin-password")
            used = {}  # VC -> leaf cells its running pods hold
            for p in pods(s):
                spec = annotation(p, SPEC)
                if isinstance(spec, dict) and p["spec"].get("nodeName") and not ended(p):
                    iso = (p["metadata"].get("annotations") or {}).get(ISOLATION, "")
                    vc = spec.get("virtualCluster", "")
                    used[vc] = used.get(vc, 0) + len([x for x in iso.split(",") if x])
        name = base64.b64decode(user).decode() if user else "admin"
        vcs = sorted((cfg.get("virtualClusters") or {}).keys()) or ["default"]
        skus = (cfg.get("physicalCluster") or {}).get("skuTypes") or {}
        with self.lock:
            info = self.users.setdefault(name, {"admin": True})
            info["password"] = base64.b64decode(pw).decode() if pw else None
            info["virtualCluster"] = vcs
            units = {k: {"cpu": v.get("cpu", 1), "memory": self.mib(v.get("memory", "0")), "gpu": v.get("gpu", 0)}
                     for k, v in skus.items()}
            leaves = self.vc_leaves(cfg)

            def resources(cells):  # {leaf type: number} -> what those SKUs hold
                return {r: sum(n * (units.get(t) or {"cpu": 1, "memory": 0, "gpu": 1})[r] for t, n in cells.items())
                        for r in ("cpu", "memory", "gpu")}
            self.vcs = {}
            for vc in vcs:
                total = resources(leaves.get(vc, {}))
                # Its running pods' leaf cells, of the VC's (first) SKU.
                one = next(iter(leaves.get(vc, {})), "")
                in_use = resources({one: used.get(vc, 0)})
                self.vcs[vc] = {"capacity": 100.0 / max(len(vcs), 1), "maxCapacity": 100, "dedicated": False,
                                "usedCapacity": 100.0 * in_use["gpu"] / total["gpu"] if total["gpu"] else 0,
                                "resourcesTotal": total, "resourcesGuaranteed": total, "resourcesUsed": in_use, "nodeList": []}
            self.skus = {vc: units for vc in vcs}
        return name

    @staticmethod
    def mib(m):
        m = str(m)
        mt = re.match(r"^(\d+)(Mi|Gi)?$", m)
        if not mt:
            return 0
        return int(mt.group(1)) * (1024 if mt.group(2) == "Gi" else 1)

    @staticmethod
    def vc_leaves(cfg):
        """{VC: {leaf cell type (SKU): number}}: its virtual cells' counts times the
        leaves of their cell types."""
        types = (cfg.get("physicalCluster") or {}).get("cellTypes") or {}

        def leaves(t):
            spec = types.get(t)
            if not spec:
                return t, 1
            leaf, n = leaves(spec.get("childCellType", ""))
            return leaf, n * spec.get("childCellNumber", 1)
        out = {}
        for vc, spec in (cfg.get("virtualClusters") or {}).items():
            for c in (spec or {}).get("virtualCells") or []:
                leaf, n = leaves(str(c.get("cellType", "")).split(".")[-1])
                out.setdefault(vc, {})[leaf] = out.get(vc, {}).get(leaf, 0) + n * c.get("cellNumber", 0)
        return out

    def job_pods(self, job):
        s = self.store
        return [s.objects.get(("", "pods", JOB_NS, name)) for name in job.get("podNames", [])]

    def state_of(self, job):
        if "podNames" not in job or job["executionType"] == "STOP":
            return super().state_of(job)
        s = self.store
        with s.lock:
            complete_due(s, s.resources[("", "pods")])
            ps = self.job_pods(job)
        if any(p is None for p in ps):
            return self.seen(job, "FAILED")
        if any(not p["spec"].get("nodeName") for p in ps):
            return "WAITING"
        if all(p.get("status", {}).get("phase") == "Succeeded" for p in ps):
            job["exitCode"] = 0
            return self.seen(job, "SUCCEEDED")
        if any(p.get("status", {}).get("phase") == "Failed" for p in ps):
            job["exitCode"] = 1
            return self.seen(job, "FAILED")
        return self.seen(job, "RUNNING")

    @staticmethod
    def seen(job, state):
        """The job's times as they were (the REST double's summary derives them
        from these): launched when first seen running, completed when first seen ended."""
        now = int(time.time() * 1000)
        if "launchDelayMs" not in job:
            job["launchDelayMs"] = now - job["submissionTime"]
        if state != "RUNNING" and "runMs" not in job:
            job["runMs"] = now - job["submissionTime"] - job["launchDelayMs"]
        return state

    def stop_tasks(self, job):
        """A stopped job's pods are deleted (their cells freed)."""
        super().stop_tasks(job)
        s = self.store
        with s.lock:
            for name in job.get("podNames", []):
                if ("", "pods", JOB_NS, name) in s.objects:
                    s.delete(s.resources[("", "pods")], JOB_NS, name)


class GatewayHandler(rest.Handler):
    server_version = "pylon-testbed/1"

    def _route(self, api, query, body):
        self.st.refresh()
        return super()._route(api, query, body)

    def _submit(self, user, body):
        # The REST double validates and records the job; then its pods are made.
        st = self.st
        with st.lock:
            before = set(st.jobs)
        super()._submit(user, body)
        with st.lock:
            new = [k for k in st.jobs if k not in before]
            if not new:
                return
            job = st.jobs[new[0]]
        try:
            proto = yaml.safe_load(body.decode())
        except yaml.YAMLError:
            return
        self.make_pods(user, job, proto)

    def make_pods(self, user, job, proto):
        """One pod per task instance, with the annotation OpenPAI's REST server gives
        pods that HiveD schedules, for the HiveD double to bind."""
        st, s = self.st, self.st.store
        key = user + "~" + job["name"]
        cfg = parsed_config(s, st.ns)
        skus = (cfg.get("physicalCluster") or {}).get("skuTypes") or {}
        hs = (proto.get("extras") or {}).get("hivedScheduler") or {}
        vc = job["vc"]
        priority = PRIORITY.get(hs.get("jobPriorityClass", "test"), 10)
        prefix = hashlib.md5(key.encode()).hexdigest()[:16]
        members, made = {}, []
        roles = proto.get("taskRoles") or {}
        for tr, spec in roles.items():
            spec = spec or {}
            res = spec.get("resourcePerInstance") or {}
            sku = ((hs.get("taskRoles") or {}).get(tr) or {}).get("skuType") or ""
            unit = skus.get(sku) or (next(iter(skus.values())) if len(skus) == 1 else {"gpu": 1, "cpu": 1})
            cells = max(1, -(-int(res.get("gpu", 0) or 0) // max(int(unit.get("gpu", 1) or 1), 1)),
                        -(-int(res.get("cpu", 0) or 0) // max(int(unit.get("cpu", 1) or 1), 1)))
            n = int(spec.get("instances", 1))
            members[cells] = members.get(cells, 0) + n
            made.append((tr, n, cells, sku, spec))
        group = {"name": key, "members": [{"podNumber": c, "leafCellNumber": k} for k, c in sorted(members.items())]}
        names = []
        with s.lock:
            for tr, n, cells, sku, spec in made:
                image = ((proto.get("prerequisites") or [{}])[0] or {}).get("uri", "openpai/standard:python_3.6-pytorch_1.2.0-gpu")
                for i in range(n):
                    name = "%s-%s-%d" % (prefix, tr.lower().replace("_", "-"), i)
                    sched = {"virtualCluster": vc, "priority": priority, "leafCellType": sku or None, "leafCellNumber": cells,
                             "gangReleaseEnable": False, "lazyPreemptionEnable": False, "affinityGroup": group}
                    pod = {"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": name, "namespace": JOB_NS,
                                        "labels": {"type": "kube-launcher-task", "userName": user, "jobName": job["name"],
                                                   "FC_FRAMEWORK_NAME": prefix, "FC_TASKROLE_NAME": tr, "FC_TASK_INDEX": str(i)},
                                        "annotations": {SPEC: yaml.safe_dump(sched, sort_keys=False),
                                                        "testbed.paictl/runs-for": "%g" % run_seconds(spec)}},
                           "spec": {"schedulerName": "hivedscheduler-ds-default", "restartPolicy": "Never",
                                    "containers": [{"name": "app", "image": image if isinstance(image, str) else "openpai/standard",
                                                    "resources": {"limits": {ANN + "pod-scheduling-enable": "1"}}}]},
                           "status": {"phase": "Pending"}}
                    try:
                        s.create(s.resources[("", "pods")], JOB_NS, pod, "rest-server")
                    except Exception as e:  # noqa: BLE001 - the job then fails: its pods are missing
                        sys.stderr.write("gateway: pod %s: %r\n" % (name, e))
                    names.append(name)
        with st.lock:
            job["podNames"] = names
            job["logs"] = {"%s/%d" % (tr, i): {"lines": ["[%s] task %s/%d of %s" % (job["name"], tr, i, key)] +
                                               ["step %d of %d" % (k, 5) for k in range(1, 6)] + ["done"],
                                               "perFetch": 2, "shown": 0}
                           for tr, n, _, _, _ in made for i in range(n)}

    def _detail(self, job):
        d = super()._detail(job)
        if "podNames" in job:
            s = self.st.store
            with s.lock:
                ps = {p["metadata"]["name"]: p for p in self.st.job_pods(job) if p}
            for tr, role in d["taskRoles"].items():
                for t in role["taskStatuses"]:
                    name = "%s-%s-%d" % (job["podNames"][0].split("-")[0], tr.lower().replace("_", "-"), t["taskIndex"])
                    p = ps.get(name)
                    if p and p["spec"].get("nodeName"):
                        t["containerNodeName"] = p["spec"]["nodeName"]
                        t["containerIp"] = p.get("status", {}).get("hostIP")
                        iso = (p["metadata"].get("annotations") or {}).get(ISOLATION, "")
                        t["containerGpus"] = len([x for x in iso.split(",") if x])
        return d


class Gateway:
    """The REST server double behind pylon's port (one per API server: its jobs
    outlive the endpoint's restarts while the API server runs)."""

    def __init__(self, store, ns):
        self.state = GatewayState(store, ns)


def gateway_of(store, ns):
    with store.lock:
        if not hasattr(store, "gateway_double"):
            store.gateway_double = Gateway(store, ns)
        return store.gateway_double
