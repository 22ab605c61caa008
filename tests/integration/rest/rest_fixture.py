#!/usr/bin/env python3
"""Starts and stops OpenPAI REST test servers for ctest fixtures.

  rest_fixture.py start DIR NAME=SCENARIO [NAME=SCENARIO ...] [--tls]
      starts one server per NAME on a free loopback port (chosen by the
      kernel, so parallel test runs never collide) and writes DIR/NAME.port,
      DIR/NAME.pid, DIR/NAME.log and DIR/env.sh (NAME_PORT=..., NAME_URI=...).
  rest_fixture.py stop DIR
      stops the servers whose pid files are in DIR (SIGTERM, then SIGKILL),
      by pid only.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def python():
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def start(directory, specs):
    try:
        import yaml  # noqa: F401 - the server parses job bodies with PyYAML
    except ImportError:
        sys.stderr.write("SKIP: PyYAML is missing (apt-get install python3-yaml)\n")
        # tests/skip.sh's rule: under PAI_REQUIRE_ALL=1 (CI) a skip is a failure.
        return 1 if os.environ.get("PAI_REQUIRE_ALL") == "1" else 77
    if os.path.isdir(directory):
        stop(directory)
        shutil.rmtree(directory)
    os.makedirs(directory)
    env_lines = []
    procs = []
    for spec in specs:
        name, scenario = spec.split("=", 1)
        port_file = os.path.join(directory, name + ".port")
        log = open(os.path.join(directory, name + ".log"), "w")
        p = subprocess.Popen([python(), os.path.join(HERE, "pai_rest_server.py"), "--scenario", scenario,
                              "--port-file", port_file, "--name", name],
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        with open(os.path.join(directory, name + ".pid"), "w") as f:
            f.write("%d\n" % p.pid)
        procs.append((name, p, port_file))
    deadline = time.time() + 20
    for name, p, port_file in procs:
        while not os.path.exists(port_file):
            if p.poll() is not None:
                sys.stderr.write("server %s exited with %d; see %s.log\n" % (name, p.returncode, name))
                stop(directory)
                return 1
            if time.time() > deadline:
                sys.stderr.write("server %s did not start in time\n" % name)
                stop(directory)
                return 1
            time.sleep(0.02)
        port = open(port_file).read().strip()
        var = name.upper().replace("-", "_")
        env_lines.append("%s_PORT=%s" % (var, port))
        env_lines.append("%s_URI=http://127.0.0.1:%s" % (var, port))
    with open(os.path.join(directory, "env.sh"), "w") as f:
        f.write("\n".join(env_lines) + "\n")
    return 0


def exited(pid):
    """True once `pid` has exited: gone, or a zombie. The servers are not this
    process's children, and whoever adopted them may reap them late (an init that
    reaps every 2 s made each stop wait that long)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def stop(directory):
    if not os.path.isdir(directory):
        return 0
    pids = []
    for entry in os.listdir(directory):
        if entry.endswith(".pid"):
            try:
                pids.append(int(open(os.path.join(directory, entry)).read().strip()))
            except ValueError:
                pass
            os.unlink(os.path.join(directory, entry))
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.time() + 5
    for pid in pids:
        while time.time() < deadline:
            if exited(pid):
                break
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
                if done == pid:
                    break
            except ChildProcessError:
                pass
            time.sleep(0.02)
        else:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "start":
        return start(argv[2], argv[3:])
    if len(argv) == 3 and argv[1] == "stop":
        return stop(argv[2])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
