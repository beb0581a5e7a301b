"""ldr_identify: a robot's inertias and joint friction from recorded bags, as a URDF.

    ldr_identify --urdf robot.urdf --bag BAG [--bag BAG2 ...] --out robot_identified.urdf
                 [--topic /joint_states] [--report report.png] [--cutoff HZ] [--holdout 0.2]
                 [--dask tcp://scheduler:8786]

1. Reads sensor_msgs/JointState on ``--topic`` from each bag (``ros/bag_reader.py``), by
   joint name in the model's order; every bag is a separate recording.
2. Filters and differentiates (``identification/signals.py``: zero-phase Butterworth at
   ``--cutoff``, the efforts through the same filter, gaps split, edges trimmed).
3. Holds out the last ``--holdout`` of every segment (at most ``--holdout-max-samples``),
   identifies on the rest (physically consistent, friction on) and predicts the held-out
   torques. The bags are streamed (``identification/streaming.py`` into
   ``ldr.identify_chunks``), so memory does not grow with the recording's length.
   With ``--dask ADDRESS`` the regressor is built and reduced on that Dask cluster.
4. Prints a summary table (per joint: held-out RMS over the samples in motion, peak |torque|
   of the held-out part, RMS as % of that peak, the same over every held-out sample, the
   share of samples at rest, identified damping and Coulomb friction), writes the URDF and, with
   ``--report``, a figure of measured against predicted torque per joint on the held-out part.

A joint with Coulomb friction slower than ``--rest-speed`` is at rest: its friction torque is
then anything within +-F_c, so those torque rows are left out of the fit and of the "in
motion" validation (``identification/reduction.py``).

Bad input (not a bag, no effort, a model joint missing from the bag, too little data, a
motion that does not excite the parameters) exits with status 1 and one line on stderr, and
writes nothing.
"""
import argparse
import os
import sys
import tempfile

import numpy as np

from lie_dynamics_ros.errors import InputError, URDFError
from lie_dynamics_ros.identification.distributed import connect
from lie_dynamics_ros.identification.signals import DEFAULT_CUTOFF_HZ, prepare
from lie_dynamics_ros.identification.identify import identify, identify_chunks
from lie_dynamics_ros.identification.reduction import REST_SPEED, at_rest
from lie_dynamics_ros.identification.streaming import DEFAULT_HOLDOUT_MAX_SAMPLES, stream
from lie_dynamics_ros.ros.bag_reader import DEFAULT_TOPIC, iter_joint_states, read_bags

PROG = "ldr_identify"


def build_parser():
    p = argparse.ArgumentParser(
        prog=PROG, description="Identify a robot's inertias and joint friction from rosbag2 "
        "bags of sensor_msgs/JointState (position, effort; velocity optional) and write the "
        "identified URDF.")
    p.add_argument("--urdf", required=True, help="the robot's URDF (the CAD values: the start "
                   "and the prior)")
    p.add_argument("--bag", action="append", required=True,
                   help="a rosbag2 folder or a .mcap/.db3 file; repeat for several bags")
    p.add_argument("--out", required=True, help="the identified URDF to write")
    p.add_argument("--topic", default=DEFAULT_TOPIC, help="the JointState topic")
    p.add_argument("--report", default=None,
                   help="write the validation figure (held-out torque, measured against "
                   "predicted) to this image file (.png, .pdf, .svg)")
    p.add_argument("--cutoff", type=float, default=DEFAULT_CUTOFF_HZ,
                   help="low-pass cut-off in Hz for positions, velocities and efforts")
    p.add_argument("--rest-speed", type=float, default=REST_SPEED,
                   help="rad/s (m/s): a joint with Coulomb friction slower than this is at "
                   "rest, its torque left out of the fit and of the in-motion validation "
                   "(its friction is then anything within +-F_c); 0 keeps every sample")
    p.add_argument("--holdout", type=float, default=0.2,
                   help="fraction at the end of every segment kept out of the fit, to "
                   "validate on")
    p.add_argument("--holdout-max-samples", type=int, default=DEFAULT_HOLDOUT_MAX_SAMPLES,
                   metavar="N", help="keep at most N held-out samples for the validation "
                   "(the rest is neither fitted nor validated); bounds the memory of long "
                   "recordings")
    p.add_argument("--armature", action="store_true",
                   help="identify the armature too (else the URDF's, zero, is kept)")
    p.add_argument("--allow-unexcited", action="store_true",
                   help="keep the CAD values (geometric prior) for the parameters the motion "
                   "does not excite, instead of refusing the data")
    p.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="identify on the Dask cluster whose scheduler is at ADDRESS "
                   "(e.g. tcp://host:8786); needs lie_dynamics_ros[cluster]")
    p.add_argument("--dask-timeout", type=float, default=10.0, metavar="S",
                   help="seconds to wait for the --dask scheduler to answer")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress line while reading (default: for long reads)")
    return p


def _load_model(urdf):
    import lie_dynamics_ros as ldr
    if not os.path.isfile(urdf):
        try:
            from lie_dynamics_ros.resources import bundled_urdf
            urdf = bundled_urdf(urdf)
        except FileNotFoundError:
            raise InputError("URDF file not found: %s" % urdf) from None
    try:
        model = ldr.load_urdf(urdf)
    except URDFError as e:
        raise InputError("%s: %s" % (urdf, e)) from None
    odd = [n for n, nq, nv in zip(model.joint_names, model.joint_nq, model.joint_nv)
           if nq != 1 or nv != 1]
    if odd:
        raise InputError("%s: joint(s) %s are not 1-DOF revolute or prismatic; JointState gives one "
                    "position per joint" % (urdf, ", ".join(odd)))
    return model, urdf


def _check_output(path, what):
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError("%s: the folder of %s does not exist: %s" % (what, path, folder))


def summary_table(names, measured, predicted, damping, friction, resting=None):
    """Rows of the printed table; also returns the per-joint RMS over the samples in motion
    (``resting`` (N, n) bool marks those at rest), peak and RMS % of peak."""
    err = predicted - measured
    resting = np.zeros(err.shape, dtype=bool) if resting is None else resting
    moving = np.maximum((~resting).sum(axis=0), 1)
    rms = np.sqrt(np.sum(np.where(resting, 0.0, err ** 2), axis=0) / moving)
    rms_all = np.sqrt(np.mean(err ** 2, axis=0))
    peak = np.abs(measured).max(axis=0)
    pct = 100.0 * rms / np.where(peak > 0, peak, np.inf)
    pct_all = 100.0 * rms_all / np.where(peak > 0, peak, np.inf)
    rest = 100.0 * resting.mean(axis=0)
    w = max(5, max(len(n) for n in names))
    head = "%-*s %12s %12s %10s %10s %8s %12s %12s"
    lines = [head % (w, "joint", "RMS held-out", "peak |tau|", "RMS/peak", "all", "at rest",
                     "damping", "friction"),
             head % (w, "", "(N m)", "(N m)", "(%)", "(%)", "(%)", "(N m s/rad)", "(N m)")]
    for j, n in enumerate(names):
        lines.append("%-*s %12.4g %12.4g %10.3f %10.3f %8.1f %12.4g %12.4g"
                     % (w, n, rms[j], peak[j], pct[j], pct_all[j], rest[j], damping[j],
                        friction[j]))
    return lines, rms, peak, pct


def validation_figure(path, names, held, predicted):
    """Measured against predicted torque per joint over the held-out segments."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    n = len(names)
    fig, axes = plt.subplots(n, 1, figsize=(9, 1.8 * n + 0.8), sharex=True, squeeze=False)
    t0 = 0.0
    start = 0
    for seg in held.segments:
        k = len(seg)
        tt = seg.t - seg.t[0] + t0
        for j in range(n):
            ax = axes[j, 0]
            ax.plot(tt, seg.tau[:, j], color="k", lw=1.0,
                    label="measured (filtered)" if start == 0 else None)
            ax.plot(tt, predicted[start:start + k, j], color="tab:red", lw=1.0, ls="--",
                    label="predicted" if start == 0 else None)
        t0, start = tt[-1] + (seg.t[1] - seg.t[0]), start + k
    for j, nm in enumerate(names):
        axes[j, 0].set_ylabel("%s\n(N m)" % nm, fontsize=8)
    axes[0, 0].legend(loc="upper right", fontsize=8)
    axes[0, 0].set_title("held-out torque: measured against identified model")
    axes[-1, 0].set_xlabel("held-out time (s, segments end to end)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _write_all(writers):
    """[(path, write(tmp))]: every file written to a temporary beside it first, then all
    moved into place, so a failure leaves none of them."""
    tmps = []
    try:
        for path, write in writers:
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                                       prefix=".ldr_identify_",
                                       suffix=os.path.splitext(path)[1])
            os.close(fd)
            tmps.append(tmp)
            write(tmp)
        for (path, _), tmp in zip(writers, tmps):
            os.replace(tmp, path)
    finally:
        for tmp in tmps:
            if os.path.exists(tmp):
                os.remove(tmp)


def run(opts, out=None, err=None):
    out, err = out or sys.stdout, err or sys.stderr
    if not 0.0 < opts.holdout < 1.0:
        raise InputError("--holdout must be in (0, 1), got %g" % opts.holdout)
    _check_output(opts.out, "--out")
    if opts.report:
        _check_output(opts.report, "--report")
    if not (np.isfinite(opts.rest_speed) and opts.rest_speed >= 0):
        raise InputError("--rest-speed must be finite and >= 0 rad/s, got %g" % opts.rest_speed)
    if opts.holdout_max_samples < 1:
        raise InputError("--holdout-max-samples must be >= 1, got %d" % opts.holdout_max_samples)
    if opts.dask is not None and not opts.dask_timeout > 0:
        raise InputError("--dask-timeout must be > 0 s, got %g" % opts.dask_timeout)
    model, urdf = _load_model(opts.urdf)
    # connect before the (long) read, so that a wrong address fails at once
    client = connect(opts.dask, opts.dask_timeout) if opts.dask else None
    try:
        return _identify(opts, model, urdf, client, out, err)
    finally:
        if client is not None:
            client.close()


def _reader(bag, names, opts, err):
    def read(show):
        return iter_joint_states(bag, names, opts.topic, opts.progress if show else False, err)
    return read


def _identify(opts, model, urdf, client, out, err):
    if client is None:          # streamed: memory bounded by the filter's chunk
        recordings = [(bag, _reader(bag, model.joint_names, opts, err)) for bag in opts.bag]
        chunks, info = stream(recordings, model.joint_names, opts.holdout,
                              cutoff_hz=opts.cutoff,
                              holdout_max_samples=opts.holdout_max_samples)
        res = identify_chunks(model, chunks, friction=True, armature=opts.armature,
                              consistent=True, urdf=urdf, rest_speed=opts.rest_speed)
        held, n_segments, n_fit = info.held, info.n_segments, info.n_fit
        if info.n_held_dropped:
            print("%s: %d held-out samples beyond --holdout-max-samples %d are not validated"
                  % (PROG, info.n_held_dropped, opts.holdout_max_samples), file=err)
    else:                       # the cluster takes the arrays
        recordings = read_bags(opts.bag, model.joint_names, opts.topic, opts.progress, err)
        data = prepare(recordings, cutoff_hz=opts.cutoff)
        train, held = data.split_holdout(opts.holdout)
        res = identify(model, *train.stacked(), friction=True, armature=opts.armature,
                       consistent=True, urdf=urdf, client=client, rest_speed=opts.rest_speed)
        n_segments, n_fit = len(data.segments), len(train)
    rep = res.report
    if not opts.allow_unexcited:
        rep.require_excited("record a richer motion (an excitation trajectory) or pass "
                            "--allow-unexcited to keep their CAD values")
    hq, hv, ha, htau = held.stacked()
    pred = res.predict(hq, hv, ha)
    lines, *_ = summary_table(model.joint_names, htau, pred, res.model.joint_damping,
                              res.model.joint_friction,
                              at_rest(model, hv, True, opts.rest_speed))
    writers = [(opts.out, res.write_urdf)]
    if opts.report:
        writers.append((opts.report,
                        lambda p: validation_figure(p, model.joint_names, held, pred)))
    _write_all(writers)
    print("%s: %d bag(s), %d segment(s), %d samples for the fit, %d held out; cut-off %g Hz; "
          "condition number %.3g" % (PROG, len(opts.bag), n_segments, n_fit,
                                     len(held), opts.cutoff, rep.condition_number), file=out)
    for line in lines:
        print(line, file=out)
    print("wrote %s%s" % (opts.out, " and %s" % opts.report if opts.report else ""), file=out)
    return 0


def main(argv=None):
    opts = build_parser().parse_args(argv)
    try:
        return run(opts)
    except InputError as e:     # every refusal: one line, status 1
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
        return 1
    except OSError as e:            # an unwritable --out, a bag file that vanished
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
