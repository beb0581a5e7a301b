"""Checks every node makes of a model before it uses it (JointState topics name 1-DOF joints;
parameters name joints of the model) and the ``loops_file`` merge. Each returns a reason
string or None, so a node can refuse a model without raising."""
from ..model.loops import load_loops_yaml


def joint_state_reason(model):
    """None if every joint of ``model`` has one coordinate (what sensor_msgs/JointState can
    carry), else the reason naming the multi-DOF joints."""
    multi = [n for n, nq, nv in zip(model.joint_names, model.joint_nq, model.joint_nv)
             if nq != 1 or nv != 1]
    if multi:
        return "JointState needs 1-DOF joints; the model has multi-DOF joints %s" % multi
    return None


def unknown_joints_reason(model, what, names):
    """None if every name in ``names`` is a joint of ``model``, else a reason naming the
    parameter ``what`` and the joints that are not in the model."""
    known = set(model.joint_names)
    unknown = [j for j in names if j not in known]
    if unknown:
        return "parameter %s names %s, not in the model" % (what, unknown)
    return None


def with_loops_file(model, path):
    """``model`` with the loop closures of the YAML ``path`` added to its own ("" adds none).
    Raises ValueError "loops_file '<path>': <reason>"."""
    if not path:
        return model
    try:
        return model.with_loops(tuple(model.loops) + tuple(load_loops_yaml(path)))
    except (OSError, ValueError) as e:
        raise ValueError("loops_file %r: %s" % (path, e)) from None
