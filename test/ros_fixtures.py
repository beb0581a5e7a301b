"""Helpers and fixtures for the ROS tests (real rclpy, real DDS; no mocks).

Importing this module isolates the test session's DDS traffic *before* rclpy is initialised:

- ``ROS_DOMAIN_ID`` is derived from the pid (1..100), or ``LDR_TEST_DOMAIN_ID`` if set, so
  parallel test sessions on one machine do not hear each other;
- ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` keeps discovery on loopback
  (``ROS_LOCALHOST_ONLY`` is deprecated in Jazzy and would override it, so it is removed);
- logs of the nodes go to a temporary ``ROS_LOG_DIR``.

The same environment is passed to every node subprocess. Every wait has a deadline
(``spin_until``); subprocesses are always stopped in ``finally`` (``NodeProcess``).
Timeouts are generous for a loaded 2-core CI machine; the scale factor
``LDR_TEST_TIMEOUT_SCALE`` stretches them further.

Use with ``from ros_fixtures import *`` in a test module (pytest then sees the fixtures).

rclpy is a test dependency (``make test`` installs it): it is imported where it is used
(``RosSession``, the ``ros`` fixture), so that a module needing only the paths and helpers
here (test_launch_files.py's static checks) runs without it, and a test that needs rclpy
fails with ImportError when it is missing instead of being skipped.
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
URDF_DIR = os.path.join(REPO, "urdf")
CONFIG_DIR = os.path.join(REPO, "config")
ARM7 = os.path.join(URDF_DIR, "arm7.urdf")
DOUBLE_PENDULUM = os.path.join(URDF_DIR, "double_pendulum.urdf")
TIMEOUT_SCALE = float(os.environ.get("LDR_TEST_TIMEOUT_SCALE", "1"))

# --- isolate DDS before any rclpy.init -------------------------------------------------------
DOMAIN_ID = int(os.environ.get("LDR_TEST_DOMAIN_ID", 1 + os.getpid() % 100))
os.environ["ROS_DOMAIN_ID"] = str(DOMAIN_ID)
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.pop("ROS_LOCALHOST_ONLY", None)
os.environ.pop("ROS_STATIC_PEERS", None)
_LOG_DIR = tempfile.mkdtemp(prefix="ldr_ros_logs_")
atexit.register(shutil.rmtree, _LOG_DIR, True)
os.environ.setdefault("ROS_LOG_DIR", _LOG_DIR)
os.environ.setdefault("RCUTILS_COLORIZED_OUTPUT", "0")



def _rclpy():
    """rclpy (a test dependency: a missing install fails the test, it does not skip it)."""
    import rclpy
    import rclpy.executors  # noqa: F401
    return rclpy


def timeout(seconds: float) -> float:
    return seconds * TIMEOUT_SCALE


def node_env():
    """Environment of node subprocesses: this session's domain, loopback, repo importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    env["RCUTILS_LOGGING_BUFFERED_STREAM"] = "0"
    return env


# --- spinning with deadlines -----------------------------------------------------------------


def spin_until(executor, cond, timeout_s, step_s=0.01):
    """Spin ``executor`` until ``cond()`` is true; returns cond()'s final value (never hangs)."""
    deadline = time.monotonic() + timeout(timeout_s)
    while True:
        value = cond()
        if value or time.monotonic() > deadline:
            return value
        executor.spin_once(timeout_sec=step_s)


def request(executor, publish, answer, timeout_s, every_s=0.5):
    """Call ``publish()``, then spin until ``answer()`` is truthy, re-publishing every
    ``every_s`` seconds (a best-effort subscription may miss a message just after discovery;
    re-publishing more often would flood its queue). Returns the answer or None."""
    deadline = time.monotonic() + timeout(timeout_s)
    while True:
        publish()
        resend = min(deadline, time.monotonic() + every_s)
        while time.monotonic() < resend:
            value = answer()
            if value:
                return value
            executor.spin_once(timeout_sec=0.01)
        value = answer()
        if value or time.monotonic() >= deadline:
            return value or None


def spin_for(executor, seconds):
    """Process callbacks for ``seconds`` (used to let messages that must NOT come arrive)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)


class RosSession:
    """A private rclpy context with one test node and a single-threaded executor."""

    def __init__(self, name="ldr_test"):
        rclpy = _rclpy()
        self.rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor.add_node(self.node)

    def add(self, node):
        self.executor.add_node(node)
        return node

    def spin_until(self, cond, timeout_s):
        return spin_until(self.executor, cond, timeout_s)

    def spin_for(self, seconds):
        spin_for(self.executor, seconds)

    def request(self, publish, answer, timeout_s, every_s=0.5):
        return request(self.executor, publish, answer, timeout_s, every_s)

    def close(self):
        for n in list(self.executor.get_nodes()):
            self.executor.remove_node(n)
            n.destroy_node()
        self.executor.shutdown()
        self.rclpy.try_shutdown(context=self.context)


@pytest.fixture
def ros():
    """A fresh RosSession per test (nodes under test can be added with ``ros.add``)."""
    s = RosSession()
    try:
        yield s
    finally:
        s.close()


def ros_args(*pairs, params_files=(), remaps=()):
    """``--ros-args`` list from ("name", "value") pairs, params files and remap pairs."""
    out = ["--ros-args"]
    for f in params_files:
        out += ["--params-file", f]
    for k, v in pairs:
        out += ["-p", "%s:=%s" % (k, v)]
    for a, b in remaps:
        out += ["-r", "%s:=%s" % (a, b)]
    return out


# --- node subprocesses -----------------------------------------------------------------------


class NodeProcess:
    """A node run as its own process (``python -m module --ros-args ...``).

    Output goes to a file (a full pipe could block the node); ``log()`` reads it.
    ``stop()`` interrupts, then terminates, then kills, and removes the file (``log()`` then
    returns what it held): always call it in ``finally``.
    """

    def __init__(self, module, args, name=None):
        self.module = module
        self._final_log = None
        self._out = tempfile.NamedTemporaryFile(prefix="ldr_node_", suffix=".log", delete=False,
                                                dir=_LOG_DIR)
        self.log_path = self._out.name
        self.cmd = [sys.executable, "-m", module] + list(args)
        self.proc = subprocess.Popen(self.cmd, cwd=REPO, env=node_env(), stdout=self._out,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def alive(self):
        return self.proc.poll() is None

    def log(self):
        if self._final_log is not None:
            return self._final_log
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def wait_for_log(self, text, timeout_s, executor=None, repeat=None, every_s=0.5):
        """Wait until ``text`` shows up in the output (spinning ``executor`` meanwhile).

        ``repeat()`` is called at once and then every ``every_s`` seconds, e.g. to re-publish
        a message that a best-effort subscription may have missed right after discovery.
        """
        deadline = time.monotonic() + timeout(timeout_s)
        next_repeat = time.monotonic()
        while time.monotonic() < deadline:
            if repeat is not None and time.monotonic() >= next_repeat:
                repeat()
                next_repeat = time.monotonic() + every_s
            if text in self.log():
                return True
            if not self.alive():
                return text in self.log()
            if executor is not None:
                executor.spin_once(timeout_sec=0.05)
            else:
                time.sleep(0.05)
        return text in self.log()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(2)  # SIGINT: clean rclpy shutdown
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=5)
        if self._final_log is None:
            self._out.close()
            self._final_log = self.log()
            os.unlink(self.log_path)
        return self.proc.returncode

    def describe(self):
        return "%s (rc=%s)\n--- output ---\n%s" % (" ".join(self.cmd), self.proc.poll(),
                                                    self.log()[-4000:])


# --- small utilities -------------------------------------------------------------------------


def wait_matched(session, pub=None, sub=None, count=1, timeout_s=20.0):
    """Wait until a publisher has ``count`` subscribers / a subscription has publishers."""
    def ok():
        return ((pub is None or pub.get_subscription_count() >= count)
                and (sub is None or sub.get_publisher_count() >= count))
    return session.spin_until(ok, timeout_s)


__all__ = [
    "REPO", "URDF_DIR", "CONFIG_DIR", "ARM7", "DOUBLE_PENDULUM", "DOMAIN_ID", "timeout",
    "node_env", "spin_until", "spin_for", "request", "RosSession", "ros", "ros_args",
    "NodeProcess", "wait_matched",
]
