#!/usr/bin/env python3
"""A test double of the OpenPAI rest-server (REST API v2) on loopback.

It follows the documented contract of microsoft/pai src/rest-server (routes/v2,
controllers/v2, the swagger in docs/swagger.yaml): the same paths, status codes,
error bodies ({code, message}), and job life cycle, with the state of a small
cluster (users, virtual clusters, SKU types, storages, jobs) read from a JSON
scenario file. It is not the real server: job validation is reduced to what
the tests need (one YAML document, required keys, VC permission, storages,
unique names); paictl's own validator is tested on its own.

For tests it also:
  * records every request (method, path, query, headers, body) and returns
    them from GET /__control/requests (POST /__control/reset clears them);
  * answers chosen requests with a chosen status, body, Retry-After, delay, or
    a dropped connection (POST /__control/fail);
  * lets a test set the states a job goes through (POST /__control/jobs/ID);
  * acts as an HTTP proxy when a request has an absolute URL (the proxy test);
  * when asked (POST /__control/run-tasks {"enabled": true}, or "runTasks": true
    in the scenario), really runs a submitted job: each task instance's
    commands run here in `sh` as a subprocess, with OpenPAI's PAI_* task
    variables; the job's and tasks' states follow the processes and their
    stdout/stderr are the task logs. Off by default: other tests see canned jobs.

Usage: pai_rest_server.py --scenario S.json --port-file F [--port 0]
       [--prefix /rest-server] [--name NAME] [--tls-cert C --tls-key K]
       [--latency-ms N]
The chosen port is written to --port-file once the server listens.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import secrets as pysecrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

STATES = ["WAITING", "RUNNING", "STOPPING", "STOPPED", "SUCCEEDED", "FAILED", "UNKNOWN"]
NAME_RE = re.compile(r"^[a-zA-Z0-9_-]+$")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class State:
    """The cluster as the server sees it. All access holds `lock`."""

    def __init__(self, scenario, name):
        self.lock = threading.Lock()
        self.name = name
        self.version = scenario.get("version", "v1.8.0")
        self.authn = scenario.get("authnMethod", "basic")
        self.users = scenario.get("users", {})
        self.vcs = scenario.get("virtualClusters", {})
        self.skus = scenario.get("skuTypes", {})  # {vc: {sku: {cpu, memory, gpu}}}
        self.storages = scenario.get("storages", {})  # {user: [name, ...]}
        self.default_plan = scenario.get("jobPlan", ["WAITING", "RUNNING", "SUCCEEDED"])
        self.tokens = {}  # token -> username
        for user, info in self.users.items():
            for t in info.get("tokens", []):
                self.tokens[t] = user
        self.jobs = {}  # "user~name" -> job dict
        now = int(time.time() * 1000)
        for j in scenario.get("jobs", []):
            submitted = j.get("submissionTime")
            if "ageSeconds" in j:
                submitted = now - int(j["ageSeconds"] * 1000)
            job = self._add_job(j["user"], j["name"], j.get("vc", "default"), j.get("plan", [j.get("state", "RUNNING")]),
                                j.get("taskRoles", {"tr": 1}), j.get("config", ""), j.get("gpus", 1), submitted)
            job["tags"] = list(j.get("tags", []))
            for key in ("launchDelayMs", "runMs", "taskCreatedDelayMs", "exitType", "exitPhrase",
                        "exitTriggerMessage", "exitMessages", "events"):
                if key in j:
                    job[key] = j[key]
            job["exitCode"] = j.get("exitCode")
            # Earlier attempts: of the job (retries) and of single tasks.
            job["jobAttempts"] = list(j.get("jobAttempts", []))
            job["taskAttempts"] = dict(j.get("taskAttempts", {}))
            job["retries"] = len(job["jobAttempts"])
            # Growing logs: {"TR/IDX": {"lines": [...], "perFetch": N}}; each fetch of
            # a log shows N more lines until the job ends, then all of them.
            job["logs"] = {k: {"lines": v.get("lines", []), "perFetch": v.get("perFetch", 1), "shown": 0}
                           for k, v in j.get("logs", {}).items()}
        self.requests = []
        self.faults = []
        self.log_text = scenario.get("logText", "line 1\nline 2\nepoch 1 loss 0.5\nepoch 2 loss 0.25\ndone\n")
        self.run_tasks = scenario.get("runTasks", False)
        self.task_dirs = []

    # --- really running tasks (opt-in) -------------------------------------------
    def start_tasks(self, job, proto):
        """Starts every task instance of `proto` as `sh -c COMMANDS` here."""
        base = tempfile.mkdtemp(prefix="pai-rest-tasks-")
        self.task_dirs.append(base)
        key = job["user"] + "~" + job["name"]
        roles = proto.get("taskRoles") or {}
        job["procs"] = {}
        for tr, spec in roles.items():
            spec = spec or {}
            n = spec.get("instances", 1)
            script = "\n".join(str(c) for c in (spec.get("commands") or []))
            for i in range(n):
                env = dict(os.environ)
                env.update({"PAI_JOB_NAME": key, "PAI_USER_NAME": job["user"], "PAI_VIRTUAL_CLUSTER": job["vc"],
                            "PAI_CURRENT_TASK_ROLE_NAME": tr, "PAI_CURRENT_TASK_ROLE_CURRENT_TASK_INDEX": str(i),
                            "PAI_TASK_INDEX": str(i), "PAI_TASK_ROLE_TASK_COUNT_" + tr: str(n),
                            "PAI_TASK_ROLE_COUNT": str(len(roles)), "PAI_TASK_ROLE_LIST": ",".join(roles)})
                out = os.path.join(base, "%s-%d.stdout" % (tr, i))
                err = os.path.join(base, "%s-%d.stderr" % (tr, i))
                with open(out, "wb") as fo, open(err, "wb") as fe:
                    proc = subprocess.Popen(["sh", "-c", script], stdin=subprocess.DEVNULL, stdout=fo, stderr=fe,
                                            env=env, cwd=base, start_new_session=True)
                job["procs"]["%s/%d" % (tr, i)] = {"proc": proc, "stdout": out, "stderr": err}

    def task_state(self, job, tr, i):
        """The state of a really running task, or None for canned jobs."""
        entry = job.get("procs", {}).get("%s/%d" % (tr, i))
        if entry is None:
            return None, None
        code = entry["proc"].poll()
        if job["executionType"] == "STOP" and code is not None and code != 0:
            return "STOPPED", code
        return ("RUNNING" if code is None else "SUCCEEDED" if code == 0 else "FAILED"), code

    def stop_tasks(self, job):
        for entry in job.get("procs", {}).values():
            if entry["proc"].poll() is None:
                try:
                    os.killpg(entry["proc"].pid, signal.SIGKILL)
                except OSError:
                    pass
                entry["proc"].wait()

    def stop_all(self):
        with self.lock:
            for job in self.jobs.values():
                self.stop_tasks(job)
        for d in self.task_dirs:
            shutil.rmtree(d, ignore_errors=True)

    def issue_token(self, user, application=False):
        header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        payload = b64url(json.dumps({"username": user, "application": application, "iat": int(time.time())}).encode())
        token = header + "." + payload + "." + b64url(pysecrets.token_bytes(24))
        self.tokens[token] = user
        return token

    def _add_job(self, user, name, vc, plan, task_roles, config, gpus, submitted=None):
        now = int(time.time() * 1000)
        self.jobs[user + "~" + name] = {
            "user": user, "name": name, "vc": vc, "plan": list(plan), "step": 0,
            "taskRoles": task_roles, "config": config, "tags": [], "gpus": gpus,
            "submissionTime": submitted or now, "executionType": "START", "exitCode": None,
            "retries": 0, "stopRequested": False, "jobAttempts": [], "taskAttempts": {}, "logs": {},
        }
        return self.jobs[user + "~" + name]

    def state_of(self, job):
        if job.get("procs") and job["executionType"] != "STOP":
            codes = [e["proc"].poll() for e in job["procs"].values()]
            if any(c is None for c in codes):
                return "RUNNING"
            failed = [c for c in codes if c != 0]
            job["exitCode"] = failed[0] if failed else 0
            return "FAILED" if failed else "SUCCEEDED"
        return job["plan"][min(job["step"], len(job["plan"]) - 1)]

    def advance(self, job):
        if job["step"] < len(job["plan"]) - 1:
            job["step"] += 1


EXIT_PHRASES = {"USER_FAILURE": (1, "ContainerNonZeroExitCode", "Container exited with a non-zero exit code"),
                "PLATFORM_FAILURE": (-220, "ContainerNodeLost", "The node of the container was lost"),
                "RESOURCE_ALLOCATION_TIMEOUT": (-110, "PodScheduleTimeout", "Pod could not be scheduled in time"),
                "USER_STOP": (-210, "FrameworkStopped", "Stopped by the user"),
                "UNKNOWN_FAILURE": (-1, "ContainerUnknownFailure", "Unknown failure")}


def exit_spec(exit_type, code=None, phrase=None):
    """An appExitSpec/containerExitSpec as OpenPAI's exit spec table gives it."""
    if not exit_type:
        return None
    dcode, dphrase, reason = EXIT_PHRASES.get(exit_type, (-1, "Unknown", "Unknown failure"))
    return {"code": dcode if code is None else code, "phrase": phrase or dphrase, "issuer": "PAI_RUNTIME",
            "causer": exit_type.split("_")[0], "type": exit_type, "stage": "RUNNING", "reason": reason,
            "repro": [], "solution": ["Check the job's stderr log"]}


def exit_spec_of(job):
    spec = exit_spec(job.get("exitType") or "USER_FAILURE", job["exitCode"] or 1, job.get("exitPhrase"))
    spec["repro"] = ["Run the command in the container"]
    return spec


def retry_details(job):
    d = {"user": 0, "platform": 0, "resource": 0}
    for a in job.get("jobAttempts", []):
        t = a.get("exitType", "USER_FAILURE")
        key = "platform" if t == "PLATFORM_FAILURE" else "resource" if t == "RESOURCE_ALLOCATION_TIMEOUT" else "user"
        d[key] += 1
    return d


def error_body(code, message):
    return json.dumps({"code": code, "message": message}).encode()


class Handler(BaseHTTPRequestHandler):
    server_version = "pai-rest-test/1"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet; requests are recorded instead
        pass

    # --- plumbing ------------------------------------------------------------
    @property
    def st(self):
        return self.server.state

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def _send(self, status, body=b"", ctype="application/json; charset=utf-8", headers=None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _origin(self):
        """Where the client reached this server (its Host header): the log URLs point
        there, as pylon's do (a double behind another address, e.g. the testbed's
        gateway on a host's port 80, stays reachable)."""
        scheme = "https" if self.server.tls else "http"
        host = self.headers.get("Host") or "127.0.0.1:%d" % self.server.server_address[1]
        return "%s://%s" % (scheme, host)

    def _error(self, status, code, message):
        self._send(status, error_body(code, message))

    def _user(self):
        """The signed-in user, or None after answering 401."""
        auth = self.headers.get("Authorization")
        if not auth:
            self._error(401, "UnauthorizedUserError", "Guest is not allowed to do this operation.")
            return None
        parts = auth.split(" ", 1)
        user = None
        if len(parts) == 2 and parts[0].lower() == "bearer":
            user = self.st.tokens.get(parts[1])
        elif len(parts) == 2 and parts[0].lower() == "basic":
            try:
                u, t = base64.b64decode(parts[1]).decode().split(":", 1)
                user = u if self.st.tokens.get(t) == u else None
            except Exception:  # noqa: BLE001 - any malformed header is an invalid token
                user = None
        if not user:
            self._error(401, "UnauthorizedUserError", "Your token is invalid.")
            return None
        return user

    def _is_admin(self, user):
        return bool(self.st.users.get(user, {}).get("admin", False))

    def _handle(self):
        raw_path = self.path
        body = self._body()
        # Proxy requests carry an absolute URL.
        if raw_path.startswith("http://") or raw_path.startswith("https://"):
            with self.st.lock:
                self.st.requests.append({"method": self.command, "path": raw_path, "query": {},
                                         "headers": {k.lower(): v for k, v in self.headers.items()},
                                         "body": body.decode("utf-8", "replace"), "proxied": True})
            self._send(200, {"proxied": True, "url": raw_path, "name": "PAI RESTful API", "version": "proxy",
                             "launcherType": "k8s", "authnMethod": "basic"})
            return
        url = urllib.parse.urlsplit(raw_path)
        path = urllib.parse.unquote(url.path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        if path.startswith("/__control/"):
            return self._control(path, query, body)
        with self.st.lock:
            self.st.requests.append({"method": self.command, "path": path, "query": query,
                                     "headers": {k.lower(): v for k, v in self.headers.items()},
                                     "body": body.decode("utf-8", "replace")})
            fault = None
            for f in self.st.faults:
                if f["count"] != 0 and (f.get("method") in (None, self.command)) and re.search(f["path"], path):
                    if f.get("after", 0) > 0:  # let the first N matching requests through
                        f["after"] -= 1
                        continue
                    f["count"] -= 1
                    fault = dict(f)
                    break
        if fault:
            if fault.get("delayMs"):
                time.sleep(fault["delayMs"] / 1000.0)
            if fault.get("close"):
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if fault.get("status"):
                headers = {}
                if fault.get("retryAfter") is not None:
                    headers["Retry-After"] = str(fault["retryAfter"])
                headers.update(fault.get("headers", {}))
                if "text" in fault:
                    self._send(fault["status"], fault["text"], fault.get("contentType", "text/plain"), headers)
                else:
                    self._send(fault["status"], error_body(fault.get("code", "UnknownError"),
                                                           fault.get("message", "injected failure")),
                               headers=headers)
                return
        if self.server.latency:
            time.sleep(self.server.latency)
        prefix = self.server.prefix
        if path.startswith("/log-manager/"):
            return self._log_content(path, query)
        if prefix and not path.startswith(prefix + "/"):
            self._send(404, "<html><body><h1>404 Not Found</h1><hr>nginx</body></html>", "text/html")
            return
        api = path[len(prefix):]
        try:
            self._route(api, query, body)
        except BrokenPipeError:
            pass

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

    # --- control API ------------------------------------------------------------
    def _control(self, path, query, body):
        data = json.loads(body or b"{}")
        st = self.st
        with st.lock:
            if path == "/__control/requests":
                return self._send(200, st.requests)
            if path == "/__control/reset":
                st.requests.clear()
                st.faults.clear()
                return self._send(200, {"ok": True})
            if path == "/__control/fail":
                data.setdefault("count", 1)
                data.setdefault("path", ".*")
                st.faults.append(data)
                return self._send(200, {"ok": True})
            if path.startswith("/__control/jobs/"):
                job = st.jobs.get(path[len("/__control/jobs/"):])
                if not job:
                    return self._send(404, {"error": "no such job"})
                if "plan" in data:
                    job["plan"] = data["plan"]
                    job["step"] = 0
                    for log in job["logs"].values():
                        log["shown"] = 0
                if "exitCode" in data:
                    job["exitCode"] = data["exitCode"]
                if "retries" in data:
                    job["retries"] = data["retries"]
                if "events" in data:  # the Kubernetes events of its pods (GET .../events)
                    job["events"] = data["events"]
                return self._send(200, {"ok": True, "job": {k: v for k, v in job.items() if k not in ("config", "procs")}})
            if path == "/__control/run-tasks":
                st.run_tasks = bool(data.get("enabled", True))
                return self._send(200, {"ok": True, "runTasks": st.run_tasks})
            if path == "/__control/state":
                return self._send(200, {"jobs": list(st.jobs.keys()), "tokens": len(st.tokens)})
        self._send(404, {"error": "unknown control path"})

    # --- REST API v2 ------------------------------------------------------------
    def _route(self, api, query, body):
        m = self.command
        st = self.st
        if api == "/api/v2/info":
            return self._send(200, {"name": "PAI RESTful API", "version": st.version, "launcherType": "k8s",
                                    "authnMethod": st.authn})
        if api == "/api/v2/authn/info":
            return self._send(200, {"authn_type": st.authn, "loginURI": "/api/v2/authn/basic/login",
                                    "loginURIMethod": "post"})
        if api == "/api/v2/authn/basic/login" and m == "POST":
            form = {k: v[-1] for k, v in urllib.parse.parse_qs(body.decode()).items()}
            user, password = form.get("username", ""), form.get("password", "")
            if not user or not password:
                return self._error(400, "InvalidParametersError", '"username" and "password" are required')
            with st.lock:
                info = st.users.get(user)
                if info is None:
                    return self._error(400, "NoUserError", "User %s is not found." % user)
                if info.get("password") != password:
                    return self._error(400, "IncorrectPasswordError", "Password is incorrect.")
                token = st.issue_token(user)
            return self._send(200, {"token": token, "user": user, "admin": bool(info.get("admin")),
                                    "hasGitHubPAT": False})
        if not api.startswith("/api/v2/"):
            return self._error(404, "NoApiError", "API %s is not found." % self.path)

        user = self._user()
        if user is None:
            return
        mu = re.match(r"^/api/v2/users/([^/]+)$", api)
        if mu and m == "GET":
            name = mu.group(1)
            with st.lock:
                info = st.users.get(name)
                if info is None:
                    return self._error(404, "NoUserError", "User %s is not found." % name)
                return self._send(200, {"username": name, "admin": bool(info.get("admin")),
                                        "virtualCluster": info.get("virtualCluster", ["default"]),
                                        "email": info.get("email", ""), "storageConfig": [], "extension": {}})
        if api == "/api/v2/virtual-clusters" and m == "GET":
            return self._send(200, st.vcs)
        mv = re.match(r"^/api/v2/virtual-clusters/([^/]+)$", api)
        if mv and m == "GET":
            vc = st.vcs.get(mv.group(1))
            if vc is None:
                return self._error(404, "NoVirtualClusterError", "Virtual cluster %s is not found." % mv.group(1))
            return self._send(200, vc)
        if api == "/api/v2/cluster/sku-types" and m == "GET":
            vc = query.get("vc")
            if vc:
                if vc not in st.vcs:
                    return self._error(404, "NoVirtualClusterError", "Cannot get sku types for virtual clyster %s." % vc)
                return self._send(200, st.skus.get(vc, {}))
            merged = {}
            for skus in st.skus.values():
                merged.update(skus)
            return self._send(200, merged)
        if api == "/api/v2/storages" and m == "GET":
            names = st.storages.get(user, [])
            return self._send(200, {"storages": [{"name": n, "share": True, "volumeName": n + "-pv",
                                                  "default": i == 0} for i, n in enumerate(names)]})
        if api == "/api/v2/jobs":
            if m == "POST":
                return self._submit(user, body)
            if m == "GET":
                return self._list(query)
        mj = re.match(r"^/api/v2/jobs/([^/]+)(/.*)?$", api)
        if mj:
            return self._job(user, mj.group(1), mj.group(2) or "", query, body)
        return self._error(404, "NoApiError", "API %s is not found." % self.path)

    def _submit(self, user, body):
        st = self.st
        ctype = self.headers.get("Content-Type", "")
        if not ctype.startswith("text/"):
            # bodyParser.text only reads text/*: the protocol is then not a string.
            return self._error(400, "InvalidProtocolError", json.dumps(
                [{"keyword": "type", "dataPath": "", "schemaPath": "#/type", "params": {"type": "object"},
                  "message": "should be object"}]))
        if len(body) > 100 * 1024:
            return self._error(413, "PayloadTooLargeError", "request entity too large")
        try:
            docs = list(yaml.safe_load_all(body.decode()))
        except yaml.YAMLError as e:
            return self._send(500, {"code": "UnknownError", "message": "YAMLException: %s" % str(e).splitlines()[0]})
        if len(docs) != 1:
            return self._send(500, {"code": "UnknownError",
                                    "message": "expected a single document in the stream, but found more"})
        proto = docs[0]
        errors = []
        if not isinstance(proto, dict):
            errors.append({"keyword": "type", "dataPath": "", "schemaPath": "#/type", "params": {"type": "object"},
                           "message": "should be object"})
            proto = {}
        for key in ("protocolVersion", "name", "type", "taskRoles"):
            if key not in proto:
                errors.append({"keyword": "required", "dataPath": "", "schemaPath": "#/required",
                               "params": {"missingProperty": key},
                               "message": "should have required property '%s'" % key})
        name = proto.get("name")
        if isinstance(name, str) and not NAME_RE.match(name):
            errors.append({"keyword": "pattern", "dataPath": ".name", "schemaPath": "base.json#/properties/name/pattern",
                           "params": {"pattern": "^[a-zA-Z0-9_-]+$"},
                           "message": 'should match pattern "^[a-zA-Z0-9_-]+$"'})
        for tr, spec in (proto.get("taskRoles") or {}).items() if isinstance(proto.get("taskRoles"), dict) else []:
            res = (spec or {}).get("resourcePerInstance") or {}
            if "memory" in res:
                errors.append({"keyword": "additionalProperties", "dataPath": ".taskRoles['%s'].resourcePerInstance" % tr,
                               "schemaPath": "#/properties/taskRoles/patternProperties/%5E%5Ba-zA-Z_%5D%5Ba-zA-Z0-9_%5D*%24/properties/resourcePerInstance/additionalProperties",
                               "params": {"additionalProperty": "memory"},
                               "message": "should NOT have additional properties"})
        if errors:
            return self._error(400, "InvalidProtocolError", json.dumps(errors))
        vc = (proto.get("defaults") or {}).get("virtualCluster") or "default"
        with st.lock:
            key = user + "~" + name
            if key in st.jobs:
                return self._error(409, "ConflictJobError", "Job %s already exists." % key)
            allowed = st.users.get(user, {}).get("virtualCluster", ["default"])
            if vc not in allowed and not self._is_admin(user):
                return self._error(403, "ForbiddenUserError", "User %s is not allowed to do operation in %s" % (user, vc))
            storages = (proto.get("extras") or {}).get("storages") or []
            for s in storages:
                if isinstance(s, dict) and s.get("name") and s["name"] not in st.storages.get(user, []):
                    return self._error(404, "NoStorageError", "Storage %s is not found." % s["name"])
            roles = {tr: (spec or {}).get("instances", 1) for tr, spec in proto["taskRoles"].items()}
            gpus = sum((spec or {}).get("instances", 1) * ((spec or {}).get("resourcePerInstance") or {}).get("gpu", 0)
                       for spec in proto["taskRoles"].values())
            config = dict(proto)
            if "secrets" in config:
                config["secrets"] = "******"
            st._add_job(user, name, vc, st.default_plan, roles, yaml.safe_dump(config, sort_keys=False), gpus)
            if st.run_tasks:
                st.start_tasks(st.jobs[key], proto)
        return self._send(202, {"status": 202, "message": "Update job %s for user %s successfully." % (name, user)})

    def _summary(self, job):
        state = self.st.state_of(job)
        done = state in ("SUCCEEDED", "FAILED", "STOPPED")
        return {
            "debugId": hashlib.md5((job["user"] + "~" + job["name"]).encode()).hexdigest(),
            "name": job["name"], "username": job["user"], "state": state,
            "subState": "Completed" if done else "AttemptRunning", "executionType": job["executionType"],
            "retries": job["retries"], "retryDetails": retry_details(job),
            "retryDelayTime": None, "submissionTime": job["submissionTime"],
            "createdTime": job["submissionTime"],
            "launchedTime": job["submissionTime"] + job.get("launchDelayMs", 5000) if state != "WAITING" else None,
            "completedTime": job["submissionTime"] + job.get("launchDelayMs", 5000) + job.get("runMs", 60000) if done else None,
            "appExitCode": job["exitCode"] if done else None, "virtualCluster": job["vc"],
            "totalGpuNumber": job["gpus"], "totalTaskNumber": sum(job["taskRoles"].values()),
            "totalTaskRoleNumber": len(job["taskRoles"]), "jobPriority": "test", "tags": job["tags"],
        }

    def _list(self, query):
        st = self.st
        with st.lock:
            items = [self._summary(j) for j in st.jobs.values()]
        for key, field in (("username", "username"), ("vc", "virtualCluster"), ("state", "state")):
            if key in query:
                wanted = query[key].split(",")
                items = [i for i in items if i[field] in wanted]
        if "keyword" in query:
            items = [i for i in items if query["keyword"] in i["name"] or query["keyword"] in i["username"]]
        # tagsContain: any of the tags; tagsNotContain: none of them.
        if query.get("tagsContain"):
            wanted = set(query["tagsContain"].split(","))
            items = [i for i in items if wanted & set(i["tags"])]
        if query.get("tagsNotContain"):
            unwanted = set(query["tagsNotContain"].split(","))
            items = [i for i in items if not unwanted & set(i["tags"])]
        field, _, direction = query.get("order", "submissionTime,DESC").partition(",")
        if field not in ("submissionTime", "name", "state", "completedTime", "totalGpuNumber", "retries",
                         "virtualCluster", "username"):
            return self._error(400, "InvalidParametersError", "Invalid order field %s." % field)
        items.sort(key=lambda i: (i[field] is None, i[field] if i[field] is not None else 0),
                   reverse=direction.upper() == "DESC")
        total = len(items)
        offset = int(query.get("offset", "0") or 0)
        items = items[offset:]
        if "limit" in query:
            limit = int(query["limit"])
            if limit > 50000:
                return self._error(400, "InvalidParametersError", "Limit exceeds max number 50000.")
            items = items[:limit]
        if query.get("withTotalCount") == "true":
            return self._send(200, {"totalCount": total, "data": items})
        self._send(200, items)

    def _detail(self, job):
        st = self.st
        s = self._summary(job)
        state = s["state"]
        done = state in ("SUCCEEDED", "FAILED", "STOPPED")
        exit_spec = None
        if state == "FAILED":
            exit_spec = exit_spec_of(job)
        status = dict(s)
        status.update({"attemptId": len(job["jobAttempts"]), "attemptState": state if done else "RUNNING", "appId": s["debugId"],
                       "appCreatedTime": s["createdTime"], "appLaunchedTime": s["launchedTime"],
                       "appCompletedTime": s["completedTime"], "appExitSpec": exit_spec,
                       "appExitDiagnostics": "exit code %s" % job["exitCode"] if state == "FAILED" else None,
                       # What triggered the end, as FrameworkController reports it: the
                       # failed task (the first one) and the messages of its container.
                       "appExitMessages": job.get("exitMessages") if state == "FAILED" else None,
                       "appExitTriggerMessage": job.get("exitTriggerMessage") if state == "FAILED" else None,
                       "appExitTriggerTaskRoleName": next(iter(job["taskRoles"]), None) if state == "FAILED" else None,
                       "appExitTriggerTaskIndex": 0 if state == "FAILED" else None,
                       "appExitType": exit_spec["type"] if exit_spec else None})
        origin = self._origin()
        roles = {}
        for tr, n in job["taskRoles"].items():
            tasks = []
            for i in range(n):
                task_state = "WAITING" if state == "WAITING" else ("RUNNING" if not done else state)
                earlier = job["taskAttempts"].get("%s/%d" % (tr, i))
                if earlier is None:  # no task history in the scenario: the job's retries
                    earlier = [{"exitType": "USER_FAILURE"}] * job["retries"]
                real_state, real_code = st.task_state(job, tr, i)
                if real_state:
                    task_state = real_state
                tasks.append({
                    "taskIndex": i, "taskUid": "uid-%s-%d" % (tr, i), "taskState": task_state,
                    "retries": len(earlier),
                    "accountableRetries": len([a for a in earlier if a.get("exitType", "USER_FAILURE") == "USER_FAILURE"]),
                    "createdTime": s["createdTime"] + job.get("taskCreatedDelayMs", 0), "launchedTime": s["launchedTime"],
                    "completedTime": s["completedTime"], "attemptId": len(earlier),
                    "attemptState": task_state, "containerId": "c-%s-%d" % (tr, i) if state != "WAITING" else None,
                    "containerIp": "10.0.0.%d" % (i + 2) if state != "WAITING" else None,
                    "containerNodeName": "worker-%d" % (i + 1) if state != "WAITING" else None,
                    "containerPorts": {"ssh": 20000 + i, "http": 20100 + i} if state != "WAITING" else {},
                    "containerGpus": 1 if state != "WAITING" else None,
                    "containerLog": "%s/log-manager/%s/%s/%d/" % (origin, job["name"], tr, i),
                    "containerExitCode": real_code if real_state else job["exitCode"] if done else None,
                    "containerExitSpec": exit_spec, "containerExitDiagnostics": None,
                })
            roles[tr] = {"taskRoleStatus": {"name": tr}, "taskStatuses": tasks}
        return {"name": job["name"], "tags": job["tags"], "debugId": s["debugId"], "jobStatus": status,
                "taskRoles": roles}

    def _job(self, user, ident, rest, query, body):
        st = self.st
        m = self.command
        with st.lock:
            job = st.jobs.get(ident)
            if job is None:
                return self._error(404, "NoJobError", "Job %s is not found." % ident)
            owner_or_admin = job["user"] == user or self._is_admin(user)
            if rest == "" and m == "GET":
                detail = self._detail(job)
                st.advance(job)
                return self._send(200, detail)
            if rest == "/config" and m == "GET":
                return self._send(200, job["config"], "text/yaml; charset=utf-8")
            if rest == "/events" and m == "GET":
                # REST v2: the Kubernetes events of the job's pods, ?type=Warning|Normal.
                events = [e for e in job.get("events", [])
                          if not query.get("type") or e.get("type") == query["type"]]
                return self._send(200, {"totalCount": len(events), "data": events})
            if rest == "/executionType" and m == "PUT":
                try:
                    value = json.loads(body or b"{}").get("value")
                except ValueError:
                    value = None
                if value not in ("START", "STOP"):
                    return self._error(400, "InvalidParametersError", 'child "value" fails because ["value" must be one of [START, STOP]]')
                if not owner_or_admin:
                    return self._error(403, "ForbiddenUserError", "User %s is not allowed to execute job %s." % (user, ident))
                job["executionType"] = value
                if value == "STOP" and st.state_of(job) not in ("SUCCEEDED", "FAILED", "STOPPED"):
                    job["plan"] = ["STOPPING", "STOPPED"]
                    job["step"] = 0
                    st.stop_tasks(job)
                return self._send(202, {"status": 202, "message": "Execute job %s successfully." % ident})
            if rest == "/tag" and m in ("PUT", "DELETE"):
                try:
                    value = json.loads(body or b"{}").get("value")
                except ValueError:
                    value = None
                if not isinstance(value, str) or not value or "," in value:
                    return self._error(400, "InvalidParametersError", 'child "value" fails because ["value" with value "%s" fails to match the required pattern]' % value)
                if not owner_or_admin:
                    return self._error(403, "ForbiddenUserError", "User %s is not allowed to add tag to job %s." % (user, ident))
                if m == "PUT":
                    if value not in job["tags"]:
                        job["tags"].append(value)
                    return self._send(200, {"status": 200, "message": "Add tag %s for job %s successfully." % (value, ident)})
                if value not in job["tags"]:
                    return self._error(404, "NoTagError", "Tag %s is not found." % value)
                job["tags"].remove(value)
                return self._send(200, {"status": 200, "message": "Delete tag %s from job %s successfully." % (value, ident)})
            mja = re.match(r"^/job-attempts(?:/(\d+))?$", rest)
            if mja and m == "GET":
                s = self._summary(job)
                items = []
                for a, e in enumerate(job["jobAttempts"]):
                    spec = exit_spec(e.get("exitType", "USER_FAILURE"), e.get("exitCode"), e.get("exitPhrase"))
                    items.append({"jobName": job["name"], "frameworkName": ident, "userName": job["user"],
                                  "state": e.get("state", "FAILED"), "attemptIndex": a,
                                  "jobStartedTime": s["submissionTime"],
                                  "attemptStartedTime": e.get("startedTime", s["submissionTime"]),
                                  "attemptCompletedTime": e.get("completedTime", s["submissionTime"]),
                                  "exitCode": spec["code"], "exitPhrase": spec["phrase"], "exitType": spec["type"],
                                  "appExitSpec": spec, "totalGpuNumber": job["gpus"],
                                  "totalTaskNumber": s["totalTaskNumber"], "taskRoles": {}, "isLatest": False})
                state = s["state"]
                spec = exit_spec_of(job) if state == "FAILED" else None
                items.append({"jobName": job["name"], "frameworkName": ident, "userName": job["user"],
                              "state": state, "attemptIndex": len(job["jobAttempts"]),
                              "jobStartedTime": s["submissionTime"],
                              "attemptStartedTime": s["launchedTime"] or s["createdTime"],
                              "attemptCompletedTime": s["completedTime"],
                              "exitCode": s["appExitCode"], "exitPhrase": spec["phrase"] if spec else None,
                              "exitType": spec["type"] if spec else None, "appExitSpec": spec,
                              "totalGpuNumber": job["gpus"], "totalTaskNumber": s["totalTaskNumber"],
                              "taskRoles": {}, "isLatest": True})
                if mja.group(1) is not None:
                    i = int(mja.group(1))
                    if i >= len(items):
                        return self._error(404, "NoJobError", "Attempt %d of job %s is not found." % (i, ident))
                    return self._send(200, items[i])
                return self._send(200, items)
            ma = re.match(r"^/attempts/(\d+)/taskRoles/([^/]+)/taskIndex/(\d+)/attempts$", rest)
            if ma and m == "GET":
                tr, idx = ma.group(2), int(ma.group(3))
                if tr not in job["taskRoles"] or idx >= job["taskRoles"][tr]:
                    return self._error(404, "NoTaskError", "Task %s[%d] is not found." % (tr, idx))
                task = self._detail(job)["taskRoles"][tr]["taskStatuses"][idx]
                attempts = []
                earlier = job["taskAttempts"].get("%s/%d" % (tr, idx))
                if earlier is None:
                    # No history in the scenario: one failed attempt per job retry.
                    earlier = [{"exitCode": 137, "exitType": "USER_FAILURE"}] * job["retries"]
                for a, e in enumerate(earlier):
                    created = e.get("createdTime", task["createdTime"])
                    attempts.append({"attemptId": a, "attemptState": e.get("state", "FAILED"),
                                     "currentAttemptCreatedTime": created,
                                     "currentAttemptLaunchedTime": e.get("launchedTime", created),
                                     "currentAttemptCompletedTime": e.get("completedTime", created),
                                     "containerId": "c-%s-%d-%d" % (tr, idx, a),
                                     "containerIp": "10.0.1.%d" % (a + 2),
                                     "containerNodeName": e.get("node", "worker-%d" % (a + 1)),
                                     "containerExitCode": e.get("exitCode", 1),
                                     "containerExitSpec": exit_spec(e.get("exitType", "USER_FAILURE"), e.get("exitCode"),
                                                                    e.get("exitPhrase"))})
                attempts.append({"attemptId": len(earlier), "attemptState": task["taskState"],
                                 "currentAttemptCreatedTime": task["createdTime"],
                                 "currentAttemptLaunchedTime": task["launchedTime"],
                                 "currentAttemptCompletedTime": task["completedTime"],
                                 "containerId": task["containerId"], "containerIp": task["containerIp"],
                                 "containerNodeName": task["containerNodeName"],
                                 "containerExitCode": task["containerExitCode"],
                                 "containerExitSpec": task["containerExitSpec"]})
                task = dict(task)
                task["attempts"] = attempts
                return self._send(200, task)
            ml = re.match(r"^/attempts/(\d+)/taskRoles/([^/]+)/taskIndex/(\d+)/attempts/(\d+)/logs$", rest)
            if ml and m == "GET":
                tr, idx = ml.group(2), int(ml.group(3))
                if tr not in job["taskRoles"] or idx >= job["taskRoles"][tr] or st.state_of(job) == "WAITING":
                    return self._error(404, "NoTaskLogError", "Log of task is not found.")
                tail = "true" if query.get("tail-mode") == "true" else "false"
                base = "%s/log-manager/%s/%s/%d" % (self._origin(), ident, tr, idx)
                return self._send(200, {"locations": [
                    {"name": n, "uri": "%s/%s?token=log-secret-%s&tail-mode=%s" % (base, n, n, tail)}
                    for n in ("stdout", "stderr", "all")]})
        return self._error(404, "NoApiError", "API %s is not found." % self.path)

    def _log_content(self, path, query):
        parts = path.split("/")
        stream = parts[-1] if parts else "all"
        text = self.st.log_text
        # /log-manager/USER~NAME/TR/IDX/STREAM: a growing log from the scenario.
        if len(parts) >= 6:
            with self.st.lock:
                job = self.st.jobs.get(parts[2])
                log = job["logs"].get("%s/%s" % (parts[3], parts[4])) if job else None
                if log is not None and stream != "stderr":
                    if self.st.state_of(job) in ("SUCCEEDED", "FAILED", "STOPPED"):
                        log["shown"] = len(log["lines"])
                    else:
                        log["shown"] = min(len(log["lines"]), log["shown"] + log["perFetch"])
                    text = "".join(line + "\n" for line in log["lines"][:log["shown"]])
        if stream == "stderr":
            text = "warning: something on stderr\n"
        # /log-manager/USER~NAME/ROLE/INDEX/STREAM of a really running task: its output.
        if len(parts) >= 6:
            with self.st.lock:
                job = self.st.jobs.get(urllib.parse.unquote(parts[2]))
                entry = job.get("procs", {}).get("%s/%s" % (parts[3], parts[4])) if job else None
            if entry is not None:
                files = [entry["stdout"], entry["stderr"]] if stream == "all" else [entry.get(stream, entry["stdout"])]
                text = ""
                for name in files:
                    with open(name, "rb") as f:
                        text += f.read().decode("utf-8", "replace")
        if query.get("tail-mode") == "true":
            text = "".join(text.splitlines(True)[-2:])
        data = text.encode()
        rng = re.match(r"^bytes=(\d+)-$", self.headers.get("Range", ""))
        if rng and query.get("tail-mode") != "true":
            start = int(rng.group(1))
            if start >= len(data):
                return self._send(416, b"", "text/plain", {"Content-Range": "bytes */%d" % len(data)})
            return self._send(206, data[start:], "text/plain; charset=utf-8",
                              {"Content-Range": "bytes %d-%d/%d" % (start, len(data) - 1, len(data))})
        self._send(200, data, "text/plain; charset=utf-8")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--prefix", default="/rest-server")
    ap.add_argument("--name", default="pai")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--latency-ms", type=int, default=0, help="delay every API answer (benchmarks)")
    args = ap.parse_args()
    with open(args.scenario) as f:
        scenario = json.load(f)
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.state = State(scenario, args.name)
    srv.prefix = args.prefix.rstrip("/")
    srv.latency = args.latency_ms / 1000.0
    srv.tls = False
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        srv.tls = True
    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.replace(tmp, args.port_file)
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        srv.state.stop_all()
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
