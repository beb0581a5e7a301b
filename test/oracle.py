"""Pinocchio as a test oracle for ``lie_dynamics_ros`` (helpers, not a test module).

Pinocchio is used ONLY here and in the tests/benchmarks, never inside ``lie_dynamics_ros``.

What lives here
---------------
* :func:`robots_dir` / :func:`erd` -- where example-robot-data keeps its robots (found through the
  installed ``pinocchio`` package, no hard-coded path).
* :func:`build_pin_model` -- the Pinocchio model of a URDF, fixed or floating base
  (``pin.JointModelFreeFlyer()`` named ``root_joint``), ``mimic=True`` when the URDF has mimic
  joints.  When Pinocchio cannot build the mimic model (it rejects a mimic joint that comes before
  its primary joint in its tree traversal) :func:`build_pin_model` falls back to the *extended*
  model (``mimic=False``: every mimic joint is an independent joint) and the mapping below
  reinstates the mimic constraint ``q_m = multiplier * q_p + offset`` itself.
* :class:`PinMap` -- the map between our coordinates and Pinocchio's, BY JOINT NAME:

  ======================  =====================  ==================================
  joint                   ours (q / v)           Pinocchio (q / v)
  ======================  =====================  ==================================
  continuous              angle / rate           (cos, sin) / rate
  free flyer (root_joint) [x y z qx qy qz qw] /  identical
                          [v_lin, w] base frame
  ball                    quaternion xyzw / w    identical (JointModelSpherical)
  planar                  (x, y, th) / dq/dt     (x, y, cos, sin) / (R^T [xd, yd], thd)
  mimic (extended model)  absent                 mult * primary + offset / mult * rate
  ======================  =====================  ==================================

  In general ``v_pin = T(q) v`` with ``T`` (pin.nv x our.nv) a permutation except for planar
  blocks and mimic rows; then ``tau = T^T tau_pin``, ``M = T^T M_pin T``,
  ``C = T^T (C_pin T + M_pin Tdot)``, ``J = J_pin T`` and ``a_pin = T a + Tdot v``.
* :class:`Oracle` -- every quantity of the public API computed by Pinocchio and returned in OUR
  coordinates (falls back to ``M^-1 (tau - h)`` for ABA and to ``M``/centre of mass for the
  energies when the Pinocchio model has mimic joints, which those algorithms refuse, and to the
  extended model for the Coriolis matrix, which Pinocchio 4.1 computes wrongly with mimic joints).
* :func:`rel_err` -- ``||ours - ref|| / max(1, ||ref||)``.
"""
from __future__ import annotations

import functools
import glob
import os
import sysconfig
import xml.etree.ElementTree as ET

import numpy as np

import pinocchio as pin

TOL = 1e-8


# ----------------------------------------------------------------------------- locations
@functools.lru_cache(maxsize=None)
def robots_dir() -> str:
    """``<site-packages>/cmeel.prefix/share/example-robot-data/robots``."""
    tail = os.path.join("share", "example-robot-data", "robots")
    candidates = []
    # pinocchio lives in <site-packages>/cmeel.prefix/lib/pythonX.Y/site-packages/pinocchio
    d = os.path.dirname(os.path.abspath(pin.__file__))
    while True:
        if os.path.basename(d) == "cmeel.prefix":
            candidates.append(os.path.join(d, tail))
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for key in ("purelib", "platlib"):
        candidates.append(os.path.join(sysconfig.get_paths()[key], "cmeel.prefix", tail))
    try:  # the example_robot_data python package, when installed, knows its own path
        import example_robot_data  # noqa: F401
        from example_robot_data.path import EXAMPLE_ROBOT_DATA_MODEL_DIR  # type: ignore

        candidates.append(EXAMPLE_ROBOT_DATA_MODEL_DIR)
    except ImportError:  # the python package is optional; its data is found above
        pass
    for c in candidates:
        if os.path.isdir(c):
            return os.path.normpath(c)
    raise FileNotFoundError("example-robot-data robots directory not found; tried %s" % candidates)


def erd(relpath: str) -> str:
    """Absolute path of ``relpath`` inside the example-robot-data robots directory."""
    return os.path.join(robots_dir(), relpath)


def all_erd_urdfs() -> list[str]:
    """Every ``*.urdf`` under example-robot-data, as paths relative to :func:`robots_dir`."""
    root = robots_dir()
    return sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "**", "*.urdf"), recursive=True))


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bundled(name: str) -> str:
    """Path of a URDF bundled with the package (``urdf/<name>``)."""
    return os.path.join(REPO_ROOT, "urdf", name)


# ----------------------------------------------------------------------------- URDF facts
@functools.lru_cache(maxsize=None)
def urdf_joints(path: str) -> dict:
    """name -> dict(type, parent, child, mimic=(primary, multiplier, offset) or None)."""
    root = ET.parse(path).getroot()
    out = {}
    for j in root.iter("joint"):
        if j.get("name") is None or j.get("type") is None:
            continue  # e.g. <joint> inside <transmission>
        par, chi = j.find("parent"), j.find("child")
        if par is None or chi is None:
            continue
        mim = j.find("mimic")
        mimic = None
        if mim is not None:
            mimic = (mim.get("joint"), float(mim.get("multiplier", 1.0)), float(mim.get("offset", 0.0)))
        out[j.get("name")] = dict(type=j.get("type"), parent=par.get("link"), child=chi.get("link"), mimic=mimic)
    return out


def urdf_has_mimic(path: str) -> bool:
    return any(j["mimic"] is not None and j["type"] != "fixed" for j in urdf_joints(path).values())


def urdf_mimic_problems(path: str) -> list:
    """Mimic joints whose primary joint is missing or fixed (an invalid mimic relation)."""
    J = urdf_joints(path)
    return [(n, j["mimic"][0]) for n, j in J.items()
            if j["mimic"] is not None and j["type"] != "fixed"
            and (j["mimic"][0] not in J or J[j["mimic"][0]]["type"] == "fixed")]


@functools.lru_cache(maxsize=None)
def urdf_links(path: str) -> tuple:
    return tuple(l.get("name") for l in ET.parse(path).getroot().findall("link"))


# ----------------------------------------------------------------------------- Pinocchio model
def build_pin_model(path: str, floating_base: bool = False, mimic: bool | None = None):
    """Pinocchio model of ``path``.

    ``mimic=None`` (default): ``mimic=True`` when the URDF has mimic joints, falling back to the
    extended model (``mimic=False``) when Pinocchio rejects the mimic model of a URDF whose mimic
    relations are valid (it rejects a mimic joint met before its primary).  Raises whatever
    Pinocchio raises when it cannot load the file (or when a mimic primary is missing).
    """
    def build(m):
        if floating_base:
            return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), m)
        return pin.buildModelFromUrdf(path, m)

    if mimic is None:
        if urdf_has_mimic(path):
            try:
                return build(True)
            except Exception:
                if urdf_mimic_problems(path):
                    raise
                return build(False)
        return build(False)
    return build(bool(mimic))


def pin_is_mimic_model(pm) -> bool:
    return any("Mimic" in pm.joints[i].shortname() for i in range(1, pm.njoints))


def pin_total_mass(pm) -> float:
    return float(sum(pm.inertias[i].mass for i in range(pm.njoints)))


def symmetrize_upper(M):
    """Pinocchio's CRBA fills (at least) the upper triangle."""
    return np.triu(M) + np.triu(M, 1).T


# ----------------------------------------------------------------------------- coordinate map
class PinMap:
    """Map between our (model) coordinates and a Pinocchio model's, by joint name."""

    def __init__(self, our, pm, urdf_path: str | None = None):
        self.our, self.pm = our, pm
        names = list(our.joint_names)
        ours = {n: (int(our.joint_q_index[k]), int(our.joint_v_index[k]), int(our.joint_nq[k]), int(our.joint_nv[k]))
                for k, n in enumerate(names)}
        self.urdf_joints = urdf_joints(urdf_path) if urdf_path else {}
        self.entries = []  # (kind, our_iq, our_iv, our_nq, our_nv, pin_iq, pin_iv, pin_nq, pin_nv, extra)
        seen = set()
        pending_mimic = []
        for i in range(1, pm.njoints):
            name, j = pm.names[i], pm.joints[i]
            sn = j.shortname()
            if "Mimic" in sn:
                continue  # Pinocchio's own mimic joint: no coordinate of its own
            piq, piv, pnq, pnv = j.idx_q, j.idx_v, j.nq, j.nv
            if name in ours:
                oiq, oiv, onq, onv = ours[name]
                seen.add(name)
                if "FreeFlyer" in sn:
                    kind = "free"
                elif "RevoluteUnbounded" in sn or "RUB" in sn:
                    kind = "continuous"
                elif "Planar" in sn:
                    kind = "planar"
                elif "Spherical" in sn:
                    kind = "ball"
                else:
                    kind = "copy"
                expect = {"free": (7, 6, 7, 6), "continuous": (1, 1, 2, 1), "planar": (3, 3, 4, 3),
                          "ball": (4, 3, 4, 3), "copy": (1, 1, 1, 1)}[kind]
                if (onq, onv, pnq, pnv) != expect:
                    raise AssertionError(
                        "joint %r: ours nq/nv %d/%d, Pinocchio %s nq/nv %d/%d" % (name, onq, onv, sn, pnq, pnv))
                self.entries.append((kind, oiq, oiv, onq, onv, piq, piv, pnq, pnv, None))
            else:
                info = self.urdf_joints.get(name)
                if info is None or info["mimic"] is None:
                    raise AssertionError("Pinocchio joint %r (%s) has no counterpart in our model" % (name, sn))
                pending_mimic.append((name, sn, piq, piv, pnq, pnv, info["mimic"]))
        missing = set(names) - seen
        if missing:
            raise AssertionError("our joints %s have no counterpart in the Pinocchio model" % sorted(missing))
        for name, sn, piq, piv, pnq, pnv, (primary, mult, off) in pending_mimic:
            # resolve chains of mimic joints down to an independent joint
            depth = 0
            while primary not in ours:
                info = self.urdf_joints.get(primary)
                if info is None or info["mimic"] is None or depth > 50:
                    raise AssertionError("mimic joint %r: primary %r is not one of our joints" % (name, primary))
                p2, m2, o2 = info["mimic"]
                primary, mult, off = p2, mult * m2, mult * o2 + off
                depth += 1
            oiq, oiv, onq, onv = ours[primary]
            if onq != 1 or onv != 1 or pnv != 1 or pnq not in (1, 2):
                raise AssertionError("mimic joint %r of %r: unsupported sizes" % (name, primary))
            self.entries.append(("mimic", oiq, oiv, 1, 1, piq, piv, pnq, pnv, (mult, off)))
        self.has_planar = any(e[0] == "planar" for e in self.entries)
        self.has_mimic_rows = any(e[0] == "mimic" for e in self.entries)
        self._T0 = None if self.has_planar else self._build_T(None)

    # -- q
    def q_to_pin(self, q):
        q = np.asarray(q, dtype=float)
        qp = np.array(pin.neutral(self.pm), dtype=float)
        for kind, oiq, oiv, onq, onv, piq, piv, pnq, pnv, extra in self.entries:
            if kind in ("free", "ball", "copy"):
                qp[piq:piq + pnq] = q[oiq:oiq + onq]
            elif kind == "continuous":
                qp[piq:piq + 2] = np.cos(q[oiq]), np.sin(q[oiq])
            elif kind == "planar":
                x, y, th = q[oiq:oiq + 3]
                qp[piq:piq + 4] = x, y, np.cos(th), np.sin(th)
            elif kind == "mimic":
                mult, off = extra
                val = mult * q[oiq] + off
                if pnq == 2:
                    qp[piq:piq + 2] = np.cos(val), np.sin(val)
                else:
                    qp[piq] = val
        return qp

    def q_from_pin(self, qp):
        qp = np.asarray(qp, dtype=float)
        q = np.zeros(self.our.nq)
        for kind, oiq, oiv, onq, onv, piq, piv, pnq, pnv, extra in self.entries:
            if kind in ("free", "ball", "copy"):
                q[oiq:oiq + onq] = qp[piq:piq + pnq]
            elif kind == "continuous":
                q[oiq] = np.arctan2(qp[piq + 1], qp[piq])
            elif kind == "planar":
                q[oiq:oiq + 3] = qp[piq], qp[piq + 1], np.arctan2(qp[piq + 3], qp[piq + 2])
        return q

    # -- v / a / tau / matrices
    def _build_T(self, q):
        T = np.zeros((self.pm.nv, self.our.nv))
        for kind, oiq, oiv, onq, onv, piq, piv, pnq, pnv, extra in self.entries:
            if kind == "mimic":
                T[piv, oiv] = extra[0]
            elif kind == "planar":
                th = q[oiq + 2]
                c, s = np.cos(th), np.sin(th)
                T[piv:piv + 2, oiv:oiv + 2] = [[c, s], [-s, c]]  # R(th)^T
                T[piv + 2, oiv + 2] = 1.0
            else:
                T[piv:piv + pnv, oiv:oiv + onv] = np.eye(onv)
        return T

    def T(self, q=None):
        """v_pin = T(q) v."""
        if self._T0 is not None:
            return self._T0
        if q is None:
            raise ValueError("this model has planar joints: T depends on q")
        return self._build_T(np.asarray(q, dtype=float))

    def Tdot(self, q, v):
        Td = np.zeros((self.pm.nv, self.our.nv))
        if not self.has_planar:
            return Td
        for kind, oiq, oiv, onq, onv, piq, piv, pnq, pnv, extra in self.entries:
            if kind == "planar":
                th, thd = q[oiq + 2], v[oiv + 2]
                c, s = np.cos(th), np.sin(th)
                Td[piv:piv + 2, oiv:oiv + 2] = thd * np.array([[-s, c], [-c, -s]])
        return Td

    def v_to_pin(self, v, q=None):
        return self.T(q) @ np.asarray(v, dtype=float)

    def v_from_pin(self, vp, q=None):
        T = self.T(q)
        return np.linalg.lstsq(T, np.asarray(vp, dtype=float), rcond=None)[0]

    def a_to_pin(self, a, q=None, v=None):
        ap = self.T(q) @ np.asarray(a, dtype=float)
        if self.has_planar:
            ap = ap + self.Tdot(q, v) @ v
        return ap

    def tau_from_pin(self, taup, q=None):
        """Generalized forces: tau = T^T tau_pin."""
        return self.T(q).T @ np.asarray(taup, dtype=float)

    def mat_from_pin(self, Mp, q=None):
        """Congruence for M (and any symmetric form): T^T M_pin T (a permutation by name)."""
        T = self.T(q)
        return T.T @ np.asarray(Mp, dtype=float) @ T

    def coriolis_from_pin(self, Cp, q=None, v=None, Mp=None):
        T = self.T(q)
        C = T.T @ np.asarray(Cp, dtype=float) @ T
        if self.has_planar:
            C = C + T.T @ Mp @ self.Tdot(q, v)
        return C

    def jac_from_pin(self, Jp, q=None):
        return np.asarray(Jp, dtype=float) @ self.T(q)


_MAPS: dict = {}


def _get_map(our, pm, urdf_path=None) -> PinMap:
    key = (id(our), id(pm))
    m = _MAPS.get(key)
    if m is None or m.our is not our or m.pm is not pm:
        m = PinMap(our, pm, urdf_path)
        _MAPS[key] = m
    return m


def q_to_pin(our, pm, q, urdf_path=None):
    return _get_map(our, pm, urdf_path).q_to_pin(q)


def v_to_pin(our, pm, v, q=None, urdf_path=None):
    return _get_map(our, pm, urdf_path).v_to_pin(v, q)


def v_from_pin(our, pm, vp, q=None, urdf_path=None):
    return _get_map(our, pm, urdf_path).v_from_pin(vp, q)


def mat_from_pin(our, pm, Mp, q=None, urdf_path=None):
    return _get_map(our, pm, urdf_path).mat_from_pin(Mp, q)


# ----------------------------------------------------------------------------- the oracle
class Oracle:
    """Pinocchio's answer to every public-API quantity, in our coordinates."""

    def __init__(self, our, urdf_path: str, floating_base: bool, mimic: bool | None = None):
        self.our = our
        self.path = urdf_path
        self.floating_base = floating_base
        self._ext = None
        self.pm = build_pin_model(urdf_path, floating_base, mimic)
        self.pm.gravity = pin.Motion(np.asarray(our.gravity, dtype=float), np.zeros(3))
        self.pd = self.pm.createData()
        self.map = PinMap(our, self.pm, urdf_path)
        self.pin_mimic = pin_is_mimic_model(self.pm)

    def extended(self) -> "Oracle":
        """The same oracle on Pinocchio's extended model (mimic=False, mimic rows in T)."""
        if getattr(self, "_ext", None) is None:
            self._ext = Oracle(self.our, self.path, self.floating_base, mimic=False)
        self._ext.sync_gravity()
        return self._ext

    def sync_gravity(self):
        self.pm.gravity = pin.Motion(np.asarray(self.our.gravity, dtype=float), np.zeros(3))

    # -- helpers
    def _qva(self, q, v=None, a=None):
        qp = self.map.q_to_pin(q)
        vp = None if v is None else self.map.v_to_pin(v, q)
        ap = None if a is None else self.map.a_to_pin(a, q, v)
        return qp, vp, ap

    def fext_pin(self, f_ext: dict):
        """{link: (force, torque) in the link frame} -> pin.StdVec_Force per joint, joint frame."""
        pm = self.pm
        fext = pin.StdVec_Force()
        for _ in range(pm.njoints):
            fext.append(pin.Force.Zero())
        for link, w in f_ext.items():
            w = np.asarray(w, dtype=float)
            fid = pm.getFrameId(link, pin.BODY)
            if fid >= len(pm.frames):
                raise KeyError(link)
            fr = pm.frames[fid]
            fext[fr.parentJoint] = fext[fr.parentJoint] + fr.placement.act(pin.Force(w[:3], w[3:]))
        return fext

    # -- dynamics
    def rnea(self, q, v, a, f_ext: dict | None = None):
        qp, vp, ap = self._qva(q, v, a)
        if f_ext:
            tp = pin.rnea(self.pm, self.pd, qp, vp, ap, self.fext_pin(f_ext))
        else:
            tp = pin.rnea(self.pm, self.pd, qp, vp, ap)
        return self.map.tau_from_pin(tp, q)

    def crba(self, q):
        qp = self.map.q_to_pin(q)
        Mp = symmetrize_upper(np.array(pin.crba(self.pm, self.pd, qp)))
        return self.map.mat_from_pin(Mp, q)

    def _crba_pin(self, qp):
        return symmetrize_upper(np.array(pin.crba(self.pm, self.pd, qp)))

    def gravity(self, q):
        qp = self.map.q_to_pin(q)
        return self.map.tau_from_pin(pin.computeGeneralizedGravity(self.pm, self.pd, qp), q)

    def nle(self, q, v):
        """C(q, v) v + g(q) in our coordinates (includes the planar Tdot term)."""
        return self.rnea(q, v, np.zeros(self.our.nv))

    def coriolis(self, q, v):
        if self.pin_mimic:
            # Pinocchio 4.1's computeCoriolisMatrix does not raise on mimic joints but gets them
            # wrong (C v != nle - g): use the extended model, C = T^T C_ext T.
            return self.extended().coriolis(q, v)
        qp, vp, _ = self._qva(q, v)
        Cp = np.array(pin.computeCoriolisMatrix(self.pm, self.pd, qp, vp))
        Mp = self._crba_pin(qp) if self.map.has_planar else None
        return self.map.coriolis_from_pin(Cp, q, v, Mp)

    def aba(self, q, v, tau):
        if not self.pin_mimic and not self.map.has_mimic_rows and not self.map.has_planar:
            qp, vp, _ = self._qva(q, v)
            ap = pin.aba(self.pm, self.pd, qp, vp, self._tau_to_pin(tau))
            return self.map.T().T @ np.asarray(ap)  # T is a permutation here
        # Pinocchio's ABA refuses mimic joints: a = M^-1 (tau - h) from its CRBA and RNEA
        M = self.crba(q)
        h = self.nle(q, v)
        return np.linalg.solve(M, np.asarray(tau, dtype=float) - h)

    def _tau_to_pin(self, tau):
        # only used when T is a permutation: tau_pin = T tau
        return self.map.T() @ np.asarray(tau, dtype=float)

    def kinetic(self, q, v):
        if not self.pin_mimic:
            qp, vp, _ = self._qva(q, v)
            return float(pin.computeKineticEnergy(self.pm, self.pd, qp, vp))
        v = np.asarray(v, dtype=float)
        return float(0.5 * v @ self.crba(q) @ v)

    def potential(self, q):
        """Pinocchio's potential energy (its reference: the world origin)."""
        qp = self.map.q_to_pin(q)
        if not self.pin_mimic:
            return float(pin.computePotentialEnergy(self.pm, self.pd, qp))
        com = pin.centerOfMass(self.pm, self.pd, qp)
        return float(-self.pd.mass[0] * np.dot(self.pm.gravity.linear, com))

    # -- kinematics
    def frame_poses(self, q, links=None):
        qp = self.map.q_to_pin(q)
        pin.framesForwardKinematics(self.pm, self.pd, qp)
        out = {}
        for link in (links if links is not None else urdf_links(self.path)):
            fid = self.pm.getFrameId(link, pin.BODY)
            out[link] = np.array(self.pd.oMf[fid].homogeneous)
        return out

    def body_jacobian(self, q, link):
        qp = self.map.q_to_pin(q)
        fid = self.pm.getFrameId(link, pin.BODY)
        Jp = np.array(pin.computeFrameJacobian(self.pm, self.pd, qp, fid, pin.LOCAL))
        return self.map.jac_from_pin(Jp, q)


def rel_err(ours, ref) -> float:
    ours = np.asarray(ours, dtype=float)
    ref = np.asarray(ref, dtype=float)
    if ours.shape != ref.shape:
        raise AssertionError("shape mismatch: ours %s, reference %s" % (ours.shape, ref.shape))
    return float(np.linalg.norm(ours - ref) / max(1.0, np.linalg.norm(ref)))
