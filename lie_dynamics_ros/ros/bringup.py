"""ldr_bringup: run the launch files' graphs in one process, without ros2 launch.

launch and launch_ros are not on PyPI, so this command starts the same nodes, with the same
node names and the same YAML files (``--params-file`` per node, exactly as launch_ros passes
them), in one process with a single-threaded executor::

    ldr_bringup sim_with_gravity_compensation --duration 5 --record run
    ldr_bringup simulator --urdf double_pendulum.urdf --offline --duration 20
    ldr_bringup inverse_dynamics --ros-args -r joint_states:=/arm/joint_states
    ldr_bringup sim_with_adaptive_controller --offline --duration 20 --reference exc.yaml

``GRAPHS`` mirrors ``launch/<graph>.launch.py`` (a test checks that they agree).

Modes:

- real time (default): the simulator steps on its timer at ``rate``; ``--duration`` stops
  after that much simulated time (wall time for the inverse_dynamics graph).
- ``--offline``: as fast as possible and deterministic. The simulator is stepped in lockstep:
  after each published state the executor runs until the controller's ``joint_torques`` for
  that state has arrived (matched by header stamp), then the next step is taken.

``--reference FILE.yaml`` publishes a trajectory (``reference_message``) once on
``reference``, before the first step, and waits until every controller holds it.

``--record BAG`` writes the graph's topics to a rosbag2 bag, the folder BAG with
``metadata.yaml`` and ``BAG_0.mcap`` (``ros2 bag info/play``, Foxglove, PlotJuggler), and the
robot itself: ``/robot_description``, ``/tf_static`` and, for every joint_states, ``/tf``
(``ros/robot_tf.py``). A progress bar on stderr accompanies runs with a
``--duration`` (on by default when stderr is a terminal, ``--progress`` forces it).
"""
import argparse
import os
import sys
import time
from dataclasses import dataclass
from typing import Tuple

from lie_dynamics_ros.resources import share_dir
# the launch arguments' defaults, which ldr_bringup follows
from lie_dynamics_ros.ros.launch_arguments import DEFAULT_URDF, DEFAULT_USE_SIM_TIME  # noqa: F401

PACKAGE = "lie_dynamics_ros"


@dataclass(frozen=True)
class NodeSpec:
    """One launch_ros Node of a launch file: executable, node name, YAML files under config/
    in the order they are passed."""
    executable: str
    name: str
    params_files: Tuple[str, ...]


SIMULATOR = NodeSpec("forward_dynamics_node", "forward_dynamics", ("simulator.yaml",))
INVERSE_DYNAMICS = NodeSpec("inverse_dynamics_node", "inverse_dynamics",
                            ("inverse_dynamics.yaml",))
ADAPTIVE = NodeSpec("adaptive_controller_node", "adaptive_controller",
                    ("adaptive_controller.yaml",))
# commands an effort forward_command_controller (the arm's ros2_control parameters)
INVERSE_DYNAMICS_ROS2_CONTROL = NodeSpec("inverse_dynamics_node", "inverse_dynamics",
                                         ("inverse_dynamics.yaml", "arm7_ros2_control.yaml"))
OBSERVER = NodeSpec("external_torque_observer_node", "external_torque_observer",
                    ("external_torque_observer.yaml",))

#: graph name = launch file name without ``.launch.py``
GRAPHS = {
    "inverse_dynamics": (INVERSE_DYNAMICS,),
    "simulator": (SIMULATOR,),
    "sim_with_gravity_compensation": (SIMULATOR, INVERSE_DYNAMICS),
    "adaptive_controller": (ADAPTIVE,),
    "sim_with_adaptive_controller": (SIMULATOR, ADAPTIVE),
    "inverse_dynamics_ros2_control": (INVERSE_DYNAMICS_ROS2_CONTROL,),
    "observer": (SIMULATOR, INVERSE_DYNAMICS, OBSERVER),
}

#: --offline: how long the simulator waits for the controller's answer to one state (the
#: controller compiles its kernels before it subscribes, so this is only a safety net)
LOCKSTEP_TIMEOUT_S = 30.0


def package_root() -> str:
    """Folder holding config/, urdf/ and launch/: the package share directory when installed
    in an ament prefix (colcon, pip's data_files), else the source checkout."""
    return share_dir()


def config_file(name: str) -> str:
    return os.path.join(package_root(), "config", name)


def _resolve_urdf(path: str) -> str:
    from lie_dynamics_ros.ros.model_source import resolve_urdf_path   # imports rclpy: see run
    return os.path.abspath(resolve_urdf_path(path))


# ---------------------------------------------------------------------------------------------
# progress bar


class Progress:
    """A one-line progress bar on ``stream``, redrawn at most 10 times a second."""

    def __init__(self, total_s: float, stream=sys.stderr, enabled=True, label="sim"):
        self.total, self.stream, self.enabled, self.label = total_s, stream, enabled, label
        self.t_wall0 = time.monotonic()
        self._last = 0.0

    def update(self, done_s: float, force=False):
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        frac = min(1.0, max(0.0, done_s / self.total)) if self.total > 0 else 1.0
        wall = now - self.t_wall0
        speed = done_s / wall if wall > 0 else 0.0
        eta = (self.total - done_s) / speed if speed > 0 else float("inf")
        bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
        self.stream.write("\r%s [%s] %5.1f%%  %.2f/%.2f s  %.2fx real time  ETA %s " % (
            self.label, bar, 100 * frac, done_s, self.total, speed,
            "%.0f s" % eta if eta != float("inf") else "?"))
        self.stream.flush()

    def close(self, done_s: float):
        if self.enabled:
            self.update(done_s, force=True)
            self.stream.write("\n")
            self.stream.flush()


# ---------------------------------------------------------------------------------------------


def build_parser():
    p = argparse.ArgumentParser(
        prog="ldr_bringup", description="Run a lie_dynamics_ros launch graph in one process "
        "(same nodes and YAML files as launch/<graph>.launch.py).")
    p.add_argument("graph", nargs="?", default="sim_with_gravity_compensation",
                   choices=sorted(GRAPHS), help="which launch file's graph to run")
    p.add_argument("--urdf", default=DEFAULT_URDF,
                   help="URDF file (path, or a file name in the package's urdf/ folder)")
    p.add_argument("--initial-state", default=None,
                   help="YAML with initial_positions/initial_velocities (default: "
                   "config/<urdf stem>_initial_state.yaml when it exists, else the neutral "
                   "configuration)")
    p.add_argument("--params-file", default=None,
                   help="ros__parameters YAML of the graph's node, for the graphs with one "
                   "node (inverse_dynamics, simulator, adaptive_controller)")
    p.add_argument("--simulator-params", default=None,
                   help="simulator YAML (default config/simulator.yaml)")
    p.add_argument("--inverse-dynamics-params", default=None,
                   help="inverse dynamics YAML (default config/inverse_dynamics.yaml)")
    p.add_argument("--no-clock", action="store_true",
                   help="the simulator does not publish /clock (Gazebo owns it)")
    p.add_argument("--use-sim-time", choices=("true", "false"), default=None,
                   help="as the launch argument use_sim_time")
    p.add_argument("--duration", type=float, default=None,
                   help="stop after this many seconds of simulated time")
    p.add_argument("--offline", action="store_true",
                   help="step as fast as possible, in lockstep with the controller")
    p.add_argument("--record", metavar="BAG", default=None,
                   help="record the graph's topics, and the robot (/tf, /tf_static, "
                   "/robot_description), to a rosbag2 bag: a new folder BAG with "
                   "metadata.yaml and BAG_0.mcap (ros2 bag info/play, Foxglove)")
    p.add_argument("--reference", metavar="FILE.yaml", default=None,
                   help="publish this trajectory once on `reference` before the first step "
                   "(YAML: joint_names, times, positions, optional velocities and "
                   "accelerations; a graph with a controller)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="show a progress bar (default: when stderr is a terminal)")
    g.add_argument("--no-progress", dest="progress", action="store_false")
    return p


def node_cli_args(spec: NodeSpec, opts, robot: str):
    """--ros-args of one node, as launch_ros builds them from the launch file."""
    files = []
    for f in spec.params_files:
        if f == "simulator.yaml" and opts.simulator_params:
            files.append(opts.simulator_params)
        elif f == "inverse_dynamics.yaml" and opts.inverse_dynamics_params:
            files.append(opts.inverse_dynamics_params)
        elif opts.params_file and len(GRAPHS[opts.graph]) == 1 and f == spec.params_files[0]:
            files.append(opts.params_file)
        else:
            files.append(config_file(f))
    args = ["--ros-args"]
    for f in files:
        if not os.path.isfile(f):
            raise FileNotFoundError("parameter file not found: %s" % f)
        args += ["--params-file", f]
    args += ["-p", "urdf_path:=%s" % opts.urdf_abs, "-p", "use_sim_time:=%s" % opts.sim_time]
    if spec is SIMULATOR:
        args += ["-p", "publish_clock:=%s" % ("false" if opts.no_clock else "true")]
        if opts.initial_state:
            args += ["-p", "initial_state_file:=%s" % os.path.abspath(opts.initial_state)]
    # the user's --ros-args come last, so that their -p wins over the YAML files
    return args + list(opts.ros_args)


def load_reference(path):
    """(names, times, positions, velocities, accelerations) of a reference YAML file:
    ``joint_names`` (P names), ``times`` (T increasing seconds from the start), ``positions``
    (T x P) and optional ``velocities``, ``accelerations`` (T x P). ValueError naming the file
    and the key that is wrong."""
    import numpy as np
    import yaml
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise ValueError("reference %s: cannot read it: %s" % (path, e)) from None
    if not isinstance(doc, dict) or "joint_names" not in doc or "times" not in doc \
            or "positions" not in doc:
        raise ValueError("reference %s: a mapping with joint_names, times and positions "
                         "expected" % path)
    names = doc["joint_names"]
    if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)
            and len(set(names)) == len(names)):
        raise ValueError("reference %s: joint_names must be distinct names, got %r"
                         % (path, names))
    try:
        times = np.asarray(doc["times"], dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError("reference %s: times must be numbers" % path) from None
    if times.size == 0 or not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0) \
            or times[0] < 0:
        raise ValueError("reference %s: times must be finite, >= 0 and increasing" % path)
    arrays = []
    for key in ("positions", "velocities", "accelerations"):
        if doc.get(key) is None and key != "positions":
            arrays.append(None)
            continue
        try:
            x = np.asarray(doc[key], dtype=float)
        except (TypeError, ValueError):
            raise ValueError("reference %s: %s must be numbers" % (path, key)) from None
        if x.shape != (times.size, len(names)) or not np.all(np.isfinite(x)):
            raise ValueError("reference %s: %s must be %d x %d finite numbers (times x "
                             "joint_names), got shape %s" % (path, key, times.size, len(names),
                                                             x.shape))
        arrays.append(x)
    return (names, times, *arrays)


def recorded_topics():
    # ROS imports wait until a graph runs: GRAPHS and the parser load without ROS (test, --help)
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory
    return [("joint_states", JointState), ("joint_torques", JointState),
            ("effort_controller/commands", Float64MultiArray), ("reference", JointTrajectory),
            ("/clock", Clock)]


def recorded_robot(urdf_path: str, stream=sys.stderr):
    """What writes /tf, /tf_static and /robot_description into the bag, or None (with a
    warning on ``stream``) when the robot cannot be drawn from joint_states."""
    from lie_dynamics_ros.ros.robot_tf import RobotTf
    try:
        return RobotTf.from_file(urdf_path)
    except (OSError, ValueError) as e:
        print("ldr_bringup: warning: the bag gets no /tf: %s" % e, file=stream)
        return None


def run(argv=None, stream=sys.stderr):
    """Run a graph; returns a summary dict (steps, sim_time, wall_time, recorded, ...)."""
    # rclpy and the nodes load here, not at import: GRAPHS and --help need no ROS
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from lie_dynamics_ros.ros.forward_dynamics_node import ForwardDynamicsNode
    from lie_dynamics_ros.ros.inverse_dynamics_node import InverseDynamicsNode
    from lie_dynamics_ros.ros.node_common import spin_until

    argv = list(sys.argv[1:] if argv is None else argv)
    ros_args = []
    if "--ros-args" in argv:
        k = argv.index("--ros-args")
        argv, ros_args = argv[:k], argv[k:]
    opts = build_parser().parse_args(argv)
    opts.ros_args = [a for a in ros_args if a != "--ros-args"]
    opts.urdf_abs = _resolve_urdf(opts.urdf)
    robot = os.path.splitext(os.path.basename(opts.urdf_abs))[0]
    opts.sim_time = opts.use_sim_time or str(DEFAULT_USE_SIM_TIME[opts.graph]).lower()
    specs = GRAPHS[opts.graph]
    has_sim = SIMULATOR in specs
    has_controller = any(s not in (SIMULATOR, OBSERVER) for s in specs)
    lockstep = opts.offline and has_sim and has_controller
    if opts.offline and not has_sim:
        raise SystemExit("ldr_bringup: --offline needs a graph with the simulator")
    if opts.offline and opts.duration is None:
        raise SystemExit("ldr_bringup: --offline needs --duration")
    reference = None
    if opts.reference:
        if not has_controller:
            raise SystemExit("ldr_bringup: --reference needs a graph with a controller")
        try:
            reference = load_reference(opts.reference)
        except ValueError as e:
            raise SystemExit("ldr_bringup: %s" % e) from None

    context = rclpy.Context()
    rclpy.init(args=["ldr_bringup"], context=context)
    executor = SingleThreadedExecutor(context=context)
    nodes, sim, recorder, robot, controllers = [], None, None, None, []
    summary = {"graph": opts.graph, "steps": 0, "sim_time": 0.0, "recorded": 0}
    try:
        for spec in specs:
            kwargs = dict(context=context, cli_args=node_cli_args(spec, opts, robot))
            if spec is SIMULATOR:
                sim = ForwardDynamicsNode(spec.name, drive="external" if opts.offline
                                          else "timer", **kwargs)
                node = sim
            elif spec is ADAPTIVE:
                # only this graph pays for the controller's import (scipy, its kernels)
                from lie_dynamics_ros.ros.adaptive_controller_node import AdaptiveControllerNode
                node = AdaptiveControllerNode(spec.name, **kwargs)
            elif spec is OBSERVER:
                from lie_dynamics_ros.ros.external_torque_observer_node import \
                    ExternalTorqueObserverNode
                node = ExternalTorqueObserverNode(spec.name, **kwargs)
            else:
                node = InverseDynamicsNode(spec.name, **kwargs)
            if spec not in (SIMULATOR, OBSERVER):
                controllers.append(node)
            nodes.append(node)
            executor.add_node(node)
        if sim is not None and sim.sim is None:
            raise SystemExit("ldr_bringup: the simulator has no usable model (see the log)")
        if opts.record:
            from lie_dynamics_ros.ros.recording import Rosbag2Recorder, record_topics  # mcap
            recorder = Rosbag2Recorder(opts.record, metadata={
                "graph": opts.graph, "urdf": opts.urdf_abs, "offline": opts.offline})
            rec_node = Node("recorder", context=context, cli_args=["--ros-args"] + opts.ros_args)
            clock = (lambda: sim.sim.t_ns) if sim is not None else time.time_ns
            robot = recorded_robot(opts.urdf_abs, stream)
            record_topics(rec_node, recorder, recorded_topics(), clock=clock, robot=robot)
            nodes.append(rec_node)
            executor.add_node(rec_node)
        # let discovery match publishers and subscribers before the first message
        wanted = []
        if sim is not None:
            wanted.append((sim.pub, (1 if lockstep else 0) + (1 if recorder else 0)))
        for n in controllers:
            if lockstep or recorder:
                pub = n.pub if isinstance(n, InverseDynamicsNode) else n.torque_pub
                wanted.append((pub, (1 if lockstep else 0) + (1 if recorder else 0)))
        if reference is not None:
            from trajectory_msgs.msg import JointTrajectory
            from lie_dynamics_ros.ros.conversions import make_trajectory
            ref_node = Node("reference_publisher", context=context)
            nodes.append(ref_node)
            executor.add_node(ref_node)
            ref_pub = ref_node.create_publisher(JointTrajectory, "reference", 10)
            # every controller, the simulator and the recorder subscribe to it
            wanted.append((ref_pub, len(controllers) + (sim is not None) + (recorder is not None)))
        if not spin_until(executor, lambda: all(p.get_subscription_count() >= k
                                                 for p, k in wanted), 10.0):
            print("ldr_bringup: warning: not every subscriber was discovered", file=stream)

        if reference is not None:
            # stamped at the simulator's start: the reference's time 0 is the first step
            ref_pub.publish(make_trajectory(*reference, stamp_ns=max(
                1, sim.sim.t_ns if sim is not None else time.time_ns())))
            if not spin_until(executor, lambda: all(n.reference is not None
                                                    for n in controllers), 10.0):
                raise SystemExit("ldr_bringup: the controller refused or did not receive the "
                                 "reference %s (see the log)" % opts.reference)
        show = opts.progress if opts.progress is not None else stream.isatty()
        progress = Progress(opts.duration or 0.0, stream, show and opts.duration is not None)
        t_wall0 = time.monotonic()

        def sim_elapsed():
            return (sim.sim.t_ns - t_start) * 1e-9 if sim is not None else \
                time.monotonic() - t_wall0
        t_start = sim.sim.t_ns if sim is not None else 0
        while rclpy.ok(context=context):
            if opts.duration is not None and sim_elapsed() >= opts.duration - 1e-12:
                break
            if opts.offline:
                sim.tick()
                if lockstep:
                    # never step without the controller's answer: offline is deterministic
                    stamp = sim.sim.t_ns
                    if not spin_until(executor, lambda: sim.last_cmd_stamp_ns == stamp,
                                       LOCKSTEP_TIMEOUT_S):
                        raise SystemExit(
                            "ldr_bringup: --offline: no joint_torques answered the state at "
                            "t = %.4f s within %.0f s; stopped (offline mode never steps "
                            "without a command)" % ((stamp - t_start) * 1e-9,
                                                    LOCKSTEP_TIMEOUT_S))
                else:
                    executor.spin_once(timeout_sec=0)
            else:
                executor.spin_once(timeout_sec=0.05)
            progress.update(sim_elapsed())
        progress.close(sim_elapsed())
        # deliver what is still in flight to the recorder
        if recorder is not None:
            spin_until(executor, lambda: False, 0.2)
        summary.update(sim_time=sim_elapsed(), wall_time=time.monotonic() - t_wall0)
        if sim is not None:
            summary.update(steps=sim.sim.steps, watchdog_trips=sim.watchdog_trips,
                           final_positions=[float(x) for x in sim.sim.q])
    except KeyboardInterrupt:
        pass
    finally:
        if recorder is not None:
            recorder.close()
            if robot is not None and robot.skipped:
                print("ldr_bringup: warning: %d joint_states got no /tf (%s)" % (
                    robot.skipped, robot.skip_reason), file=stream)
            summary["recorded"] = recorder.count
            summary["record_file"] = recorder.path
        executor.shutdown()
        for n in nodes:
            n.destroy_node()
        rclpy.try_shutdown(context=context)
    return summary


def main(args=None):
    """Console script ``ldr_bringup``."""
    summary = run(args)
    if summary["steps"]:
        line = "ldr_bringup: %s, %d steps, %.3f s simulated" % (
            summary["graph"], summary["steps"], summary.get("sim_time", 0.0))
    else:
        line = "ldr_bringup: %s" % summary["graph"]
    if "wall_time" in summary:
        line += " in %.3f s wall" % summary["wall_time"]
    if summary.get("record_file"):
        line += ", %d messages recorded to %s" % (summary["recorded"], summary["record_file"])
    print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
