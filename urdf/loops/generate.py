"""Writes the closed-loop mechanisms of this folder (URDF with <loop_joint>, SDFormat, YAML).

    python urdf/loops/generate.py        # rewrites the files next to this script

Every link frame has the world orientation; its origin is the joint that moves it. Links are
uniform rods (mass m, length l between two points, inertia m l^2 / 12 across the rod plus
1e-6 kg m^2 isotropic so that every tensor is positive definite). Gravity is the model default.
The reference pose (all joints at 0) is assembled: the closures hold there.

Visuals (``link_visuals``, used for the hand-written URDFs of ../ too): a cylinder from the link
frame to its farthest child joint (or, with no child away from the origin, to twice the centre
of mass, as for a uniform rod), its radius that of a solid cylinder with the link's inertia
about that axis (I = m r^2 / 2; a tenth of its length for a massless link), kept within
[1 cm, a quarter of its length]; and a ball of water density at the centre of mass when the
mass does not sit along the rod. A link with neither gets a 1 cm ball as a marker.
"""
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EPS_I = 1e-6


RHO = 1000.0       # kg/m^3 of the balls drawn at off-rod centres of mass
R_MIN = 0.01       # m, thinnest visual


def link_visuals(children, mass, com, inertia):
    """[(kind, size, xyz, rpy)] of one link: kind "cylinder" (size = (radius, length), along
    z of the visual frame) or "sphere" (size = (radius,)); ``children`` are the child joints'
    origins in the link frame, ``com`` and ``inertia`` (3x3 about the COM) as in <inertial>."""
    com, inertia = np.asarray(com, float), np.asarray(inertia, float)
    ends = [np.asarray(c, float) for c in children if np.linalg.norm(c) > 1e-9]
    end = max(ends, key=np.linalg.norm) if ends else (2 * com if mass else np.zeros(3))
    length = float(np.linalg.norm(end))
    out = []
    if length > 1e-9:
        d = end / length
        r = math.sqrt(2 * float(d @ inertia @ d) / mass) if mass else 0.1 * length
        r = max(R_MIN, min(r, 0.25 * length))
        # rpy with Rz(yaw) Ry(pitch) e_z = d
        rpy = (0.0, math.acos(max(-1.0, min(1.0, d[2]))), math.atan2(d[1], d[0]))
        out.append(("cylinder", (r, length), end / 2, rpy))
    if mass and (length <= 1e-9 or np.linalg.norm(com - end / 2) > 0.25 * length):
        r = max(R_MIN, (3 * mass / (4 * math.pi * RHO)) ** (1 / 3))
        out.append(("sphere", (r,), com, (0.0, 0.0, 0.0)))
    if not out:                         # a massless frame: a marker
        out.append(("sphere", (R_MIN,), np.zeros(3), (0.0, 0.0, 0.0)))
    return out


def urdf_visual_lines(visuals, indent="    "):
    """<visual> elements of ``link_visuals``."""
    out = []
    for kind, size, xyz, rpy in visuals:
        geom = (f'<cylinder radius="{size[0]:.6g}" length="{size[1]:.6g}"/>' if kind == "cylinder"
                else f'<sphere radius="{size[0]:.6g}"/>')
        out += [f"{indent}<visual>",
                f'{indent}  <origin xyz="{_short(xyz)}" rpy="{_short(rpy)}"/>',
                f"{indent}  <geometry>{geom}</geometry>", f"{indent}</visual>"]
    return out


def sdf_visual_lines(name, visuals, indent="      "):
    out = []
    for k, (kind, size, xyz, rpy) in enumerate(visuals):
        geom = (f"<cylinder><radius>{size[0]:.6g}</radius><length>{size[1]:.6g}</length>"
                "</cylinder>" if kind == "cylinder" else f"<sphere><radius>{size[0]:.6g}</radius>"
                "</sphere>")
        out += [f'{indent}<visual name="{name}_visual_{k}">',
                f"{indent}  <pose>{_short(xyz)} {_short(rpy)}</pose>",
                f"{indent}  <geometry>{geom}</geometry>", f"{indent}</visual>"]
    return out


class Mech:
    def __init__(self, name, doc):
        self.name, self.doc = name, doc
        self.links, self.joints, self.closures = {}, [], []

    def link(self, name, pos, mass=0.0, a=None, b=None, inertia=None):
        """A link whose frame sits at ``pos`` (world, reference pose); a rod from a to b."""
        pos = np.asarray(pos, float)
        if a is None:
            com, I = np.zeros(3), (EPS_I * np.eye(3) if mass else np.zeros((3, 3)))
            if inertia is not None:
                I = np.asarray(inertia, float)
        else:
            a, b = np.asarray(a, float), np.asarray(b, float)
            com = (a + b) / 2 - pos
            d = b - a
            ln = np.linalg.norm(d)
            d = d / ln
            I = mass * ln * ln / 12 * (np.eye(3) - np.outer(d, d)) + EPS_I * np.eye(3)
        self.links[name] = (pos, mass, com, I)

    def joint(self, name, kind, parent, child, axis=(0, 1, 0)):
        self.joints.append((name, kind, parent, child, np.asarray(axis, float)))

    def closure(self, name, kind, link_a, link_b, point, axis=(0, 1, 0)):
        self.closures.append((name, kind, link_a, link_b, np.asarray(point, float),
                              np.asarray(axis, float)))

    def visuals(self, name):
        pos, m, com, I = self.links[name]
        children = [self._rel(c, p) for _, _, p, c, _ in self.joints if p == name]
        return link_visuals(children, m, com, I)

    # -- writers ------------------------------------------------------------------------
    def _rel(self, child, parent):
        return self.links[child][0] - self.links[parent][0]

    def urdf(self, with_loops=True):
        f = _fmt
        out = ['<?xml version="1.0"?>', "<!--", f"  {self.name}.urdf: {self.doc}",
               "  Written by generate.py; the <loop_joint> elements are the lie_dynamics_ros",
               "  extension for closed loops (docs/loops.md); other URDF readers ignore them.",
               "-->", f'<robot name="{self.name}">']
        for n, (pos, m, com, I) in self.links.items():
            out.append(f'  <link name="{n}">')
            if m != 0.0:
                out += ["    <inertial>", f'      <origin xyz="{f(com)}" rpy="0 0 0"/>',
                        f'      <mass value="{m:.17g}"/>',
                        f'      <inertia ixx="{I[0,0]:.17g}" ixy="{I[0,1]:.17g}" '
                        f'ixz="{I[0,2]:.17g}" iyy="{I[1,1]:.17g}" iyz="{I[1,2]:.17g}" '
                        f'izz="{I[2,2]:.17g}"/>', "    </inertial>"]
            out += urdf_visual_lines(self.visuals(n)) + ["  </link>"]
        for n, kind, p, c, ax in self.joints:
            out += [f'  <joint name="{n}" type="{kind}">', f'    <parent link="{p}"/>',
                    f'    <child link="{c}"/>', f'    <origin xyz="{f(self._rel(c, p))}" rpy="0 0 0"/>']
            if kind != "fixed":
                out.append(f'    <axis xyz="{f(ax)}"/>')
            if kind in ("revolute", "prismatic"):
                out.append('    <limit lower="-6.3" upper="6.3" effort="100" velocity="50"/>')
            out.append("  </joint>")
        if with_loops:
            for n, kind, la, lb, pt, ax in self.closures:
                out += [f'  <loop_joint name="{n}" type="{kind}">',
                        f'    <parent link="{la}"/>',
                        f'    <parent_origin xyz="{f(pt - self.links[la][0])}" rpy="0 0 0"/>',
                        f'    <child link="{lb}"/>',
                        f'    <child_origin xyz="{f(pt - self.links[lb][0])}" rpy="0 0 0"/>',
                        f'    <axis xyz="{f(ax)}"/>', "  </loop_joint>"]
        out.append("</robot>")
        return "\n".join(out) + "\n"

    def yaml(self):
        f = _fmt
        out = [f"# {self.name}: closures of {self.name}_tree.urdf (docs/loops.md)", "closures:"]
        for n, kind, la, lb, pt, ax in self.closures:
            out += [f"  - name: {n}", f"    kind: {kind}", f"    link_a: {la}", f"    link_b: {lb}",
                    f"    xyz_a: [{f(pt - self.links[la][0], ', ')}]",
                    f"    xyz_b: [{f(pt - self.links[lb][0], ', ')}]",
                    f"    axis: [{f(ax, ', ')}]"]
        return "\n".join(out) + "\n"

    def sdf(self):
        f = _fmt
        out = ['<?xml version="1.0"?>', "<!--", f"  {self.name}.sdf: {self.doc}",
               "  Written by generate.py: the loops are ordinary joints here.", "-->",
               '<sdf version="1.9">', f'  <model name="{self.name}">']
        root = next(iter(self.links))
        for n, (pos, m, com, I) in self.links.items():
            out += [f'    <link name="{n}">', f"      <pose>{f(pos)} 0 0 0</pose>"]
            if m:
                out += ["      <inertial>", f"        <pose>{f(com)} 0 0 0</pose>",
                        f"        <mass>{m:.17g}</mass>", "        <inertia>"]
                for k, (i, j) in zip(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"),
                                     ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))):
                    out.append(f"          <{k}>{I[i, j]:.17g}</{k}>")
                out += ["        </inertia>", "      </inertial>"]
            out += sdf_visual_lines(n, self.visuals(n)) + ["    </link>"]
        out += ['    <joint name="world_weld" type="fixed">', "      <parent>world</parent>",
                f"      <child>{root}</child>", "    </joint>"]
        sdf_kind = {"weld": "fixed", "spherical": "ball"}
        items = [(n, k, p, c, ax, None) for n, k, p, c, ax in self.joints] + \
                [(n, sdf_kind.get(k, k), la, lb, ax, pt) for n, k, la, lb, pt, ax in self.closures]
        for n, kind, p, c, ax, pt in items:
            out += [f'    <joint name="{n}" type="{kind}">', f"      <parent>{p}</parent>",
                    f"      <child>{c}</child>"]
            if pt is not None:
                out.append(f"      <pose>{f(pt - self.links[c][0])} 0 0 0</pose>")
            if kind in ("revolute", "prismatic", "continuous"):
                out += ["      <axis>", f"        <xyz>{f(ax)}</xyz>"]
                if kind != "continuous":
                    out += ["        <limit><lower>-6.3</lower><upper>6.3</upper>"
                            "<effort>100</effort><velocity>50</velocity></limit>"]
                out.append("      </axis>")
            out.append("    </joint>")
        out += ["  </model>", "</sdf>"]
        return "\n".join(out) + "\n"


def _fmt(v, sep=" "):
    return sep.join(f"{x:.17g}" if abs(x) > 1e-15 else "0" for x in v)


def _short(v):
    return " ".join(f"{x:.6g}" if abs(x) > 1e-12 else "0" for x in v)


def rod_chain(m, name, pts, masses):
    """Links name_i from pts[i] to pts[i+1]."""
    for i, mass in enumerate(masses):
        m.link(f"{name}{i + 1}", pts[i], mass, pts[i], pts[i + 1])


def four_bar():
    m = Mech("four_bar", "planar crank-rocker four-bar in the x-z plane, joints about +y; one "
             "revolute closure (5 rows of rank 2 in 3D), 1 degree of freedom.")
    O2, A, B, O4 = (0, 0, 0), (0.1, 0, 0.12), (0.45, 0, 0.3), (0.4, 0, 0)
    m.link("ground", (0, 0, 0))
    m.link("crank", O2, 0.5, O2, A)
    m.link("coupler", A, 1.0, A, B)
    m.link("rocker", O4, 0.8, O4, B)
    m.joint("crank_joint", "revolute", "ground", "crank")
    m.joint("coupler_joint", "revolute", "crank", "coupler")
    m.joint("rocker_joint", "revolute", "ground", "rocker")
    m.closure("coupler_rocker", "revolute", "coupler", "rocker", B)
    return m


def slider_crank():
    m = Mech("slider_crank", "planar slider-crank (x-z plane): crank and connecting rod about +y, "
             "slider along +x, one revolute closure at the piston pin.")
    O, A = np.zeros(3), np.array([0.06, 0, 0.08])
    B = np.array([0.06 + math.sqrt(0.3 ** 2 - 0.08 ** 2), 0, 0])
    m.link("ground", (0, 0, 0))
    m.link("crank", O, 0.4, O, A)
    m.link("rod", A, 0.6, A, B)
    m.link("slider", B, 1.2, inertia=2e-4 * np.eye(3))
    m.joint("crank_joint", "revolute", "ground", "crank")
    m.joint("rod_joint", "revolute", "crank", "rod")
    m.joint("slider_joint", "prismatic", "ground", "slider", (1, 0, 0))
    m.closure("piston_pin", "revolute", "rod", "slider", B)
    return m


def five_bar():
    m = Mech("five_bar", "Kim (2012) planar five-bar: five revolute joints about +y in the tree, "
             "the middle link cut in two halves welded back (m = 3 independent constraints, "
             "2 degrees of freedom).")
    P1, P5 = np.array([0, 0, 0.0]), np.array([0.3, 0, 0.0])
    A, D = np.array([-0.05, 0, 0.25]), np.array([0.35, 0, 0.25])
    C = np.array([0.12, 0, 0.42])
    mid = (C + D) / 2
    m.link("ground", (0, 0, 0))
    m.link("link1", P1, 0.5, P1, A)
    m.link("link2", A, 0.5, A, C)
    m.link("link3a", C, 0.25, C, mid)
    m.link("link4", P5, 0.5, P5, D)
    m.link("link3b", D, 0.25, D, mid)
    m.joint("joint1", "revolute", "ground", "link1")
    m.joint("joint2", "revolute", "link1", "link2")
    m.joint("joint3", "revolute", "link2", "link3a")
    m.joint("joint5", "revolute", "ground", "link4")
    m.joint("joint4", "revolute", "link4", "link3b")
    m.closure("link3_weld", "weld", "link3a", "link3b", mid)
    return m


def parallelogram():
    m = Mech("parallelogram", "parallelogram four-bar: two equal cranks hang from pivots 0.3 m "
             "apart, the coupler only translates; equivalent to a single pendulum.")
    L = 0.5
    O1, O2 = np.zeros(3), np.array([0.3, 0, 0])
    A1, A2 = O1 + (0, 0, -L), O2 + (0, 0, -L)
    m.link("ground", (0, 0, 0))
    m.link("crank1", O1, 0.6, O1, A1)
    m.link("coupler", A1, 1.5, A1, A2)
    m.link("crank2", O2, 0.6, O2, A2)
    m.joint("crank1_joint", "revolute", "ground", "crank1")
    m.joint("coupler_joint", "revolute", "crank1", "coupler")
    m.joint("crank2_joint", "revolute", "ground", "crank2")
    m.closure("coupler_crank2", "revolute", "coupler", "crank2", A2)
    return m


def delta():
    m = Mech("delta", "delta robot (Clavel) with each parallelogram forearm replaced by its "
             "kinematic equivalent, a U-U forearm (3-RUU, translational platform): shoulders "
             "shoulder_1..3 actuated, two revolute closures at the platform, 3 degrees of "
             "freedom.")
    R, L, r, l, alpha = 0.2, 0.2, 0.05, 0.5, 0.3
    ez = np.array([0, 0, 1.0])
    h = L * math.sin(alpha) + math.sqrt(l * l - (R + L * math.cos(alpha) - r) ** 2)
    m.link("base", (0, 0, 0))
    small = 1e-5 * np.eye(3)
    W1 = None
    for i in range(3):
        phi = 2 * math.pi * i / 3
        u = np.array([math.cos(phi), math.sin(phi), 0.0])
        s = np.array([-math.sin(phi), math.cos(phi), 0.0])
        S = R * u
        E = S + L * (math.cos(alpha) * u - math.sin(alpha) * ez)
        W = np.array([0, 0, -h]) + r * u
        d = (W - E) / l
        w = np.cross(s, d)
        w /= np.linalg.norm(w)
        k = i + 1
        m.link(f"arm_{k}", S, 0.15, S, E)
        m.link(f"elbow_{k}", E, 0.01, inertia=small)
        m.link(f"forearm_{k}", E, 0.08, E, W)
        m.link(f"wrist_{k}", W, 0.01, inertia=small)
        m.joint(f"shoulder_{k}", "revolute", "base", f"arm_{k}", s)
        m.joint(f"elbow_{k}_a", "revolute", f"arm_{k}", f"elbow_{k}", s)
        m.joint(f"elbow_{k}_b", "revolute", f"elbow_{k}", f"forearm_{k}", w)
        m.joint(f"wrist_{k}_a", "revolute", f"forearm_{k}", f"wrist_{k}", w)
        if k == 1:
            W1 = W
            # the platform's frame sits at wrist 1, its centre of mass at the platform centre
            m.links["platform"] = (W, 0.3, np.array([0, 0, -h]) - W, np.diag([4e-4, 4e-4, 7e-4]))
            m.joint("wrist_1_b", "revolute", "wrist_1", "platform", s)
        else:
            m.closure(f"wrist_{k}_b", "revolute", f"wrist_{k}", "platform", W, s)
    return m


MECHANISMS = (four_bar, slider_crank, five_bar, parallelogram, delta)


def main():
    for make in MECHANISMS:
        mech = make()
        files = {f"{mech.name}.urdf": mech.urdf(), f"{mech.name}.sdf": mech.sdf()}
        if mech.name == "four_bar":
            files["four_bar_tree.urdf"] = mech.urdf(with_loops=False)
            files["four_bar_closures.yaml"] = mech.yaml()
        for fn, text in files.items():
            with open(os.path.join(HERE, fn), "w", encoding="utf-8") as fh:
                fh.write(text)


if __name__ == "__main__":
    main()
