"""The README's code blocks and the commands of the docs' tables run as printed, from a
temporary folder (a newcomer pastes them anywhere, not in the repository root).

Python blocks run in one session, as a reader would. Every shell command of the README's
blocks and every command or executable of the README's and docs/ros.md's tables is either run
here (console scripts through this interpreter, so the checkout under test is what runs) or
named in ``NOT_HERE`` with the reason; a new command that is neither fails the test.
"""
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
DOCS_WITH_TABLES = (README, os.path.join(ROOT, "docs", "ros.md"))


def _text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _snippets():
    blocks = re.findall(r"```python\n(.*?)```", _text(README), flags=re.S)
    return [textwrap.dedent(b) for b in blocks if "ldr." in b]


def _console_scripts():
    """{script: module} from setup.py's console_scripts."""
    return dict(re.findall(r"'(\w+) = ([\w.]+):main'", _text(os.path.join(ROOT, "setup.py")))
                + re.findall(r"'(\w+) = '\s*'([\w.]+):main'",
                             _text(os.path.join(ROOT, "setup.py"))))


SCRIPTS = _console_scripts()


def _shell_commands():
    """Each command of the README's bash blocks, continuation lines joined, comments cut."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", _text(README), flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            if line:
                out.append(re.sub(r"\s+", " ", line))
    return out


def _table_commands():
    """The first cell of every table row in README.md and docs/ros.md that names a command:
    a make target or a console script (with its arguments, if any)."""
    out = []
    for path in DOCS_WITH_TABLES:
        for line in _text(path).splitlines():
            if not line.startswith("| `"):
                continue
            for cmd in re.findall(r"`([^`]+)`", line.split(" |")[0]):
                word = cmd.split()[0]
                if word == "make" or word in SCRIPTS:
                    out.append(cmd)
    return sorted(set(out))


#: commands that cannot run in a test here, and why (a prefix matches)
NOT_HERE = {
    "make demo": "creates .venv and runs the demo for minutes; test_adaptive_node.py runs the "
                 "same demo code over DDS",
    "make test": "the whole suite: it is what runs this test",
    "make bench": "minutes of benchmarks; speed is measured there, never in tests",
    "make launch-test": "needs ros2 launch and colcon (make launch-tools); .ci/run runs it",
    "make colcon": "needs colcon (make launch-tools); .ci/run runs it",
    "make soak": "10 minutes; test_ros_soak.py runs 5 s of it",
    "make fuzz": "2x10^5 URDFs; test_urdf_fuzz.py runs 10^4",
    "ros2 ": "needs a sourced ROS 2 Jazzy and a colcon workspace: make launch-test runs every "
             "launch file under ros2 launch",
    "make launch-tools": "installs the ROS 2 command-line tools into .venv",
    **{prefix: "sets up a ROS 2 workspace on a Jazzy machine (network, sudo, a sourced ROS "
               "install); make colcon and make launch-test follow the same route here"
       for prefix in ("git clone", "cd ", "source ", ". ", "sudo ", "rosdep", "colcon",
                      "pip ", "pip3 ", "python3 -m pip", "mkdir", "export ",
                      "python -m colcon", "python -m pip", "python3 -m venv", "touch")},
    "ldr_adaptive_demo": "the demo of make demo (above)",
    "ldr_identify": "needs a recorded bag: test_identify_cli.py runs it on one",
}

#: make targets that are one console script (the Makefile's recipe)
MAKE_SCRIPT = {"make dynamics-demo": "ldr_demo"}
#: long runs shortened, the command otherwise as printed
SHORTER = {"--duration 5": "--duration 0.3"}


def _plan(cmd):
    """("skip", reason) or ("run" | "serve", argv): "serve" for a node that runs until
    stopped (started, checked alive with its model loaded, stopped with SIGINT)."""
    for prefix, why in NOT_HERE.items():
        if cmd == prefix or cmd.startswith(prefix if prefix.endswith(" ") else prefix + " "):
            return "skip", why
    cmd = MAKE_SCRIPT.get(cmd, cmd)
    for long, short in SHORTER.items():
        cmd = cmd.replace(long, short)
    argv = cmd.split()
    script = os.path.basename(argv[0])
    if script not in SCRIPTS:
        return "unknown", None
    argv = [a for a in argv[1:] if not a.startswith("<")]          # `ldr_bringup <graph>`
    code = "import sys; from %s import main; sys.exit(main())" % SCRIPTS[script]
    full = [sys.executable, "-c", code, *argv]
    if script.endswith("_node"):
        return "serve", full
    if script == "ldr_bringup" and "--duration" not in argv:
        return "run", full + ["--help"]          # the table's bare name: it runs until Ctrl-C
    return "run", full


def _env():
    env = dict(os.environ, PYTHONPATH=ROOT)
    domain = os.environ.get("LDR_TEST_DOMAIN_ID")
    if domain:
        env["ROS_DOMAIN_ID"] = domain
    return env


COMMANDS = sorted(set(_shell_commands()) | set(_table_commands()))


def test_there_are_snippets_and_commands():
    assert len(_snippets()) >= 4
    assert any(c.startswith("make ") for c in COMMANDS)
    assert any("ldr_bringup" in c for c in COMMANDS) and "ldr_precompile" in COMMANDS


@pytest.mark.parametrize("k", range(len(_snippets())))
def test_snippet_runs(k, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    namespace = {}
    # later snippets continue the first one, as a reader would in one session
    for code in _snippets()[:k + 1]:
        exec(compile(code, f"README snippet {k}", "exec"), namespace)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_command_runs_from_another_folder(cmd, tmp_path):
    kind, argv = _plan(cmd)
    assert kind != "unknown", "%r: neither runnable here nor in NOT_HERE with a reason" % cmd
    if kind == "skip":
        assert argv                               # the reason is given
        return
    if kind == "run":
        out = subprocess.run(argv, cwd=tmp_path, env=_env(), capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, "%s\n%s" % (cmd, out.stderr[-3000:])
        if "--record" in argv:
            folder = argv[argv.index("--record") + 1]
            assert os.path.isfile(os.path.join(tmp_path, folder, "metadata.yaml"))
        return
    # a node: alive, its model loaded (when one is given), and a clean stop on SIGINT
    log = tmp_path / "node.log"
    with open(log, "w") as f:
        proc = subprocess.Popen(argv, cwd=tmp_path, env=_env(), stdout=f,
                                stderr=subprocess.STDOUT)
    try:
        # with a model: until it is loaded; without: a few seconds of waiting for one
        wanted = "robot model loaded" if "urdf_path" in cmd else None
        deadline = time.monotonic() + (120 if wanted else 5)
        while time.monotonic() < deadline and proc.poll() is None:
            if wanted and wanted in log.read_text():
                break
            time.sleep(0.2)
        assert proc.poll() is None, "%s died:\n%s" % (cmd, log.read_text()[-3000:])
        assert not wanted or wanted in log.read_text(), log.read_text()[-3000:]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert code == 0, "%s: exit %s\n%s" % (cmd, code, log.read_text()[-3000:])
