"""The centroidal quantities and M^-1 on the call plan: each dispatches one compiled entry with
the Data's packed buffer (kernels/centroidal_plan.py); every other input takes the checked path.
Both give the same bits; the principal-axis shortcuts (world motion from a column of R, the
one-DOF M^-1 passes) agree with the general path on the same robot tilted by 1e-12 rad and with
Pinocchio; a Data follows its model; threads with their own Data do not disturb each other; and
a result never shares memory with the Data."""
import threading

import numpy as np
import pytest

import pinocchio as pin

import lie_dynamics_ros as ldr
from lie_dynamics_ros.algorithms import centroidal as C
from lie_dynamics_ros.kernels import centroidal_plan as E
from models import bundled, zoo
from oracle import Oracle, erd, rel_err
from test_principal_axis import TILT, _urdf

CALLS = [("center_of_mass", lambda m, q, v, a: ldr.center_of_mass(m, q)),
         ("center_of_mass (v)", lambda m, q, v, a: ldr.center_of_mass(m, q, v)),
         ("center_of_mass (v, a)", lambda m, q, v, a: ldr.center_of_mass(m, q, v, a)),
         ("center_of_mass_jacobian", lambda m, q, v, a: ldr.center_of_mass_jacobian(m, q)),
         ("centroidal_momentum", lambda m, q, v, a: ldr.centroidal_momentum(m, q, v)),
         ("centroidal_momentum_matrix", lambda m, q, v, a: ldr.centroidal_momentum_matrix(m, q)),
         ("..._time_variation",
          lambda m, q, v, a: ldr.centroidal_momentum_matrix_time_variation(m, q, v)),
         ("mass_matrix_inverse", lambda m, q, v, a: ldr.mass_matrix_inverse(m, q))]


def _state(model, seed):
    rng = np.random.default_rng(seed)
    return (np.asarray(ldr.random_configuration(model, rng), dtype=float),
            rng.normal(size=model.nv), rng.normal(size=model.nv))


def _arrays(x):
    return x if isinstance(x, tuple) else (x,)


@pytest.fixture(scope="module", params=["arm7", "zoo", "zoo_mimic", "solo12"])
def model(request):
    if request.param == "arm7":
        return bundled("arm7.urdf")
    if request.param == "solo12":
        return ldr.load_urdf(erd("solo_description/robots/solo12.urdf"), floating_base=True)
    return zoo(1, mimic=request.param == "zoo_mimic")


def test_every_entry_is_compiled_for_its_one_signature(model):
    q, v, a = _state(model, 0)
    for _, call in CALLS:
        call(model, q, v, a)
    for name, (fn, sig) in E.SIGNATURES.items():
        assert getattr(C.ready, name), name
        assert fn.signatures == [sig], name


def test_the_entry_and_the_checked_path_give_the_same_bits(model):
    """Lists take the checked path (the same kernels called argument by argument)."""
    for seed in range(3):
        q, v, a = _state(model, seed)
        for name, call in CALLS:
            fast = _arrays(call(model, q, v, a))
            checked = _arrays(call(model, list(q), list(v), list(a)))
            assert len(fast) == len(checked), name
            for f, c in zip(fast, checked):
                assert np.array_equal(f, c), name


def test_other_arrays_are_converted_never_reinterpreted():
    arm = bundled("arm7.urdf")
    q, v, a = _state(arm, 4)
    strided = np.repeat(q, 2)[::2]
    ro = q.copy()
    ro.flags.writeable = False
    qi = np.arange(arm.nq) % 2
    f32 = q.astype(np.float32)
    for qq, ref in ((qi, qi.astype(float)), (strided, q), (ro, q), (f32, f32.astype(float))):
        for name, call in CALLS:
            for f, c in zip(_arrays(call(arm, qq, v, a)), _arrays(call(arm, ref, v, a))):
                assert np.array_equal(f, c), name
    with pytest.raises(TypeError):
        E.center_of_mass(arm.default_data().buf, np.arange(arm.nq), np.empty(3))


@pytest.fixture(scope="module")
def axes_pair(tmp_path_factory):
    out = []
    for tilt in (0.0, TILT):
        path = tmp_path_factory.mktemp("axes") / f"axes_{tilt}.urdf"
        path.write_text(_urdf(tilt))
        model = ldr.load_urdf(str(path))
        out.append((model, Oracle(model, str(path), False)))
    return out


def test_principal_axis_and_general_path_agree_with_each_other_and_pinocchio(axes_pair):
    """On-axis joints (every axis and sign, revolute and prismatic, mimics of both) take the
    shortcuts; the tilted twin the general path. A wrong shortcut would be off by O(1). The
    model has mimic joints, so M^-1 goes through M there (the one-DOF M^-1 passes are checked
    on the tree without them below), and Pinocchio's dccrba refuses it (test_centroidal
    compares dA_G with it on five robots)."""
    (exact, _), (tilted, _) = axes_pair
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.uniform(-2.0, 2.0, exact.nq)
        v, a = rng.normal(size=exact.nv), rng.normal(size=exact.nv)
        for name, call in CALLS:
            for f, c in zip(_arrays(call(exact, q, v, a)), _arrays(call(tilted, q, v, a))):
                assert rel_err(f, c) < 1e-10, name
        for model, o in axes_pair:
            qp, vp, ap = o._qva(q, v, a)
            pin.ccrba(o.pm, o.pd, qp, vp)
            Ag = ldr.centroidal_momentum_matrix(model, q)
            assert rel_err(Ag, o.map.jac_from_pin(o.pd.Ag, q)) < 1e-10
            assert rel_err(ldr.centroidal_momentum(model, q, v), o.pd.hg.vector) < 1e-10
            Jc = pin.jacobianCenterOfMass(o.pm, o.pd, qp)
            assert rel_err(ldr.center_of_mass_jacobian(model, q), o.map.jac_from_pin(Jc, q)) \
                < 1e-10


def test_one_dof_inverse_on_every_principal_axis():
    """M^-1 with its one-DOF passes on a branching tree of on-axis joints (both signs,
    revolute and prismatic) below a free base, against the tilted twin and inv(M)."""
    def tree(tilt):
        b = ldr.ModelBuilder("branches")
        rng = np.random.default_rng(8)
        b.add_link("base", mass=3.0, inertia=np.eye(3) * 0.1)
        b.add_joint("root", ldr.Free(), None, "base")
        axes = [(0, 0, 1), (0, -1, 0), (1, 0, 0), (-1, 0, 0), (0, 0, -1), (0, 1, 0)]
        for k, ax in enumerate(axes):
            a = np.array(ax, float) + tilt * np.roll(np.abs(ax), 1)
            parent = "base" if k % 3 == 0 else f"l{k - 1}"
            b.add_link(f"l{k}", mass=rng.uniform(0.5, 2), com=rng.normal(size=3) * 0.1,
                       inertia=np.diag(rng.uniform(0.03, 0.05, 3)))
            kind = ldr.Revolute(a) if k % 2 == 0 else ldr.Prismatic(a)
            b.add_joint(f"j{k}", kind, parent, f"l{k}",
                        origin=np.vstack([np.hstack([np.eye(3), rng.normal(size=(3, 1)) * 0.2]),
                                          [0, 0, 0, 1]]))
        return b.build()
    exact, tilted = tree(0.0), tree(TILT)
    for seed in range(4):
        q, _, _ = _state(exact, seed)
        Mi = ldr.mass_matrix_inverse(exact, q)
        assert rel_err(Mi, ldr.mass_matrix_inverse(tilted, q)) < 1e-10
        assert rel_err(Mi, np.linalg.inv(ldr.mass_matrix(exact, q))) < 1e-10


def test_a_data_follows_the_model_it_is_used_with():
    arm = bundled("arm7.urdf")
    others = [arm.with_gravity((0.0, 0.3, -1.62)), arm.with_joint_dynamics(armature=0.05),
              arm.with_inertial_parameters(1.5 * ldr.inertial_parameters(arm))]
    d = arm.create_data()
    q, v, a = _state(arm, 7)
    for m in [arm] + others + [arm]:
        assert np.array_equal(ldr.mass_matrix_inverse(m, q, data=d), ldr.mass_matrix_inverse(m, q))
        assert np.array_equal(ldr.centroidal_momentum_matrix(m, q, data=d),
                              ldr.centroidal_momentum_matrix(m, q))
        for f, c in zip(ldr.center_of_mass(m, q, v, a, data=d), ldr.center_of_mass(m, q, v, a)):
            assert np.array_equal(f, c)
    heavier = ldr.mass_matrix_inverse(others[2], q, data=d)
    assert not np.allclose(heavier, ldr.mass_matrix_inverse(arm, q, data=d))


def test_results_are_new_arrays_and_a_later_call_leaves_them_alone():
    arm = bundled("arm7.urdf")
    q, v, a = _state(arm, 1)
    q2, v2, a2 = _state(arm, 2)
    d = arm.default_data()
    for name, call in CALLS:
        first = [x.copy() for x in _arrays(call(arm, q, v, a))]
        kept = _arrays(call(arm, q, v, a))
        call(arm, q2, v2, a2)
        for k, c in zip(kept, first):
            assert np.array_equal(k, c), name
            assert not np.shares_memory(k, d.buf) and not np.shares_memory(k, d.Jb), name


def test_threads_with_the_default_data_get_their_own_numbers():
    model = ldr.load_urdf(erd("solo_description/robots/solo12.urdf"), floating_base=True)
    states = [_state(model, s) for s in range(4)]
    want = [[_arrays(call(model, *st)) for _, call in CALLS] for st in states]
    bad = []

    def work(k):
        for _ in range(200):
            got = [_arrays(call(model, *states[k])) for _, call in CALLS]
            for g, w in zip(got, want[k]):
                if not all(np.array_equal(x, y) for x, y in zip(g, w)):
                    bad.append(k)
                    return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


@pytest.mark.parametrize("which", ["q", "v", "a"])
def test_a_wrong_length_is_named(which):
    arm = bundled("arm7.urdf")
    args = dict(zip("qva", _state(arm, 5)))
    args[which] = args[which][:-1]
    with pytest.raises(ldr.InputError, match=rf"^{which} must have shape"):
        ldr.center_of_mass(arm, args["q"], args["v"], args["a"])
    if which != "a":
        with pytest.raises(ldr.InputError, match=rf"^{which} must have shape"):
            ldr.centroidal_momentum(arm, args["q"], args["v"])
        with pytest.raises(ldr.InputError, match=rf"^{which} must have shape"):
            ldr.centroidal_momentum_matrix_time_variation(arm, args["q"], args["v"])
    if which == "q":
        for f in (ldr.center_of_mass_jacobian, ldr.centroidal_momentum_matrix,
                  ldr.mass_matrix_inverse):
            with pytest.raises(ldr.InputError, match=r"^q must have shape"):
                f(arm, args["q"])
