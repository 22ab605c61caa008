#!/usr/bin/python3
"""The testbed's fake server: one per run directory, started by `testbed.sh up`.

A fake started as its own Python program spends most of its CPU before its first
line of work (the interpreter, its imports). This process imports the fakes once
and forks a worker per call of a host's bin/TOOL wrapper (tbclient.c). The
worker enters the caller's mount namespace, takes its working directory,
environment and standard descriptors, and runs tbfake.main() exactly as the
program would have: the same state files and lock, the same invocation records
(with the caller's pid), the same knobs. The caller gets the worker's pid, then
its exit code or the signal it died of; if the caller dies first, the worker is
killed (as the program would have been).

A call that only reads the host's state (tbfake.read_only: `sysctl KEY`,
`dpkg-query`, `systemctl is-active`, ...) runs in this process instead, with the
caller's descriptors and the host's state lock taken without waiting (when the
lock is held, the call goes to a worker as any other): the same output, exit
code and invocation records, without a fork and a worker's start-up and exit.

  tbserver.py SOCKET      (an abstract unix socket name; prints "ready" when listening)

With TESTBED_CPU_LOG=FILE in its environment (testbed.sh up passes it on), each
call ends with a line "HOST TOOL USER_S SYS_S RC ARGS..." appended to FILE: the
worker's own CPU, from wait4(), for the benchmarks' per-host breakdown.
"""

import ctypes
import fcntl
import io
import os
import resource
import selectors
import signal
import socket
import struct
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tbfake  # noqa: E402

try:
    tbfake.kubeadm_fake()  # its imports (PyYAML, ssl, ...) once, here
except Exception:  # noqa: BLE001 (the worker imports it again and reports)
    pass
import gc  # noqa: E402
import random  # noqa: E402

# What the workers inherit stays shared: the collector would otherwise touch (and
# so copy) every object in each worker.
gc.freeze()

CLONE_NEWNS = 0x00020000
LIBC = ctypes.CDLL(None, use_errno=True)


def parse(data):
    parts = data.split(b"\0")
    nargs, nenv, mask = int(parts[0]), int(parts[1]), int(parts[2])
    args = [p.decode(errors="surrogateescape") for p in parts[3:3 + nargs]]
    env = {}
    for p in parts[3 + nargs:3 + nargs + nenv]:
        k, _, v = p.decode(errors="surrogateescape").partition("=")
        env[k] = v
    return args, env, mask


def call_fake(args, host, peer, stdin_fd, stdout_fd, stderr_fd):
    """Runs tbfake.main() for ARGS as the program would, its standard streams on
    these descriptors (None: closed, its output dropped). Returns its exit code,
    or -SIGPIPE where writing to a closed pipe would have killed the program."""
    sys.stdin = open(stdin_fd, "r", closefd=False, encoding="utf-8",
                     errors="surrogateescape") if stdin_fd is not None else None
    sys.stdout = open(stdout_fd, "w", buffering=1 if os.isatty(stdout_fd) else -1, closefd=False,
                      encoding="utf-8", errors="surrogateescape") if stdout_fd is not None else io.StringIO()
    sys.stderr = open(stderr_fd, "w", buffering=1, closefd=False, encoding="utf-8",
                      errors="backslashreplace") if stderr_fd is not None else io.StringIO()
    tbfake.HOST = host
    tbfake.PID = peer
    tbfake.STDIN_FD = stdin_fd if stdin_fd is not None else -1
    tbfake.STDIN_BYTES = 0
    sys.argv = ["tbfake.py"] + args
    rc = 1
    try:
        rc = tbfake.main()
    except SystemExit as e:
        if e.code is None:
            rc = 0
        elif isinstance(e.code, int):
            rc = e.code
        else:
            sys.stderr.write(str(e.code) + "\n")
            rc = 1
    except BrokenPipeError:
        return -signal.SIGPIPE
    except Exception:  # noqa: BLE001 (what Python would print, then exit 1)
        traceback.print_exc()
        rc = 1
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except BrokenPipeError:
            return -signal.SIGPIPE
        except (OSError, ValueError):
            rc = rc or 120
    return (rc or 0) & 0xFF


def worker(data, fds, peer, closing):
    for f in closing:
        f.close()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    random.seed()
    rc = 1
    try:
        args, env, mask = parse(data)
        ns, cwd, stdio = fds[0], fds[1], fds[2:]
        if LIBC.setns(ns, CLONE_NEWNS) != 0:
            raise OSError(ctypes.get_errno(), "setns")
        os.fchdir(cwd)
        os.close(ns)
        os.close(cwd)
        it = iter(stdio)
        for fd in range(3):
            if mask & (1 << fd):
                src = next(it)
                if src != fd:
                    os.dup2(src, fd)
                    if src > 2:
                        os.close(src)
            else:
                try:
                    os.close(fd)
                except OSError:
                    pass
        os.environ.clear()
        os.environ.update(env)
        open_fd = [fd if mask & (1 << fd) else None for fd in range(3)]
        rc = call_fake(args, env.get("TB_HOST", ""), peer, *open_fd)
        if rc < 0:  # the program's death by that signal
            signal.signal(-rc, signal.SIG_DFL)
            os.kill(os.getpid(), -rc)
    except BaseException:  # noqa: BLE001
        try:
            traceback.print_exc()
        except Exception:  # noqa: BLE001
            pass
    os._exit((rc or 0) & 0xFF)


def run_here(args, env, mask, fds, peer, cpu_log):
    """Runs a call that only reads the host's state (tbfake.read_only) in this
    process: no fork, no worker. Returns the caller's answer, or None when the
    call must go to a worker after all (not read-only, or the host's state lock
    is held: this process never waits for it). Nothing of the call has run or
    been logged when it returns None."""
    host = env.get("TB_HOST", "")
    if not host or not args or not tbfake.read_only(args[0], args[1:]):
        return None
    lock_path = host + "/state/.lock"
    try:
        lock = os.open(lock_path, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return None
    tbfake.Lock.held[lock_path] = (lock, 1)  # the fake's own Lock() re-enters it
    stdio = dict(zip([fd for fd in range(3) if mask & (1 << fd)], fds[2:]))
    saved = (sys.stdin, sys.stdout, sys.stderr, sys.argv)
    t0 = resource.getrusage(resource.RUSAGE_SELF)
    tbfake.IN_SERVER = True
    try:
        rc = call_fake(args, host, peer, stdio.get(0), stdio.get(1), stdio.get(2))
    except Exception:  # noqa: BLE001 (a descriptor it could not use: the call fails, the server goes on)
        rc = 1
    finally:
        for f in (sys.stdin, sys.stdout, sys.stderr):
            if f is not None and not isinstance(f, io.StringIO):
                try:
                    f.close()  # closefd=False: only the wrapper
                except (OSError, ValueError):
                    pass
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved
        tbfake.STDIN_FD = 0
        tbfake.IN_SERVER = False
        tbfake.Lock.held.pop(lock_path, None)
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
    answer = b"signal %d" % -rc if rc < 0 else b"exit %d" % rc
    if cpu_log:
        t1 = resource.getrusage(resource.RUSAGE_SELF)
        rc = 128 - rc if rc < 0 else rc
        with open(cpu_log, "a") as f:
            f.write("%s %s %.4f %.4f %d %s\n" % (os.path.basename(host), args[0], t1.ru_utime - t0.ru_utime,
                                                 t1.ru_stime - t0.ru_stime, rc, " ".join(args[1:])[:200].replace("\n", " ")))
    return answer


def main():
    name = sys.argv[1]
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    lsock.bind("\0" + name)
    lsock.listen(256)
    rpipe, wpipe = os.pipe()
    os.set_blocking(rpipe, False)
    os.set_blocking(wpipe, False)
    signal.set_wakeup_fd(wpipe)
    signal.signal(signal.SIGCHLD, lambda *a: None)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    sel = selectors.DefaultSelector()
    sel.register(lsock, selectors.EVENT_READ, "listen")
    sel.register(rpipe, selectors.EVENT_READ, "child")
    workers = {}  # pid -> the caller's connection
    cpu_log = os.environ.get("TESTBED_CPU_LOG")
    calls = {}  # pid -> "HOST TOOL", with cpu_log
    print("ready", flush=True)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.close(devnull)

    def reap():
        while workers:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if cpu_log and pid in calls:
                head, rest = calls.pop(pid)
                rc = os.WTERMSIG(status) + 128 if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                with open(cpu_log, "a") as f:
                    f.write("%s %.4f %.4f %d %s\n" % (head, usage.ru_utime, usage.ru_stime, rc, rest))
            conn = workers.pop(pid, None)
            if conn is None:
                continue
            if os.WIFSIGNALED(status):
                ans = b"signal %d" % os.WTERMSIG(status)
            else:
                ans = b"exit %d" % os.WEXITSTATUS(status)
            try:
                sel.unregister(conn)
            except (KeyError, ValueError):
                pass
            try:
                conn.send(ans)
            except OSError:
                pass
            conn.close()

    while True:
        for key, _ in sel.select():
            if key.data == "listen":
                try:
                    conn, _ = lsock.accept()
                except OSError:
                    continue
                try:
                    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 8)
                    peer = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
                except OSError:
                    conn.close()
                    continue
                if not data or len(fds) < 2:
                    for fd in fds:
                        os.close(fd)
                    conn.close()
                    continue
                try:
                    args, env, mask = parse(data)
                    answer = run_here(args, env, mask, fds, peer, cpu_log)
                except (ValueError, IndexError):
                    answer = None
                if answer is not None:
                    for fd in fds:
                        os.close(fd)
                    try:
                        conn.send(answer)
                    except OSError:
                        pass
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    worker(data, fds, peer, [lsock, conn, sel])
                for fd in fds:
                    os.close(fd)
                workers[pid] = conn
                if cpu_log:
                    try:
                        args, env, _ = parse(data)
                        calls[pid] = ("%s %s" % (os.path.basename(env.get("TB_HOST", "-")), args[0] if args else "-"),
                                      " ".join(args[1:])[:200].replace("\n", " "))
                    except (ValueError, IndexError):
                        pass
                try:
                    conn.send(b"pid %d" % pid)
                except OSError:
                    pass
                sel.register(conn, selectors.EVENT_READ, pid)
            elif key.data == "child":
                try:
                    while os.read(rpipe, 512):
                        pass
                except BlockingIOError:
                    pass
                reap()
            else:
                # The caller said something or went away: it only ever goes away.
                pid = key.data
                try:
                    gone = key.fileobj.recv(16) == b""
                except OSError:
                    gone = True
                if gone:
                    sel.unregister(key.fileobj)
                    if pid in workers:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
        reap()


if __name__ == "__main__":
    sys.exit(main())
