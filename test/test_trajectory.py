"""runtime.trajectory without ROS: the cubic and quintic segments meet their boundary values and
are consistent with their own derivatives, consecutive segments join continuously, a
trajectory reproduces a polynomial of its degree, the end points are held, and bad arrays are
refused with a reason naming what is wrong."""
import numpy as np
import pytest

from lie_dynamics_ros.runtime.trajectory import Trajectory, cubic, quintic

RNG = np.random.default_rng(23)
S = 1_000_000_000          # ns per s


def fd(f, s, h=1e-6):
    """Central difference of f at s."""
    return (f(s + h) - f(s - h)) / (2 * h)


@pytest.mark.parametrize("T", [0.05, 0.7, 3.0])
def test_cubic_meets_its_boundary_values_and_derivatives(T):
    q0, v0, q1, v1 = RNG.normal(size=(4, 3))
    q, v, a = cubic(q0, v0, q1, v1, 0.0, T)
    np.testing.assert_allclose(q, q0, atol=1e-12)
    np.testing.assert_allclose(v, v0, atol=1e-12)
    q, v, a = cubic(q0, v0, q1, v1, T, T)
    np.testing.assert_allclose(q, q1, atol=1e-9)
    np.testing.assert_allclose(v, v1, atol=1e-9)
    for s in np.linspace(0.1, 0.9, 4) * T:
        q, v, a = cubic(q0, v0, q1, v1, s, T)
        np.testing.assert_allclose(v, fd(lambda x: cubic(q0, v0, q1, v1, x, T)[0], s),
                                   rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(a, fd(lambda x: cubic(q0, v0, q1, v1, x, T)[1], s),
                                   rtol=1e-6, atol=1e-5)
    # a cubic has a constant third derivative: its acceleration is affine in s
    a0, am, a1 = (cubic(q0, v0, q1, v1, s, T)[2] for s in (0.0, T / 2, T))
    np.testing.assert_allclose(am, (a0 + a1) / 2, atol=1e-9)


@pytest.mark.parametrize("T", [0.05, 0.7, 3.0])
def test_quintic_meets_its_boundary_values_and_derivatives(T):
    q0, v0, a0, q1, v1, a1 = RNG.normal(size=(6, 3))

    def f(s):
        return quintic(q0, v0, a0, q1, v1, a1, s, T)

    for s, want in ((0.0, (q0, v0, a0)), (T, (q1, v1, a1))):
        for got, w in zip(f(s), want):
            np.testing.assert_allclose(got, w, atol=1e-8)
    for s in np.linspace(0.1, 0.9, 4) * T:
        q, v, a = f(s)
        np.testing.assert_allclose(v, fd(lambda x: f(x)[0], s), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(a, fd(lambda x: f(x)[1], s), rtol=1e-6, atol=1e-4)


def knots(P, m=2):
    times = np.cumsum(RNG.uniform(0.2, 1.0, P)) * S
    return times.astype(np.int64), [RNG.normal(size=(P, m)) for _ in range(3)]


@pytest.mark.parametrize("fields, continuous", [
    ("qva", 3),          # quintic: q, v and a continuous
    ("qv", 2),           # cubic: q and v
    ("q", 1),            # linear: q
])
def test_segments_join_continuously_and_pass_through_the_points(fields, continuous):
    times, (Q, V, A) = knots(5)
    traj = Trajectory(times, [2, 0], 3, Q, V if "v" in fields else None,
                      A if "a" in fields else None)
    for k in range(1, 4):
        t = int(times[k])
        left, right = traj.sample(t - 1), traj.sample(t)
        for i in range(continuous):
            np.testing.assert_allclose(left[i], right[i], atol=1e-6)
        np.testing.assert_allclose(right[0][[2, 0]], Q[k], atol=1e-12)
        if "v" in fields:
            np.testing.assert_allclose(right[1][[2, 0]], V[k], atol=1e-9)
        assert right[0][1] == 0.0 and right[1][1] == 0.0      # joint 1 is not in cols


@pytest.mark.parametrize("degree", [1, 3])
def test_a_polynomial_of_the_splines_degree_is_reproduced(degree):
    c = RNG.normal(size=degree + 1)

    def poly(t):
        return (sum(c[k] * t ** k for k in range(degree + 1)),
                sum(k * c[k] * t ** (k - 1) for k in range(1, degree + 1)),
                sum(k * (k - 1) * c[k] * t ** (k - 2) for k in range(2, degree + 1)))

    times = np.array([0, 400_000_000, 1_100_000_000, 2_000_000_000])
    pts = np.array([poly(t / S) for t in times])
    traj = Trajectory(times, [0], 1, pts[:, :1], pts[:, 1:2] if degree == 3 else None)
    for t in RNG.integers(0, times[-1], 20):
        got = traj.sample(int(t))
        for g, w in zip(got, poly(t / S)):
            assert g[0] == pytest.approx(w, abs=1e-9)


def test_outside_the_range_the_end_points_are_held_at_rest():
    times, (Q, V, A) = knots(3)
    traj = Trajectory(times, [1, 0], 2, Q, V, A)
    assert traj.end_ns == times[-1] and list(traj.mask) == [True, True]
    for t, k in ((0, 0), (int(times[0]) - 1, 0), (traj.end_ns + 1, 2), (10 * traj.end_ns, 2)):
        q, v, a = traj.sample(t)
        np.testing.assert_array_equal(q[[1, 0]], Q[k])
        assert not v.any() and not a.any()
    q, v, a = traj.sample(traj.end_ns)          # exactly at the last point: its values
    for got, want in zip((q, v, a), (Q, V, A)):
        np.testing.assert_array_equal(got[[1, 0]], want[-1])


def test_without_positions_velocities_and_accelerations_are_interpolated():
    times = np.array([S, 3 * S])
    V = np.array([[1.0], [5.0]])
    q, v, a = Trajectory(times, [0], 1, v=V).sample(2 * S)
    assert q is None and v[0] == pytest.approx(3.0) and a[0] == pytest.approx(2.0)
    q, v, a = Trajectory(times, [0], 1, v=V).sample(4 * S)       # the end velocity stays
    assert q is None and v[0] == 5.0 and a[0] == 0.0
    q, v, a = Trajectory(times, [0], 1, a=V).sample(2 * S)
    assert q is None and v is None and a[0] == pytest.approx(3.0)


def test_the_trajectory_is_read_only_and_owns_its_arrays():
    times, (Q, V, A) = knots(2)
    traj = Trajectory(times, [0, 1], 2, Q, V, A)
    before = traj.sample(int(times[1]))[0].copy()
    Q[:] = 99.0
    np.testing.assert_array_equal(traj.sample(int(times[1]))[0], before)
    for arr in (traj.times_ns, traj.cols, traj.mask, traj.q, traj.v, traj.a):
        with pytest.raises(ValueError):
            arr[0] = 0
    q = traj.sample(int(times[1]))[0]
    q[0] = 7.0                                   # a sample is the caller's to change
    np.testing.assert_array_equal(traj.sample(int(times[1]))[0], before)


@pytest.mark.parametrize("args, kw, fragment", [
    (([], [0], 1), dict(q=np.zeros((0, 1))), "at least one point"),
    (([0, 5, 5], [0], 1), dict(q=np.zeros((3, 1))), "point 1 at 5 ns, point 2 at 5 ns"),
    (([5, 0], [0], 1), dict(q=np.zeros((2, 1))), "not increasing"),
    (([0], [0, 0], 2), dict(q=np.zeros((1, 2))), "distinct"),
    (([0], [2], 2), dict(q=np.zeros((1, 1))), "outside the model's 2 joints"),
    (([0], [0], 1), dict(), "needs positions, velocities or accelerations"),
    (([0, 1], [0], 1), dict(v=np.zeros((1, 1))), "velocities must have shape (2, 1)"),
    (([0, 1], [0], 1), dict(a=np.array([[0.0], [np.inf]])), "non-finite accelerations inf "
                                                             "at point 1, column 0"),
])
def test_bad_arrays_are_refused_naming_what_is_wrong(args, kw, fragment):
    with pytest.raises(ValueError) as e:
        Trajectory(*args, **kw)
    assert fragment in str(e.value)
