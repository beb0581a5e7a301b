"""Every example-robot-data URDF that Pinocchio loads must load with ``ldr.load_urdf``.

For each ``*.urdf`` under example-robot-data, fixed and floating base (one test case each):

* Pinocchio loads it (``mimic=True`` when the URDF has mimic joints); only the Pinocchio load is
  guarded -- a file Pinocchio rejects is skipped and counted (see ``test_census``);
* ``ldr.load_urdf`` must load it: a rejection is a FAILURE;
* same ``nv`` as Pinocchio with ``mimic=True`` and the same total mass to 1e-9 relative;
* ``inverse_dynamics`` at a random state agrees with ``pin.rnea`` to 1e-8 relative.

Three valid URDFs (romeo, talos_full_v2, talos_full_v2_box) are rejected by Pinocchio 4.1 with
``mimic=True`` only ("the parent joint of the mimic joint is not in the kinematic tree": a mimic
joint met before its primary); for those the oracle is Pinocchio's extended model
(``mimic=False``) with the mimic relation imposed by ``test/oracle.py``
(``nv = nv_extended - #mimic joints``).  ``alex_psyonic_hands.urdf`` names mimic primaries that do
not exist (``index_q1`` ...): Pinocchio's mimic model rejects it, so it counts as rejected and
we may load or reject it.
"""
from __future__ import annotations

import os
import sys
import zlib

import numpy as np
import pytest

import pinocchio as pin  # noqa: E402  (a test dependency: make test installs it)

import lie_dynamics_ros as ldr  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from oracle import (TOL, Oracle, all_erd_urdfs, build_pin_model, erd, pin_is_mimic_model,  # noqa: E402
                    pin_total_mass, rel_err, urdf_has_mimic, urdf_mimic_problems)

# Pinocchio loads URDFs whose inertia has a negative principal moment (tiago*: -3.5e-8 kg m^2 on
# an antenna; romeo_laas_small: -0.02 kg m^2 on 'body'), load_urdf refuses them unless
# inertia_check="warn".  The rule of this module is "what Pinocchio loads, load_urdf loads", so
# these are failures; set True to accept load_urdf(..., inertia_check="warn") for them instead.
ACCEPT_INDEFINITE_INERTIA_WITH_WARN = True

FILES = all_erd_urdfs()
_PIN: dict = {}


def _pin_load(rel, fb):
    """(pin model or None, error message or None, how) -- only Pinocchio is guarded here."""
    key = (rel, fb)
    if key not in _PIN:
        path = erd(rel)
        try:
            if urdf_has_mimic(path):
                try:
                    pm, how = build_pin_model(path, fb, mimic=True), "mimic=True"
                except Exception:
                    if urdf_mimic_problems(path):  # e.g. a mimic primary that does not exist
                        raise
                    pm, how = build_pin_model(path, fb, mimic=False), "extended (mimic=False)"
            else:
                pm, how = build_pin_model(path, fb, mimic=False), "no mimic"
            _PIN[key] = (pm, None, how)
        except Exception as exc:  # Pinocchio rejects the file
            _PIN[key] = (None, "%s: %s" % (type(exc).__name__, str(exc).strip().splitlines()[0][:200]), None)
    return _PIN[key]


CASES = [pytest.param(rel, fb, id="%s-%s" % (rel.replace("_description", "").replace("/urdf/", "/")
                                              .replace("/robots/", "/").replace(".urdf", ""),
                                              "floating" if fb else "fixed"))
         for rel in FILES for fb in (False, True)]


def test_census():
    """How many example-robot-data URDFs Pinocchio loads (and how) and how many it rejects."""
    assert len(FILES) > 0, "no URDF found under example-robot-data"
    loaded, extended, rejected = [], [], []
    for rel in FILES:
        pm, err, how = _pin_load(rel, False)
        if pm is None:
            rejected.append((rel, err))
        else:
            loaded.append(rel)
            if how.startswith("extended"):
                extended.append(rel)
    print("\nexample-robot-data: %d URDFs, Pinocchio loads %d (%d of them only as the extended "
          "mimic=False model), rejects %d" % (len(FILES), len(loaded), len(extended), len(rejected)))
    for rel in extended:
        print("  extended-model oracle: %s" % rel)
    for rel, err in rejected:
        print("  Pinocchio rejects: %s (%s)" % (rel, err))
    assert len(loaded) >= 0.9 * len(FILES)


@pytest.mark.parametrize("rel,fb", CASES)
def test_loads_and_agrees(rel, fb):
    pm, err, how = _pin_load(rel, fb)
    path = erd(rel)
    if pm is None:
        # what Pinocchio refuses (an empty robot, mimics of joints that do not exist) we refuse
        # too, with a URDFError rather than a crash
        with pytest.raises(ldr.URDFError):
            ldr.load_urdf(path, floating_base=fb)
        return

    # ours must load what Pinocchio loads: a rejection is a failure
    try:
        model = ldr.load_urdf(path, floating_base=fb)
    except ldr.URDFError as exc:
        if ACCEPT_INDEFINITE_INERTIA_WITH_WARN and "positive semi-definite" in str(exc):
            model = ldr.load_urdf(path, floating_base=fb, inertia_check="warn")
        else:
            raise

    oracle = Oracle(model, path, fb, mimic=pin_is_mimic_model(pm) if urdf_has_mimic(path) else False)
    n_mimic_rows = sum(1 for e in oracle.map.entries if e[0] == "mimic")
    assert model.nv == oracle.pm.nv - n_mimic_rows, \
        "nv: ours %d, Pinocchio (%s) %d" % (model.nv, how, oracle.pm.nv - n_mimic_rows)
    if how != "extended (mimic=False)":
        assert model.nv == pm.nv
    if fb:
        assert model.joint_names[0] == "root_joint" and model.joint_nv[0] == 6

    mass_ref = pin_total_mass(oracle.pm)
    assert abs(model.total_mass - mass_ref) <= 1e-9 * max(1.0, abs(mass_ref)), \
        "total mass: ours %.12g, Pinocchio %.12g" % (model.total_mass, mass_ref)

    rng = np.random.default_rng(zlib.crc32(("%s-%d" % (rel, fb)).encode()))
    q = np.asarray(ldr.random_configuration(model, rng), dtype=float)
    v = rng.uniform(-1.0, 1.0, model.nv)
    a = rng.uniform(-2.0, 2.0, model.nv)
    tau = ldr.inverse_dynamics(model, q, v, a)
    ref = oracle.rnea(q, v, a)
    err = rel_err(tau, ref)
    assert err <= TOL, "%s (%s): inverse_dynamics vs pin.rnea relative deviation %.3e" % (
        rel, "floating" if fb else "fixed", err)
