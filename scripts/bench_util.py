"""What the Python benchmark scripts share."""
import os
import signal
import subprocess


def stop_all(procs, timeout=5):
    """Stops the servers a benchmark started: SIGTERM to all, then SIGKILL to
    any that has not ended within `timeout` seconds."""
    for p in procs:
        try:
            os.kill(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
