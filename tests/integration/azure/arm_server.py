#!/usr/bin/env python3
"""A test double of Azure Resource Manager and the Microsoft identity platform on loopback.

It follows the documented contract (Azure/azure-resource-manager-rpc v1.0:
resource-api-reference.md, async-api-reference.md, common-api-details.md; the
REST references of Microsoft.Resources, Microsoft.Network and Microsoft.Compute),
reduced to what paictl creates:

  * the token endpoint POST /{tenant}/oauth2/v2.0/token (client credentials with a
    client secret or a client assertion), its OpenID discovery document, and a
    managed-identity endpoint GET /msi/token (X-IDENTITY-HEADER);
  * resource groups (synchronous PUT, asynchronous DELETE with Location);
  * virtual networks with inline subnets (and GET of a subnet), network security
    groups (with defaultSecurityRules), public IP addresses, virtual machine scale
    sets: PUT answers 201 (created) or 200 (updated) with a non-terminal
    provisioningState and Azure-AsyncOperation; DELETE answers 202 with Location
    (and Azure-AsyncOperation); both finish after a number of polls;
  * a scale set's VMs (.../virtualMachines) and network interfaces
    (.../networkInterfaces) with private IPs from the subnet, paged by nextLink;
    GET and DELETE of one VM (.../virtualMachines/{instanceId}): DELETE answers
    202 with Azure-AsyncOperation and Location and, when the operation finishes,
    the VM goes with its NIC and OS disk (Uniform orchestration: both belong to
    the instance) and the scale set's sku.capacity drops by one;
  * If-None-Match: * (412 when present), 404 for an absent resource group,
    400 for references to resources that do not exist, no api-version, no location;
  * every answer carries x-ms-request-id, x-ms-correlation-request-id and
    x-ms-ratelimit-remaining-subscription-reads/-writes.

For tests it also:
  * records every request (GET /__control/requests; POST /__control/reset clears
    the log, the faults and every resource): method, path, query, kind
    (token/arm/poll/list), status, x-ms-client-request-id, the time, and whether a
    poll came before the Retry-After of the answer before it ("early");
    token request bodies and Authorization headers are never recorded;
  * injects faults (POST /__control/fail, a list or one object):
      {"path": REGEX, "method": "PUT", "kind": "arm|poll|token|list", "status": 429,
       "count": 1, "retryAfter": 1, "code": "...", "message": "...",
       "shape": "error|compute", "close": false, "body": "TEXT"}
    ("body": the answer's body as it is, any status, 200 included: a proxy's HTML
    page, a body that is not JSON or holds a number out of range such as 1e400);
    (POST /__control/clear-faults drops them all) and failed operations
    (POST /__control/fail-operation
      {"path": REGEX, "method": "PUT", "count": 1, "code": "...", "message": "..."});
  * takes settings (POST /__control/config): {"polls": 2, "retryAfter": 1,
    "pageSize": 50, "tokenLifetime": 3600, "omitRetryAfter": false,
    "remainingReads": 11999, "remainingWrites": 1199} (each answer counts one down);
  * hands out given names and addresses to the VMs it creates next
    (POST /__control/vm-hosts [{"computerName": ..., "privateIp": ...}, ...]), so
    that test hosts (sshd on loopback) can stand in for new VMs; an entry with
    "scaleSet": NAME goes to a VM of that scale set only (scale sets are created
    concurrently);

Usage: arm_server.py --port-file F --tls-cert C --tls-key K [--port 0]
       [--client-id ID] [--client-secret-file F] [--assertion-file F]
       [--identity-header-file F] [--polls N] [--retry-after S]
Secrets come from files so that they never appear in a process list.
"""

import argparse
import base64
import ipaddress
import json
import os
import re
import secrets as pysecrets
import signal
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ASYNC_TYPES = {
    "microsoft.network/virtualnetworks",
    "microsoft.network/networksecuritygroups",
    "microsoft.network/publicipaddresses",
    "microsoft.compute/virtualmachinescalesets",
}
KNOWN_TYPES = ASYNC_TYPES | {"microsoft.network/virtualnetworks/subnets"}
TERMINAL = ("Succeeded", "Failed", "Canceled")


def read_secret(path):
    if not path:
        return None
    with open(path) as f:
        return f.read().strip()


class State:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.client_id = args.client_id
        self.client_secret = read_secret(args.client_secret_file)
        self.assertion = read_secret(args.assertion_file)
        self.identity_header = read_secret(args.identity_header_file)
        self.default_polls = args.polls
        self.default_retry_after = args.retry_after
        self.reset()

    def reset(self):
        self.resources = {}  # lower-case id -> resource dict
        self.operations = {}  # op id -> dict
        self.tokens = {}  # token -> expiry (epoch)
        self.requests = []
        self.faults = []
        self.op_faults = []
        self.polls = self.default_polls
        self.retry_after = self.default_retry_after
        self.page_size = 50
        self.token_lifetime = 3600
        self.omit_retry_after = False
        self.reads = 11999
        self.writes = 1199
        self.last_answer = {}  # poll URL path -> (time, retry-after)
        self.seq = 0
        self.vm_hosts = []  # [{"computerName", "privateIp"}] for the next VMs created


def public(res):
    """A copy of a stored resource without the server's own bookkeeping (keys starting with _)."""
    if res is None:
        return None
    return {k: json.loads(json.dumps(v)) for k, v in res.items() if not k.startswith("_")}


def arm_error(code, message, details=None):
    e = {"code": code, "message": message}
    if details:
        e["details"] = details
    return {"error": e}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "arm-test"

    def log_message(self, fmt, *args):
        sys.stdout.write("%s %s\n" % (self.command, fmt % args))
        sys.stdout.flush()

    @property
    def st(self):
        return self.server.state

    def do_GET(self):
        self._dispatch()

    def do_PUT(self):
        self._dispatch()

    def do_DELETE(self):
        self._dispatch()

    def do_POST(self):
        self._dispatch()

    def do_PATCH(self):
        self._dispatch()

    def do_HEAD(self):
        self._dispatch()

    # ------------------------------------------------------------------ plumbing

    def _read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def _send(self, status, body=None, headers=None):
        data = b""
        if body is not None:
            data = (json.dumps(body) if not isinstance(body, (bytes, str)) else body)
            if isinstance(data, str):
                data = data.encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        crid = self.headers.get("x-ms-client-request-id")
        self.send_header("x-ms-request-id", str(uuid.uuid4()))
        self.send_header("x-ms-correlation-request-id", crid or str(uuid.uuid4()))
        if crid:
            self.send_header("x-ms-client-request-id", crid)
        if getattr(self, "_arm", False):
            with self.st.lock:
                if self.command == "GET":
                    self.st.reads -= 1
                    self.send_header("x-ms-ratelimit-remaining-subscription-reads", str(self.st.reads))
                else:
                    self.st.writes -= 1
                    self.send_header("x-ms-ratelimit-remaining-subscription-writes", str(self.st.writes))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if data and self.command != "HEAD":
            self.wfile.write(data)
        self._status = status

    def _record(self, kind, path, query, status, early=False, body=None):
        with self.st.lock:
            self.st.seq += 1
            entry = {
                "seq": self.st.seq,
                "t": time.monotonic(),
                "method": self.command,
                "path": path,
                "query": query,
                "kind": kind,
                "status": status,
                "clientRequestId": self.headers.get("x-ms-client-request-id", ""),
                "ifNoneMatch": self.headers.get("If-None-Match", ""),
                "bearer": (self.headers.get("Authorization") or "").startswith("Bearer "),
                "early": early,
            }
            if body is not None:
                entry["body"] = body
            self.st.requests.append(entry)

    def _base(self):
        return "https://127.0.0.1:%d" % self.server.server_address[1]

    def _dispatch(self):
        self._status = 0
        self._arm = False
        parsed = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(parsed.path)
        query = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
        raw = self._read_body()
        if path.startswith("/__control/"):
            return self._control(path, raw)
        kind = self._kind(path)
        early = False
        if kind == "poll":
            with self.st.lock:
                last = self.st.last_answer.get(path.lower())
            if last and time.monotonic() + 0.05 < last[0] + last[1]:
                early = True
        body_json = None
        if kind == "arm" and self.command == "PUT":
            try:
                body_json = json.loads(raw.decode() or "null")
            except ValueError:
                body_json = None
        fault = self._fault(kind, path)
        if fault is not None:
            self._arm = kind != "token"
            if fault.get("close"):
                self._record(kind, path, query, 0, early, body_json)
                self.close_connection = True
                self.connection.shutdown(2)
                return
            status = fault.get("status", 500)
            headers = {}
            if fault.get("retryAfter") is not None:
                headers["Retry-After"] = str(fault["retryAfter"])
            code = fault.get("code") or ("TooManyRequests" if status == 429 else "InternalServerError")
            message = fault.get("message") or "injected fault"
            if fault.get("body") is not None:
                body = fault["body"]
            elif fault.get("shape") == "compute":
                body = {"code": code, "message": message,
                        "details": [{"code": "TooManyRequests", "target": "HighCostGet30Min", "message": "{}"}]}
                headers["x-ms-ratelimit-remaining-resource"] = "Microsoft.Compute/HighCostGet30Min;0"
            else:
                body = arm_error(code, message)
            self._record(kind, path, query, status, early, body_json)
            self._send(status, body, headers)
            return
        if kind == "token":
            return self._token(path, raw)
        if kind == "msi":
            return self._msi(query)
        if kind == "openid":
            tenant = path.split("/")[1]
            base = self._base() + "/" + tenant
            return self._answer("openid", path, query, 200, {
                "token_endpoint": base + "/oauth2/v2.0/token", "issuer": base + "/v2.0",
                "authorization_endpoint": base + "/oauth2/v2.0/authorize",
                "jwks_uri": base + "/discovery/v2.0/keys"})
        if kind == "instance":
            return self._answer("openid", path, query, 200, {
                "tenant_discovery_endpoint": self._base() + "/common/v2.0/.well-known/openid-configuration",
                "metadata": []})
        self._arm = True
        if not self._authorized():
            return self._answer(kind, path, query, 401, arm_error(
                "InvalidAuthenticationToken", "The access token is invalid or has expired."), req=body_json)
        if "api-version" not in query:
            return self._answer(kind, path, query, 400, arm_error(
                "MissingApiVersionParameter",
                "The api-version query parameter (?api-version=) is required for all requests."), req=body_json)
        if kind == "poll":
            return self._poll(path, query)
        return self._resource(path, query, body_json, raw)

    def _answer(self, kind, path, query, status, body=None, headers=None, early=False, req=None):
        self._record(kind, path, query, status, early, req)
        self._send(status, body, headers)

    def _kind(self, path):
        p = path.lower()
        if p.endswith("/oauth2/v2.0/token"):
            return "token"
        if p == "/msi/token":
            return "msi"
        if p.endswith("/.well-known/openid-configuration"):
            return "openid"
        if p.endswith("/common/discovery/instance"):
            return "instance"
        if "/operations/" in p or "/operationresults/" in p:
            return "poll"
        if p.endswith("/virtualmachines") or p.endswith("/networkinterfaces") or p.endswith("/resources"):
            return "list"
        parts = [x for x in p.split("/") if x]
        if len(parts) == 7 and parts[4] == "providers" and self.command == "GET":
            return "list"
        return "arm"

    def _fault(self, kind, path):
        with self.st.lock:
            for f in self.st.faults:
                if f.get("count", 1) == 0:
                    continue
                if f.get("kind") and f["kind"] != kind:
                    continue
                if f.get("method") and f["method"] != self.command:
                    continue
                if f.get("path") and not re.search(f["path"], path, re.IGNORECASE):
                    continue
                if f.get("count", 1) > 0:
                    f["count"] = f.get("count", 1) - 1
                return dict(f)
        return None

    def _control(self, path, raw):
        body = json.loads(raw.decode() or "{}") if raw else {}
        st = self.st
        if path == "/__control/requests":
            with st.lock:
                return self._send(200, list(st.requests))
        if path == "/__control/reset":
            with st.lock:
                st.reset()
            return self._send(200, {})
        if path == "/__control/clear-requests":
            with st.lock:
                st.requests = []
            return self._send(200, {})
        if path == "/__control/fail":
            with st.lock:
                st.faults.extend(body if isinstance(body, list) else [body])
            return self._send(200, {})
        if path == "/__control/clear-faults":
            with st.lock:
                st.faults = []
                st.op_faults = []
            return self._send(200, {})
        if path == "/__control/fail-operation":
            with st.lock:
                st.op_faults.append(body)
            return self._send(200, {})
        if path == "/__control/config":
            with st.lock:
                st.polls = body.get("polls", st.polls)
                st.retry_after = body.get("retryAfter", st.retry_after)
                st.page_size = body.get("pageSize", st.page_size)
                st.token_lifetime = body.get("tokenLifetime", st.token_lifetime)
                st.omit_retry_after = body.get("omitRetryAfter", st.omit_retry_after)
                st.reads = body.get("remainingReads", st.reads)
                st.writes = body.get("remainingWrites", st.writes)
            return self._send(200, {})
        if path == "/__control/vm-hosts":
            with st.lock:
                st.vm_hosts.extend(body if isinstance(body, list) else [body])
            return self._send(200, {})
        if path == "/__control/resources":
            with st.lock:
                return self._send(200, [public(r) for r in st.resources.values()])
        if path == "/__control/expire-tokens":
            with st.lock:
                st.tokens = {}
            return self._send(200, {})
        return self._send(404, {"error": "no such control path"})

    # ------------------------------------------------------------------ identity

    def _token(self, path, raw):
        form = dict(urllib.parse.parse_qsl(raw.decode(errors="replace")))
        query = {"keys": sorted(form.keys())}
        st = self.st

        def refuse(status, err, desc, code):
            self._record("token", path, query, status)
            self._send(status, {"error": err, "error_description": desc, "error_codes": [code],
                                "timestamp": time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())})

        if self.command != "POST":
            return refuse(405, "invalid_request", "AADSTS900561: The endpoint only accepts POST requests.", 900561)
        if form.get("grant_type") != "client_credentials":
            return refuse(400, "unsupported_grant_type", "AADSTS70003: unsupported grant type.", 70003)
        scope = form.get("scope", "")
        if not scope.endswith("/.default"):
            return refuse(400, "invalid_scope", "AADSTS1002012: The provided value for scope is not valid.", 1002012)
        if st.client_id and form.get("client_id") != st.client_id:
            return refuse(400, "unauthorized_client",
                          "AADSTS700016: Application with identifier '%s' was not found in the directory." %
                          form.get("client_id", ""), 700016)
        if "client_secret" in form:
            if st.client_secret is None or form["client_secret"] != st.client_secret:
                return refuse(401, "invalid_client", "AADSTS7000215: Invalid client secret provided.", 7000215)
        elif "client_assertion" in form:
            if form.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
                return refuse(400, "invalid_request", "AADSTS50027: Invalid client_assertion_type.", 50027)
            if st.assertion is None or form["client_assertion"] != st.assertion:
                return refuse(401, "invalid_client", "AADSTS700024: Client assertion is not within its valid time range.", 700024)
        else:
            return refuse(401, "invalid_client", "AADSTS7000218: The request body must contain client_assertion or client_secret.", 7000218)
        token = "arm-" + pysecrets.token_hex(16)
        with st.lock:
            lifetime = st.token_lifetime
            st.tokens[token] = time.time() + lifetime
        self._record("token", path, query, 200)
        self._send(200, {"token_type": "Bearer", "expires_in": lifetime, "ext_expires_in": lifetime,
                         "access_token": token})

    def _msi(self, query):
        st = self.st
        if st.identity_header is None or self.headers.get("X-IDENTITY-HEADER") != st.identity_header:
            self._record("msi", "/msi/token", query, 401)
            return self._send(401, {"error": "unauthorized", "error_description": "X-IDENTITY-HEADER is missing or wrong"})
        if not query.get("resource"):
            self._record("msi", "/msi/token", query, 400)
            return self._send(400, {"error": "invalid_request", "error_description": "resource is required"})
        token = "msi-" + pysecrets.token_hex(16)
        with st.lock:
            lifetime = st.token_lifetime
            st.tokens[token] = time.time() + lifetime
        self._record("msi", "/msi/token", query, 200)
        self._send(200, {"access_token": token, "expires_on": str(int(time.time() + lifetime)),
                         "resource": query["resource"], "token_type": "Bearer"})

    def _authorized(self):
        auth = self.headers.get("Authorization") or ""
        if not auth.startswith("Bearer "):
            return False
        with self.st.lock:
            exp = self.st.tokens.get(auth[7:])
        return exp is not None and exp > time.time()

    # ------------------------------------------------------------------ resources

    def _parse_id(self, path):
        """(sub, rg, type, name, parent_key) or None. Type is lower-case 'ns/type[/child]'."""
        parts = [p for p in path.split("/") if p]
        if len(parts) < 2 or parts[0].lower() != "subscriptions":
            return None
        sub = parts[1]
        if len(parts) == 4 and parts[2].lower() == "resourcegroups":
            return (sub, parts[3], "microsoft.resources/resourcegroups", parts[3])
        if len(parts) >= 8 and parts[2].lower() == "resourcegroups" and parts[4].lower() == "providers":
            rg = parts[3]
            ns = parts[5]
            rest = parts[6:]
            if len(rest) % 2 != 0:
                rest_type = "/".join(x.lower() for x in rest[0::2])
                return (sub, rg, ns.lower() + "/" + rest_type, None)
            types = [rest[i].lower() for i in range(0, len(rest), 2)]
            return (sub, rg, ns.lower() + "/" + "/".join(types), rest[-1])
        return None

    def _rg_key(self, sub, rg):
        return ("/subscriptions/%s/resourcegroups/%s" % (sub, rg)).lower()

    def _resource(self, path, query, body, raw):
        parts = [p for p in path.split("/") if p]
        if len(parts) == 5 and parts[2].lower() == "resourcegroups" and parts[4].lower() == "resources":
            return self._list_group(path, query, parts[1], parts[3], None)
        if len(parts) == 7 and parts[2].lower() == "resourcegroups" and parts[4].lower() == "providers" \
                and self.command == "GET":
            return self._list_group(path, query, parts[1], parts[3], (parts[5] + "/" + parts[6]).lower())
        ident = self._parse_id(path)
        if ident is None:
            return self._answer("arm", path, query, 404, arm_error("InvalidResourceType", "no such path " + path))
        sub, rg, rtype, name = ident
        if name is None:
            return self._list_children(path, query, sub, rg, rtype)
        key = path.lower().rstrip("/")
        if rtype == "microsoft.compute/virtualmachinescalesets/virtualmachines":
            return self._instance(path, query, key, sub)
        if rtype != "microsoft.resources/resourcegroups":
            if rtype not in KNOWN_TYPES:
                return self._answer("arm", path, query, 400, arm_error(
                    "InvalidResourceType", "The resource type '%s' could not be found." % rtype))
            with self.st.lock:
                rg_exists = self._rg_key(sub, rg) in self.st.resources
            if not rg_exists:
                return self._answer("arm", path, query, 404, arm_error(
                    "ResourceGroupNotFound", "Resource group '%s' could not be found." % rg), req=body)
        if self.command == "HEAD":  # check existence: 204 or 404, no body
            with self.st.lock:
                exists = key in self.st.resources
            return self._answer("arm", path, query, 204 if exists else 404)
        if self.command == "GET":
            return self._get(path, query, key, rtype)
        if self.command == "PUT":
            return self._put(path, query, key, rtype, sub, rg, name, body)
        if self.command == "DELETE":
            return self._delete(path, query, key, rtype, sub)
        return self._answer("arm", path, query, 405, arm_error("MethodNotAllowed", self.command))

    def _get(self, path, query, key, rtype):
        with self.st.lock:
            res = self.st.resources.get(key)
            if res is None and rtype == "microsoft.network/virtualnetworks/subnets":
                vnet = self.st.resources.get(key.rsplit("/subnets/", 1)[0])
                if vnet:
                    for s in vnet["properties"].get("subnets", []):
                        if s["id"].lower() == key:
                            res = s
            res = public(res)
        if res is None:
            return self._answer("arm", path, query, 404, arm_error(
                "ResourceNotFound", "The Resource '%s' under resource group was not found." % path.split("/")[-1]))
        return self._answer("arm", path, query, 200, res)

    def _ref_exists(self, ref_id):
        key = ref_id.lower()
        if key in self.st.resources:
            return True
        if "/subnets/" in key:
            vnet = self.st.resources.get(key.rsplit("/subnets/", 1)[0])
            return bool(vnet) and any(s["id"].lower() == key for s in vnet["properties"].get("subnets", []))
        return False

    def _refs(self, obj):
        """Every {"id": ...} reference inside a body."""
        out = []
        if isinstance(obj, dict):
            for k, v in obj.items():
                if k == "id" and isinstance(v, str) and v.lower().startswith("/subscriptions/"):
                    out.append(v)
                else:
                    out.extend(self._refs(v))
        elif isinstance(obj, list):
            for v in obj:
                out.extend(self._refs(v))
        return out

    def _put(self, path, query, key, rtype, sub, rg, name, body):
        st = self.st
        if not isinstance(body, dict):
            return self._answer("arm", path, query, 400, arm_error("InvalidRequestContent", "The request content was invalid and could not be deserialized."))
        if rtype == "microsoft.network/virtualnetworks/subnets":
            return self._answer("arm", path, query, 400, arm_error("InvalidRequestFormat", "paictl's test server keeps subnets inline in the virtual network"))
        if not body.get("location"):
            return self._answer("arm", path, query, 400, arm_error("LocationRequired", "The location property is required for this definition."), req=body)
        with st.lock:
            existing = st.resources.get(key)
        if self.headers.get("If-None-Match") == "*" and existing is not None:
            return self._answer("arm", path, query, 412, arm_error("PreconditionFailed", "The resource already exists."), req=body)
        if existing is not None and existing.get("location", "").lower() != body["location"].lower():
            return self._answer("arm", path, query, 409, arm_error("InvalidResourceLocation", "The resource '%s' already exists in location '%s'." % (name, existing.get("location"))), req=body)
        if existing is not None and existing["properties"].get("provisioningState") not in TERMINAL:
            return self._answer("arm", path, query, 409, arm_error(
                "AnotherOperationInProgress",
                "Operation on '%s' is not allowed: another operation is in progress." % name), req=body)
        with st.lock:
            for ref in self._refs(body.get("properties", {})):
                if ref.lower().startswith(key + "/"):
                    continue  # a reference into itself (a subnet of this VNet)
                if not self._ref_exists(ref):
                    missing = ref
                    break
            else:
                missing = None
        if missing:
            return self._answer("arm", path, query, 400, arm_error(
                "InvalidResourceReference", "Resource %s referenced by resource %s was not found." % (missing, path)), req=body)
        if rtype == "microsoft.compute/virtualmachinescalesets":
            err = self._check_vmss(body)
            if err:
                return self._answer("arm", path, query, 400, arm_error(*err), req=body)
        canonical = path.rstrip("/")
        res = json.loads(json.dumps(body))
        res["id"] = canonical
        res["name"] = name
        res["type"] = self._type_name(canonical, rtype)
        res.setdefault("properties", {})
        res.setdefault("tags", {})
        status = 200 if existing is not None else 201
        if rtype == "microsoft.resources/resourcegroups":
            res["properties"] = {"provisioningState": "Succeeded"}
            with st.lock:
                st.resources[key] = res
            return self._answer("arm", path, query, status, res, req=body)
        self._decorate(res, rtype, existing)
        res["properties"]["provisioningState"] = "Updating" if existing else "Creating"
        headers = {}
        with st.lock:
            st.resources[key] = res
            op = self._new_operation(sub, res["location"], key, "put", existing)
            headers = self._op_headers(op, "Azure-AsyncOperation")
            out = public(res)
        return self._answer("arm", path, query, status, out, headers, req=body)

    def _check_vmss(self, body):
        sku = body.get("sku") or {}
        if not sku.get("name") or not isinstance(sku.get("capacity"), int):
            return ("InvalidParameter", "sku.name and sku.capacity are required.")
        vmp = (body.get("properties") or {}).get("virtualMachineProfile") or {}
        osp = vmp.get("osProfile") or {}
        if not osp.get("adminUsername"):
            return ("InvalidParameter", "Required parameter 'adminUsername' is missing (null).")
        linux = osp.get("linuxConfiguration") or {}
        keys = ((linux.get("ssh") or {}).get("publicKeys")) or []
        if not osp.get("adminPassword") and not keys:
            return ("InvalidParameter", "Either an admin password or an SSH public key is required.")
        if osp.get("customData"):
            try:
                data = base64.b64decode(osp["customData"], validate=True)
            except ValueError:
                return ("InvalidParameter", "customData must be base64.")
            if len(data) > 65535:
                return ("InvalidParameter", "customData is longer than 65535 bytes.")
        nics = ((vmp.get("networkProfile") or {}).get("networkInterfaceConfigurations")) or []
        if not nics:
            return ("InvalidParameter", "networkInterfaceConfigurations is required.")
        return None

    def _type_name(self, canonical, rtype):
        if rtype == "microsoft.resources/resourcegroups":
            return "Microsoft.Resources/resourceGroups"
        parts = [p for p in canonical.split("/") if p]
        ns = parts[5]
        rest = parts[6:]
        return ns + "/" + "/".join(rest[i] for i in range(0, len(rest), 2))

    def _decorate(self, res, rtype, existing):
        props = res["properties"]
        res["etag"] = 'W/"%s"' % uuid.uuid4()
        if rtype == "microsoft.network/virtualnetworks":
            for s in props.get("subnets", []):
                s["id"] = res["id"] + "/subnets/" + s["name"]
                s["type"] = "Microsoft.Network/virtualNetworks/subnets"
                s.setdefault("properties", {})["provisioningState"] = "Succeeded"
        elif rtype == "microsoft.network/networksecuritygroups":
            props["defaultSecurityRules"] = [
                {"name": n, "properties": {"priority": p, "direction": d, "access": a}}
                for n, p, d, a in [("AllowVnetInBound", 65000, "Inbound", "Allow"),
                                   ("AllowAzureLoadBalancerInBound", 65001, "Inbound", "Allow"),
                                   ("DenyAllInBound", 65500, "Inbound", "Deny"),
                                   ("AllowVnetOutBound", 65000, "Outbound", "Allow"),
                                   ("AllowInternetOutBound", 65001, "Outbound", "Allow"),
                                   ("DenyAllOutBound", 65500, "Outbound", "Deny")]]
            for r in props.get("securityRules", []):
                r["id"] = res["id"] + "/securityRules/" + r["name"]
        elif rtype == "microsoft.network/publicipaddresses":
            if props.get("publicIPAllocationMethod", "Static") == "Static":
                old = (existing or {}).get("properties", {}).get("ipAddress")
                props["ipAddress"] = old or "198.51.100.%d" % (len(self.st.resources) % 250 + 1)
        elif rtype == "microsoft.compute/virtualmachinescalesets":
            props["uniqueId"] = (existing or {}).get("properties", {}).get("uniqueId") or str(uuid.uuid4())
            # An update keeps the VMs there are (a new capacity adds or removes the newest).
            for k in ("_instances", "_nextInstance"):
                if existing is not None and k in existing:
                    res[k] = existing[k]
            vmp = props.get("virtualMachineProfile", {})
            osp = vmp.get("osProfile", {})
            osp.pop("adminPassword", None)  # never returned
            osp.pop("customData", None)  # never returned

    def _new_operation(self, sub, location, key, what, existing):
        """Holds st.lock."""
        st = self.st
        op_id = str(uuid.uuid4())
        op = {"id": op_id, "sub": sub, "location": location, "key": key, "what": what,
              "polls": st.polls, "status": "InProgress", "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "existing": existing, "error": None, "retryAfter": st.retry_after}
        for f in st.op_faults:
            if f.get("count", 1) == 0:
                continue
            if f.get("method") and f["method"] != self.command:
                continue
            if f.get("path") and not re.search(f["path"], key, re.IGNORECASE):
                continue
            f["count"] = f.get("count", 1) - 1
            op["error"] = {"code": f.get("code", "InternalOperationError"),
                           "message": f.get("message", "The operation failed."),
                           "details": f.get("details", [])}
            break
        st.operations[op_id] = op
        return op

    def _op_provider(self, key):
        return "Microsoft.Compute" if "/microsoft.compute/" in key else (
            "Microsoft.Network" if "/microsoft.network/" in key else "Microsoft.Resources")

    def _op_headers(self, op, which):
        """Holds st.lock. `which`: Azure-AsyncOperation, Location, or both."""
        st = self.st
        prov = self._op_provider(op["key"])
        base = self._base() + "/subscriptions/%s/providers/%s/locations/%s" % (op["sub"], prov, op["location"] or "global")
        h = {}
        if which in ("Azure-AsyncOperation", "both"):
            h["Azure-AsyncOperation"] = base + "/operations/%s?api-version=2024-07-01" % op["id"]
            st.last_answer[("/subscriptions/%s/providers/%s/locations/%s/operations/%s" % (
                op["sub"], prov, op["location"] or "global", op["id"])).lower()] = (time.monotonic(), op["retryAfter"])
        if which in ("Location", "both"):
            h["Location"] = base + "/operationResults/%s?api-version=2024-07-01" % op["id"]
            st.last_answer[("/subscriptions/%s/providers/%s/locations/%s/operationResults/%s" % (
                op["sub"], prov, op["location"] or "global", op["id"])).lower()] = (time.monotonic(), op["retryAfter"])
        if not st.omit_retry_after:
            h["Retry-After"] = str(op["retryAfter"])
        return h

    def _delete(self, path, query, key, rtype, sub):
        st = self.st
        with st.lock:
            res = st.resources.get(key)
            if res is None:
                pass
            elif res["properties"].get("provisioningState") not in TERMINAL + ("Deleting",):
                res = "busy"
            else:
                res["properties"]["provisioningState"] = "Deleting"
                op = self._new_operation(sub, res.get("location", "global"), key, "delete", None)
                which = "both" if rtype == "microsoft.compute/virtualmachinescalesets" else "Location"
                headers = self._op_headers(op, which)
        if res is None:
            return self._answer("arm", path, query, 204)
        if res == "busy":
            return self._answer("arm", path, query, 409, arm_error(
                "AnotherOperationInProgress", "Another operation on this resource is in progress."))
        return self._answer("arm", path, query, 202, None, headers)

    def _vm_body(self, res, vmss_id, vm):
        """Holds st.lock. One scale set VM as ARM shows it."""
        vm_id = vmss_id + "/virtualMachines/" + vm["instanceId"]
        name = res["name"] + "_" + vm["instanceId"]
        return {"id": vm_id, "name": name, "instanceId": vm["instanceId"],
                "type": "Microsoft.Compute/virtualMachineScaleSets/virtualMachines",
                "location": res["location"], "sku": {"name": res["sku"]["name"]},
                "properties": {"provisioningState": vm.get("state", "Succeeded"), "latestModelApplied": True,
                               "osProfile": {"computerName": vm["computerName"],
                                             "adminUsername": res["properties"]["virtualMachineProfile"]["osProfile"]["adminUsername"]},
                               "storageProfile": {"osDisk": {"name": vm["disk"], "createOption": "FromImage",
                                                             "managedDisk": {"id": vmss_id.rsplit("/providers/", 1)[0] +
                                                                             "/providers/Microsoft.Compute/disks/" + vm["disk"]}}},
                               "networkProfile": {"networkInterfaces": [{"id": vm_id + "/networkInterfaces/" + vm["nic"]}]}}}

    def _instance(self, path, query, key, sub):
        """GET or DELETE .../virtualMachineScaleSets/{name}/virtualMachines/{instanceId}."""
        st = self.st
        vmss_key, _, iid = key.rpartition("/virtualmachines/")
        vmss_id = path.rstrip("/").rsplit("/virtualMachines/", 1)[0] if "/virtualMachines/" in path else \
            path.rstrip("/").rsplit("/", 2)[0]
        with st.lock:
            res = st.resources.get(vmss_key)
            vm = None
            if res is not None:
                vm = next((v for v in res.get("_instances", []) if v["instanceId"] == iid), None)
            if self.command == "GET":
                body = self._vm_body(res, vmss_id, vm) if vm else None
            elif self.command == "DELETE" and vm is not None:
                if vm.get("state") == "Deleting":
                    body = "busy"
                else:
                    vm["state"] = "Deleting"
                    op = self._new_operation(sub, res.get("location", "global"), key, "delete-instance", None)
                    body = self._op_headers(op, "both")
        if self.command not in ("GET", "DELETE"):
            return self._answer("arm", path, query, 405, arm_error("MethodNotAllowed", self.command))
        if vm is None:
            if self.command == "DELETE":
                return self._answer("arm", path, query, 204)
            return self._answer("arm", path, query, 404, arm_error(
                "NotFound", "The entity was not found in this Azure location."))
        if self.command == "GET":
            return self._answer("arm", path, query, 200, body)
        if body == "busy":
            return self._answer("arm", path, query, 409, arm_error(
                "AnotherOperationInProgress", "Another operation on this resource is in progress."))
        return self._answer("arm", path, query, 202, None, body)

    def _poll(self, path, query):
        st = self.st
        early = False
        with st.lock:
            last = st.last_answer.get(path.lower())
            if last and time.monotonic() + 0.05 < last[0] + last[1]:
                early = True
            op_id = path.rstrip("/").split("/")[-1]
            op = st.operations.get(op_id)
            if op is None:
                body, status, headers = arm_error("NotFound", "operation %s not found" % op_id), 404, {}
            else:
                if op["status"] == "InProgress":
                    op["polls"] -= 1
                    if op["polls"] <= 0:
                        self._finish(op)
                location = "/operationresults/" in path.lower()
                headers = {}
                if op["status"] == "InProgress":
                    if not st.omit_retry_after:
                        headers["Retry-After"] = str(op["retryAfter"])
                    st.last_answer[path.lower()] = (time.monotonic(), op["retryAfter"])
                if location:
                    if op["status"] == "InProgress":
                        body, status = None, 202
                        headers["Location"] = self._base() + self.path
                    elif op["status"] == "Succeeded":
                        body, status = None, 200
                    else:  # what the synchronous call would have answered
                        body, status = {"error": op["error"]}, 400
                else:
                    body = {"id": path, "name": op_id, "status": op["status"], "startTime": op["start"]}
                    if op["status"] != "InProgress":
                        body["endTime"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                    if op["error"] and op["status"] == "Failed":
                        body["error"] = op["error"]
                    status = 200
        self._record("poll", path, query, status, early)
        self._send(status, body, headers)

    def _finish(self, op):
        """Holds st.lock."""
        st = self.st
        res = st.resources.get(op["key"])
        if op["error"]:
            op["status"] = "Failed"
            if res is not None:
                res["properties"]["provisioningState"] = "Failed"
            return
        op["status"] = "Succeeded"
        if op["what"] == "delete-instance":
            vmss_key, _, iid = op["key"].rpartition("/virtualmachines/")
            vmss = st.resources.get(vmss_key)
            if vmss is not None:
                before = len(vmss.get("_instances", []))
                vmss["_instances"] = [v for v in vmss.get("_instances", []) if v["instanceId"] != iid]
                vmss["sku"]["capacity"] -= before - len(vmss["_instances"])
            return
        if op["what"] == "delete":
            st.resources.pop(op["key"], None)
            prefix = op["key"] + "/"
            if op["key"].count("/") == 4:  # a resource group: everything in it goes
                for k in [k for k in st.resources if k.startswith(prefix)]:
                    st.resources.pop(k, None)
            return
        if res is None:
            return
        res["properties"]["provisioningState"] = "Succeeded"
        if "/virtualmachinescalesets/" in op["key"]:
            self._reconcile_instances(res)

    def _reconcile_instances(self, res):
        """Holds st.lock. Creates or removes VMs to match sku.capacity."""
        vms = res.setdefault("_instances", [])
        cap = res["sku"]["capacity"]
        vmp = res["properties"].get("virtualMachineProfile", {})
        prefix = vmp.get("osProfile", {}).get("computerNamePrefix") or res["name"]
        nic_cfgs = vmp.get("networkProfile", {}).get("networkInterfaceConfigurations", [])
        subnet_id = None
        nic_name = "nic0"
        if nic_cfgs:
            nic_name = nic_cfgs[0].get("name", "nic0")
            ipcs = nic_cfgs[0].get("properties", {}).get("ipConfigurations", [])
            if ipcs:
                subnet_id = ipcs[0].get("properties", {}).get("subnet", {}).get("id")
        next_id = res.setdefault("_nextInstance", 0)
        while len(vms) < cap:
            i = next_id
            next_id += 1
            given = {}
            for k, h in enumerate(self.st.vm_hosts):
                if h.get("scaleSet") in (None, res["name"]):
                    given = self.st.vm_hosts.pop(k)
                    break
            vms.append({"instanceId": str(i), "computerName": given.get("computerName") or "%s%06X" % (prefix, i),
                        "privateIp": given.get("privateIp") or self._allocate_ip(subnet_id), "nic": nic_name,
                        "subnet": subnet_id, "disk": "%s_%s_OsDisk_1" % (res["name"], i)})
        res["_nextInstance"] = next_id
        del vms[cap:]

    def _allocate_ip(self, subnet_id):
        """Holds st.lock. The next free address of the subnet (Azure keeps the first four)."""
        prefix = "10.0.0.0/24"
        if subnet_id:
            vnet = self.st.resources.get(subnet_id.lower().rsplit("/subnets/", 1)[0])
            if vnet:
                for s in vnet["properties"].get("subnets", []):
                    if s["id"].lower() == subnet_id.lower():
                        prefix = s["properties"].get("addressPrefix", prefix)
        used = set()
        for r in self.st.resources.values():
            for vm in r.get("_instances", []):
                used.add(vm["privateIp"])
        net = ipaddress.ip_network(prefix, strict=False)
        for k, host in enumerate(net.hosts()):
            if k < 3:
                continue
            if str(host) not in used:
                return str(host)
        return "0.0.0.0"

    def _list_group(self, path, query, sub, rg, rtype):
        """GET .../resourceGroups/{rg}/resources, or .../providers/{ns}/{type}: top-level resources."""
        st = self.st
        prefix = self._rg_key(sub, rg) + "/providers/"
        with st.lock:
            if self._rg_key(sub, rg) not in st.resources:
                items = None
            else:
                items = []
                for k, r in st.resources.items():
                    if not k.startswith(prefix) or k[len(prefix):].count("/") != 2:
                        continue
                    if rtype and r["type"].lower() != rtype:
                        continue
                    if rtype:
                        items.append(public(r))
                    else:
                        items.append({"id": r["id"], "name": r["name"], "type": r["type"],
                                      "location": r.get("location"), "tags": r.get("tags", {})})
        if items is None:
            return self._answer("list", path, query, 404, arm_error(
                "ResourceGroupNotFound", "Resource group '%s' could not be found." % rg))
        return self._answer("list", path, query, 200, {"value": items})

    def _list_children(self, path, query, sub, rg, rtype):
        """GET .../virtualMachineScaleSets/{name}/virtualMachines or .../networkInterfaces."""
        parts = [p for p in path.split("/") if p]
        if self.command != "GET" or len(parts) != 9 or parts[6].lower() != "virtualmachinescalesets" or \
                parts[8].lower() not in ("virtualmachines", "networkinterfaces"):
            return self._answer("list", path, query, 404, arm_error("InvalidResourceType", "no such collection " + path))
        st = self.st
        vmss_key = "/".join([""] + parts[:8]).lower()
        with st.lock:
            res = st.resources.get(vmss_key)
            vms = json.loads(json.dumps(res.get("_instances", []))) if res else None
            page_size = st.page_size
        if res is None:
            return self._answer("list", path, query, 404, arm_error(
                "ResourceNotFound", "The Resource 'Microsoft.Compute/virtualMachineScaleSets/%s' was not found." % parts[7]))
        vmss_id = "/".join([""] + parts[:8])
        items = []
        for vm in vms:
            vm_id = vmss_id + "/virtualMachines/" + vm["instanceId"]
            nic_id = vm_id + "/networkInterfaces/" + vm["nic"]
            if parts[8].lower() == "virtualmachines":
                items.append(self._vm_body(res, vmss_id, vm))
            else:
                items.append({"id": nic_id, "name": vm["nic"],
                              "properties": {"provisioningState": "Succeeded", "primary": True,
                                             "virtualMachine": {"id": vm_id},
                                             "ipConfigurations": [{"name": "ip0", "id": nic_id + "/ipConfigurations/ip0",
                                                                   "properties": {"privateIPAddress": vm["privateIp"],
                                                                                  "privateIPAllocationMethod": "Dynamic",
                                                                                  "primary": True,
                                                                                  "subnet": {"id": vm["subnet"]}}}]}})
        start = int(query.get("$skiptoken", "0") or 0)
        page = items[start:start + page_size]
        body = {"value": page}
        if start + page_size < len(items):
            q = dict(query)
            q["$skiptoken"] = str(start + page_size)
            body["nextLink"] = self._base() + path + "?" + urllib.parse.urlencode(q)
        return self._answer("list", path, query, 200, body)


class ControlHandler(Handler):
    """Plain HTTP on its own port: only the /__control/ paths."""

    def _dispatch(self):
        self._status = 0
        self._arm = False
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        raw = self._read_body()
        if not path.startswith("/__control/"):
            return self._send(404, {"error": "control port: only /__control/ paths"})
        return self._control(path, raw)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--tls-cert", required=True)
    ap.add_argument("--tls-key", required=True)
    ap.add_argument("--client-id", default="")
    ap.add_argument("--client-secret-file")
    ap.add_argument("--assertion-file")
    ap.add_argument("--identity-header-file")
    ap.add_argument("--control-port-file", help="also serve /__control/ over plain HTTP; its port goes here")
    ap.add_argument("--polls", type=int, default=2, help="polls until an operation finishes")
    ap.add_argument("--retry-after", type=int, default=1, help="Retry-After of operations (s)")
    args = ap.parse_args()
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.state = State(args)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.tls_cert, args.tls_key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)

    control = None
    if args.control_port_file:
        control = Server(("127.0.0.1", 0), ControlHandler)
        control.state = srv.state
        threading.Thread(target=control.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
        tmp = args.control_port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % control.server_address[1])
        os.replace(tmp, args.control_port_file)

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
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
