"""lie_dynamics_ros: rigid-body dynamics on Lie groups (Kim 2012; Park, Bobrow & Ploen 1995).

The core imports without ROS. Conventions: docs/conventions.md; API: docs/api.md.
"""
from . import compile_notice  # noqa: F401  (one log line when a kernel first compiles)
from .errors import URDFError, SDFError, InputError, SimulationDiverged, GeodesicError
from .model.loading import load_urdf          # the tree (model.urdf) plus <loop_joint> / loops=
from .model.sdf import load_sdf
from .model.builder import ModelBuilder
from .model.model import Model
from .model.data import Data
from .model.joint_types import (Fixed, Revolute, Prismatic, Free, Spherical, Planar, Universal,
                                General)
from .model.loops import LoopClosure, load_loops_yaml
from .algorithms.dynamics import (inverse_dynamics, forward_dynamics, hybrid_dynamics, mass_matrix,
                                  gravity_torques, nonlinear_effects, coriolis_matrix)
from .algorithms.kinematics import (forward_kinematics, body_jacobian, kinetic_energy,
                                    potential_energy)
from .algorithms.frames import (Kinematics, kinematics, frame_pose, frame_placements,
                                frame_jacobian, frame_velocity, frame_acceleration,
                                frame_jacobian_time_variation)
from .algorithms.joint_friction import friction_torques
from .algorithms.joint_order import JointOrder
from .algorithms.configuration import (integrate, difference, neutral_configuration,
                                       random_configuration)
from .identification.identify import identify, identify_chunks, IdentificationResult
from .algorithms.regressor import (regressor, inertial_parameters, mass_matrix_time_derivative,
                                   slotine_li_torques, coriolis_matrix_ploen, parameter_names)
# closed kinematic loops (Kim 2012, section 3; docs/loops.md)
from .algorithms.constrained import (constraint_residual, constraint_jacobian, constraint_bias,
                                     assemble, constrained_forward_dynamics,
                                     constrained_inverse_dynamics, constrained_hybrid_dynamics,
                                     project, complete_motion)
from .integrators.constrained import simulate_constrained, make_constrained_stepper
# rigid contacts on any model, floating base included (docs/contacts.md)
from .model.contacts import RigidContact
from .algorithms.contacts import (contact_dynamics, impulse_dynamics, contact_jacobian,
                                  place_contacts)
# analytic derivatives (Kim 2012, section 4) and configuration-space geometry (Park et al. 1995)
from .algorithms.derivatives import (inverse_dynamics_derivatives, forward_dynamics_derivatives,
                                     hybrid_dynamics_derivatives,
                                     inverse_dynamics_parameter_derivatives)
from .algorithms.geometry import mass_matrix_configuration_derivatives, christoffel_symbols
from .algorithms.curvature import (mass_matrix_second_derivatives, curvature_tensor,
                                   sectional_curvature, scalar_curvature)
from .algorithms.geodesics import geodesic, Geodesic, path_action
from .integrators.simulate import simulate, rollout
from .integrators.simulator import Simulator
from .estimation.momentum_observer import MomentumObserver
from .identification.excitation import excitation_trajectory
from . import control
from . import lie
from . import safety
# setup helpers: inertias of solids, SRDF reference configurations, locked joints
from .lie.solid_inertia import sphere_inertia, cylinder_inertia, box_inertia
from .model.srdf import reference_configurations, reference_configuration
from .algorithms.reduced_model import reduced_model
# centroidal quantities (Orin, Goswami & Lee 2013) and M^-1 (Carpentier 2018)
from .algorithms.centroidal import (center_of_mass, center_of_mass_jacobian, centroidal_momentum,
                                    centroidal_momentum_matrix,
                                    centroidal_momentum_matrix_time_variation,
                                    mass_matrix_inverse)

__version__ = "0.1.0"

__all__ = [
    "URDFError", "SDFError", "InputError", "SimulationDiverged", "load_urdf", "load_sdf", "ModelBuilder", "Model", "Data",
    "JointOrder", "Fixed", "Revolute", "Prismatic", "Free", "Spherical", "Planar", "Universal",
    "General", "inverse_dynamics", "forward_dynamics", "hybrid_dynamics", "mass_matrix",
    "gravity_torques", "nonlinear_effects", "coriolis_matrix", "forward_kinematics", "frame_pose",
    "Kinematics", "kinematics", "frame_placements", "frame_jacobian", "frame_velocity",
    "frame_acceleration", "frame_jacobian_time_variation",
    "body_jacobian", "kinetic_energy", "potential_energy", "friction_torques", "integrate", "difference",
    "neutral_configuration", "random_configuration", "simulate", "rollout", "Simulator",
    "SimulationDiverged", "MomentumObserver", "lie", "regressor", "inertial_parameters",
    "mass_matrix_time_derivative", "slotine_li_torques", "coriolis_matrix_ploen", "parameter_names",
    "control", "safety", "identify", "identify_chunks", "IdentificationResult",
    "LoopClosure", "load_loops_yaml", "constraint_residual",
    "constraint_jacobian", "constraint_bias", "assemble", "constrained_forward_dynamics",
    "constrained_inverse_dynamics", "constrained_hybrid_dynamics", "project",
    "simulate_constrained", "make_constrained_stepper", "complete_motion",
    "RigidContact", "contact_dynamics", "impulse_dynamics", "contact_jacobian", "place_contacts",
    "inverse_dynamics_derivatives", "forward_dynamics_derivatives", "hybrid_dynamics_derivatives",
    "inverse_dynamics_parameter_derivatives", "mass_matrix_configuration_derivatives",
    "christoffel_symbols", "excitation_trajectory", "GeodesicError",
    "mass_matrix_second_derivatives", "curvature_tensor", "sectional_curvature",
    "scalar_curvature", "geodesic", "Geodesic", "path_action",
    "sphere_inertia", "cylinder_inertia", "box_inertia", "reference_configurations",
    "reference_configuration", "reduced_model",
    "center_of_mass", "center_of_mass_jacobian", "centroidal_momentum",
    "centroidal_momentum_matrix", "centroidal_momentum_matrix_time_variation",
    "mass_matrix_inverse",
]
