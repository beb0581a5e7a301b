"""Joint kinds understood by the compiled kernels.

A joint of kind ``k`` moves its child body by ``T(q) = T_origin * T_k(q)`` and has the motion
subspace ``S(q)`` (6 x nv, the kernels' angular-first order, in the child frame) with
``T^-1 dT = S dq``.
"""
REVOLUTE = 1      # axis a:   T = (exp([a] q), 0),           S = (a, 0)
PRISMATIC = 2     # axis a:   T = (1, a q),                   S = (0, a)
FREE = 3          # q = (p, quat xyzw), v = (v_lin, w) in the body frame; S permutes v
SPHERICAL = 4     # q = quat xyzw, v = body angular velocity; S = (1, 0)
PLANAR = 5        # normal n, in-plane axes e1, e2; q = (x, y, theta), v = dq/dt
UNIVERSAL = 6     # T = (exp([a1] q1) exp([a2] q2), 0)
GENERAL = 7       # user callables T(q), S(q), Sdot(q, v); evaluated in Python

NQ = {REVOLUTE: 1, PRISMATIC: 1, FREE: 7, SPHERICAL: 4, PLANAR: 3, UNIVERSAL: 2}
NV = {REVOLUTE: 1, PRISMATIC: 1, FREE: 6, SPHERICAL: 3, PLANAR: 3, UNIVERSAL: 2}
NAMES = {REVOLUTE: "revolute", PRISMATIC: "prismatic", FREE: "free", SPHERICAL: "spherical",
         PLANAR: "planar", UNIVERSAL: "universal", GENERAL: "general"}
