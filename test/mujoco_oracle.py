"""MuJoCo models of URDF files, as an oracle for simulations (a test dependency, like
Pinocchio): the benchmarks and test_passive_mujoco.py build them the same way."""
import os
import tempfile
import xml.etree.ElementTree as ET

import mujoco


def mujoco_model(path, floating, dt=1e-3, limits=True):
    """MuJoCo model of the URDF: no geometry, no contacts, RK4 at ``dt``; a free joint if
    floating. The URDF's <dynamics damping friction> become dof_damping / dof_frictionloss;
    ``limits=False`` also disables the joint-limit constraints (ours has none)."""
    root = ET.parse(path).getroot()
    for link in root.findall("link"):
        for tag in ("visual", "collision"):
            for e in link.findall(tag):
                link.remove(e)
    for e in root.findall("mujoco"):
        root.remove(e)
    mj = ET.SubElement(root, "mujoco")
    ET.SubElement(mj, "compiler", discardvisual="true", fusestatic="false",
                  boundmass="1e-6", boundinertia="1e-9", inertiafromgeom="false")
    m = mujoco.MjModel.from_xml_string(ET.tostring(root, encoding="unicode"))
    if floating:
        with tempfile.TemporaryDirectory() as d:
            fn = os.path.join(d, "m.xml")
            mujoco.mj_saveLastXML(fn, m)
            with open(fn) as f:
                xml = f.read()
            i = xml.index("<body", xml.index("<worldbody"))
            j = xml.index(">", i) + 1
            m = mujoco.MjModel.from_xml_string(xml[:j] + "<freejoint/>" + xml[j:])
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.timestep = dt
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    if not limits:
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
    return m
