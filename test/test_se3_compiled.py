"""The compiled path of ``ldr.lie.se3`` (kernels/se3_public.py) against its numpy reference, the
``*_unchecked`` twins, on random inputs and at the edges (identity, small angles, both sides of
the series switch, near and at pi), and its argument checks against the numpy checks that
``se3.interpolate``, ``se3.hat`` and ``se3.make`` still run: the same exception, the same
message, for every kind of bad argument."""
import numpy as np
import pytest

from lie_dynamics_ros import InputError
from lie_dynamics_ros.lie import se3, so3

ANGLES = [0.0, 1e-12, 1e-9, 1e-4, 0.3, 0.4999999, 0.5000001, 1.0, np.pi / 2, 2.5,
          np.pi - 1e-4, np.pi - 1e-7, np.pi - 1e-9, np.pi]


def _twists(seed, per_angle=4):
    """Twists (v, w) with |w| at each of ANGLES, v of norms 0, 1e-6, 1 and 100."""
    r = np.random.default_rng(seed)
    out = []
    for a in ANGLES:
        for k in range(per_angle):
            u = r.normal(size=3)
            v = r.normal(size=3)
            v *= [0.0, 1e-6, 1.0, 100.0][k % 4] / np.linalg.norm(v)
            out.append(np.concatenate([v, u / np.linalg.norm(u) * a]))
    return out


def _poses(seed):
    """exp of the twists, plus poses with a rotation of exactly pi about an axis and the
    identity."""
    Ts = [se3.exp_unchecked(xi) for xi in _twists(seed)]
    for axis in np.eye(3):
        Ts.append(se3.make(so3.exp(np.pi * axis), [1.0, -2.0, 3.0]))
    Ts.append(np.eye(4))
    return Ts


def _close(a, b, tol=1e-12):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == np.float64
    scale = max(1.0, np.abs(b).max())
    assert np.abs(a - b).max() <= tol * scale, np.abs(a - b).max()


def test_the_inputs_cover_the_edges():
    """Both branches of every closed form: below and above the series switch, and the pi
    branch of the log (cos t <= 0)."""
    angles = [np.linalg.norm(xi[3:]) for xi in _twists(0)]
    assert min(angles) == 0.0 and abs(max(angles) - np.pi) < 1e-15
    assert any(so3.SMALL_ANGLE - 1e-6 < a < so3.SMALL_ANGLE for a in angles)
    assert any(so3.SMALL_ANGLE < a < so3.SMALL_ANGLE + 1e-6 for a in angles)
    assert any(np.trace(T[:3, :3]) < 1.0 for T in _poses(0))


@pytest.mark.parametrize("seed", range(3))
def test_exp_log_inv_compose_equal_the_numpy_twins(seed):
    Ts = _poses(seed)
    for xi in _twists(seed):
        _close(se3.exp(xi), se3.exp_unchecked(xi))
    for A, B in zip(Ts, Ts[1:] + Ts[:1]):
        _close(se3.log(A), se3.log_unchecked(A))
        _close(se3.inv(A), se3.inv_unchecked(A))
        _close(se3.compose(A, B), se3.compose_unchecked(A, B))
        _close(se3.compose(A, B, A), se3.compose_unchecked(A @ B, A))


@pytest.mark.parametrize("seed", range(3))
def test_actions_and_adjoints_equal_the_numpy_twins(seed):
    r = np.random.default_rng(100 + seed)
    for T in _poses(seed):
        x, y = r.normal(size=3), r.normal(size=6) * 10.0
        _close(se3.act_point(T, x), se3.act_point_unchecked(T, x))
        _close(se3.act_inv_point(T, x), se3.act_inv_point_unchecked(T, x))
        for name in ("act_twist", "act_inv_twist", "act_wrench", "act_inv_wrench"):
            _close(getattr(se3, name)(T, y), getattr(se3, name + "_unchecked")(T, y))
        _close(se3.Ad(T), se3.Ad_unchecked(T))
        _close(se3.Ad_inv(T), se3.Ad_inv_unchecked(T))
        _close(se3.log_jacobian(T), se3.dexp_inv_unchecked(-se3.log_unchecked(T)))


@pytest.mark.parametrize("seed", range(3))
def test_ad_and_the_jacobians_of_exp_equal_the_numpy_twins(seed):
    for xi in _twists(seed):
        _close(se3.ad(xi), se3.ad_unchecked(xi))
        _close(se3.dexp(xi), se3.dexp_unchecked(xi))
        _close(se3.left_jacobian(xi), se3.dexp_unchecked(xi))
        _close(se3.right_jacobian(xi), se3.dexp_unchecked(-xi))
        _close(se3.dexp_inv(xi), se3.dexp_inv_unchecked(xi))
        _close(se3.left_jacobian_inv(xi), se3.dexp_inv_unchecked(xi))
        _close(se3.right_jacobian_inv(xi), se3.dexp_inv_unchecked(-xi))
        # identities of the compiled results themselves
        _close(se3.right_jacobian_inv(xi) @ se3.right_jacobian(xi), np.eye(6), 1e-10)
        _close(se3.exp(se3.log(se3.exp(xi))), se3.exp(xi), 1e-10)


def test_outputs_are_new_arrays():
    T, xi = se3.exp(np.full(6, 0.2)), np.full(6, 0.2)
    assert se3.inv(T) is not se3.inv(T)
    assert not np.shares_memory(se3.compose(T, T), T)
    assert not np.shares_memory(se3.act_twist(T, xi), xi)


def _bad_poses():
    """Every kind of bad pose, and poses of other types that are fine."""
    scaled = np.eye(4)
    scaled[:3, :3] *= 1.01
    nan, inf, big, row = np.eye(4), np.eye(4), np.eye(4), np.eye(4)
    nan[0, 3], inf[1, 1], row[3, 0] = np.nan, np.inf, 0.5
    big[:3, 3] = 1e308               # finite entries whose sum overflows
    sheared = se3.exp(np.full(6, 0.3))
    sheared[0, 1] += 1e-3
    T = se3.exp(np.full(6, 0.3))
    return [scaled, np.diag([1.0, 1.0, -1.0, 1.0]), nan, inf, big, row, sheared,
            np.eye(3), np.zeros(16), np.zeros((4, 4, 1)), np.zeros((4, 5)), "pose", [[1.0]],
            np.eye(4, dtype=np.float32), np.eye(4, dtype=int), np.asfortranarray(T),
            np.eye(5)[:4, :4], T.tolist(), T[::1, ::1],
            _read_only(T), np.tile(T, (1, 2))[:, ::2]]


def _read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def _bad_vectors(n):
    v = np.linspace(0.1, 0.6, n)
    inf, big = v.copy(), np.full(n, 1e308)
    inf[-1] = -np.inf
    return [np.full(n, np.nan), inf, big, np.zeros(n - 1), np.zeros((n, 1)), np.zeros(n + 1),
            "xi", [0.0] * n, v.astype(np.float32), np.arange(n), np.tile(v, 2)[::2],
            _read_only(v), np.zeros((1, n))]


def _outcome(call):
    """(exception type, message) of call(), or ('ok', result)."""
    try:
        return "ok", call()
    except Exception as e:              # the type is part of what must agree
        return type(e), str(e)


def _same(ours, ref, name, ref_name):
    (t1, m1), (t2, m2) = ours, ref
    assert t1 is t2, (name, ours, ref)
    if t1 == "ok":
        return
    if t1 is InputError:
        assert m2.startswith(ref_name) and m1 == name + m2[len(ref_name):], (m1, m2)
    else:
        assert m1 == m2


POSE_CALLS = {"log": se3.log, "inv": se3.inv, "Ad": se3.Ad, "Ad_inv": se3.Ad_inv,
              "log_jacobian": se3.log_jacobian, "act_twist": lambda T: se3.act_twist(T, np.ones(6)),
              "act_inv_wrench": lambda T: se3.act_inv_wrench(T, np.ones(6)),
              "act_point": lambda T: se3.act_point(T, np.ones(3)),
              "compose T1": lambda T: se3.compose(T, np.eye(4))}


@pytest.mark.parametrize("name", sorted(POSE_CALLS))
def test_bad_poses_give_the_numpy_checks_errors(name):
    """The reference: interpolate's numpy check of T0 (the same ``_pose_checked``)."""
    for k, bad in enumerate(_bad_poses()):
        ours = _outcome(lambda: POSE_CALLS[name](bad))
        ref = _outcome(lambda: se3.interpolate(bad, np.eye(4), 0.0))
        _same(ours, ref, "T1" if name.startswith("compose") else "T", "T0")
        assert ours[0] in ("ok", InputError, ValueError), (k, ours)
        if ours[0] == "ok":          # converted input: the result of the float64 pose
            _close(ours[1], POSE_CALLS[name](np.array(bad, dtype=float, order="C")))
    # a second pose argument is named too, and a first bad one is reported first
    with pytest.raises(InputError, match="^T2: the rotation is a reflection"):
        se3.compose(np.eye(4), np.diag([1.0, 1.0, -1.0, 1.0]))
    with pytest.raises(InputError, match="^T must be finite"):
        se3.act_twist(np.full((4, 4), np.nan), np.full(6, np.nan))


VEC_CALLS = {"exp": (se3.exp, "xi", 6), "ad": (se3.ad, "xi", 6), "dexp": (se3.dexp, "xi", 6),
             "dexp_inv": (se3.dexp_inv, "xi", 6),
             "right_jacobian": (se3.right_jacobian, "xi", 6),
             "right_jacobian_inv": (se3.right_jacobian_inv, "xi", 6),
             "left_jacobian_inv": (se3.left_jacobian_inv, "xi", 6),
             "act_inv_twist": (lambda x: se3.act_inv_twist(np.eye(4), x), "xi", 6),
             "act_wrench": (lambda x: se3.act_wrench(np.eye(4), x), "F", 6),
             "act_inv_point": (lambda x: se3.act_inv_point(np.eye(4), x), "x", 3)}


@pytest.mark.parametrize("name", sorted(VEC_CALLS))
def test_bad_vectors_give_the_numpy_checks_errors(name):
    """The reference: hat's numpy check of a 6-vector, make's of a 3-vector (``se3._vec``)."""
    call, arg, n = VEC_CALLS[name]
    ref_call, ref_name = (se3.hat, "xi") if n == 6 else (lambda p: se3.make(np.eye(3), p), "p")
    for bad in _bad_vectors(n):
        ours, ref = _outcome(lambda: call(bad)), _outcome(lambda: ref_call(bad))
        _same(ours, ref, arg, ref_name)
        if ours[0] == "ok":          # converted input: the result of the float64 vector
            good = np.asarray(bad, dtype=float).reshape(n)
            _close(ours[1], call(np.ascontiguousarray(good)))


def test_each_kernel_keeps_its_one_compiled_signature():
    """Arguments of other types are converted by the front, never compiled for: after calls
    with float32, int, Fortran-ordered, read-only and list arguments every entry of
    ``kernels.se3_public`` holds the one signature it was opened with."""
    from lie_dynamics_ros.kernels import se3_public as K
    T = se3.exp(np.full(6, 0.2))
    odd_poses = [T.astype(np.float32), np.asfortranarray(T), _read_only(T), T.tolist()]
    odd_vecs = [np.full(6, 0.2, dtype=np.float32), np.arange(6), [0.1] * 6, _read_only(T[0])]
    for P in odd_poses:
        se3.log(P), se3.inv(P), se3.Ad(P), se3.Ad_inv(P), se3.log_jacobian(P)
        se3.compose(P, P), se3.act_point(P, [1, 2, 3]), se3.act_twist(P, np.ones(6))
    for x in odd_vecs:
        x6 = x if len(x) == 6 else np.ones(6)
        se3.exp(x6), se3.ad(x6), se3.dexp(x6), se3.dexp_inv(x6), se3.right_jacobian(x6)
        se3.act_wrench(T, x6)
    for name, (fn, _) in K.SIGNATURES.items():
        assert len(fn.signatures) == 1, (name, fn.signatures)
