#!/usr/bin/env python3
"""Records the OpenPAI REST test server's answers as routes for http::FakeClient.

  record_routes.py OUT.json

Starts tests/integration/rest/pai_rest_server.py (scenario "lab") on a free
loopback port, sends the requests the API unit tests make, in their order, and
writes one route per distinct request with its answers in the order they came.
The server's address is replaced by http://pai.test so the recording does not
depend on the port. The unit tests (tests/unit/api) answer from the result
instead of starting a server; run this again when the server or the tests'
requests change.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REST = os.path.join(HERE, "..", "..", "integration", "rest")
FIXED = "http://pai.test"

JOB = ("protocolVersion: 2\nname: api_job\ntype: job\ntaskRoles:\n  main:\n    instances: 2\n"
       "    resourcePerInstance: {cpu: 1, memoryMB: 1024, gpu: 1}\n")
BAD_JOB = ("protocolVersion: 2\nname: bad name\ntype: job\ntaskRoles:\n  t:\n    resourcePerInstance: "
           "{memory: 1}\n")
SECRET_VC_JOB = ("protocolVersion: 2\nname: x\ntype: job\ntaskRoles: {t: {instances: 1}}\ndefaults: "
                 "{virtualCluster: secret-vc}\n")
FORM = "application/x-www-form-urlencoded"


def main():
    out_path = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="paictl-record-")
    port_file = os.path.join(tmp, "port")
    srv = subprocess.Popen([sys.executable, os.path.join(REST, "pai_rest_server.py"),
                            "--scenario", os.path.join(REST, "scenarios", "lab.json"),
                            "--port-file", port_file])
    try:
        for _ in range(500):
            if os.path.exists(port_file):
                break
            time.sleep(0.01)
        base = "http://127.0.0.1:%s" % open(port_file).read().strip()
        routes = []

        def send(method, path, body=None, ctype=None, token=None):
            headers = {"Accept": "application/json"}
            if ctype:
                headers["Content-Type"] = ctype
            if token:
                headers["Authorization"] = "Bearer " + token
            data = body.encode() if body is not None else None
            req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
            try:
                resp = urllib.request.urlopen(req)
                status, rbody, rtype = resp.status, resp.read(), resp.headers.get("Content-Type")
            except urllib.error.HTTPError as e:
                status, rbody, rtype = e.code, e.read(), e.headers.get("Content-Type")
            text = rbody.decode().replace(base, FIXED)
            path_only, _, query = path.partition("?")
            match = {"method": method, "path": path_only.replace("%7E", "~"),
                     "headers": {"authorization": ("Bearer " + token) if token else ""}}
            if query:
                match["query"] = dict(p.split("=", 1) for p in query.split("&"))
                match["query"] = {k: urllib.parse.unquote(v) for k, v in match["query"].items()}
            if body is not None:
                match["body"] = body
            answer = {"status": status, "headers": {"content-type": rtype or ""}, "body": text}
            for r in routes:
                if r["request"] == match:
                    r["responses"].append(answer)
                    break
            else:
                routes.append({"request": match, "responses": [answer]})
            return status, text

        rs = "/rest-server/api/v2"
        send("GET", rs + "/info")
        send("POST", rs + "/authn/basic/login", "username=alice&password=alice-pass-1&expiration=3600", FORM)
        send("POST", rs + "/authn/basic/login", "username=alice&password=nope-nope&expiration=604800", FORM)
        _, text = send("POST", rs + "/authn/basic/login",
                       "username=alice&password=alice-pass-1&expiration=604800", FORM)
        token = json.loads(text)["token"]
        send("GET", rs + "/virtual-clusters")
        send("GET", rs + "/users/alice", token="not-a-token")
        send("GET", rs + "/virtual-clusters", token=token)
        send("GET", rs + "/users/alice", token=token)
        send("GET", rs + "/cluster/sku-types?vc=research", token=token)
        send("GET", rs + "/cluster/sku-types?vc=nope", token=token)
        send("GET", rs + "/storages", token=token)
        # Listed before api_job exists, as in a fresh server.
        send("GET", rs + "/jobs?username=alice&state=SUCCEEDED%2CRUNNING&limit=10", token=token)
        send("POST", rs + "/jobs", JOB, "text/yaml", token)
        send("POST", rs + "/jobs", JOB, "text/yaml", token)
        send("GET", rs + "/jobs/alice~api_job", token=token)
        send("GET", rs + "/jobs/alice~never", token=token)
        send("POST", rs + "/jobs", BAD_JOB, "text/yaml", token)
        send("POST", rs + "/jobs", SECRET_VC_JOB, "text/yaml", token)
        send("PUT", rs + "/jobs/alice~old_job/executionType", '{"value":"STOP"}', "application/json", token)
        send("PUT", rs + "/jobs/bob~bob_job/executionType", '{"value":"STOP"}', "application/json", token)
        send("PUT", rs + "/jobs/alice~old_job/tag", '{"value":"keep"}', "application/json", token)
        send("GET", rs + "/jobs/alice~old_job", token=token)
        send("DELETE", rs + "/jobs/alice~old_job/tag", '{"value":"keep"}', "application/json", token)
        send("DELETE", rs + "/jobs/alice~old_job/tag", '{"value":"keep"}', "application/json", token)
        _, text = send("GET", rs + "/jobs/alice~old_job/attempts/0/taskRoles/tr/taskIndex/0/attempts/0/logs"
                       "?tail-mode=true", token=token)
        log = json.loads(text)["locations"][0]["uri"].replace(FIXED, "")
        send("GET", log, token=token)
        send("GET", rs + "/jobs/alice~old_job/config", token=token)
        send("GET", "/rest-server/api/v3-nope/api/v2/virtual-clusters", token=token)
        with open(out_path, "w") as f:
            json.dump({"recordedFrom": "tests/integration/rest/pai_rest_server.py --scenario lab",
                       "token": token, "routes": routes}, f, indent=1, sort_keys=False)
            f.write("\n")
    finally:
        srv.terminate()
        srv.wait()
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
