"""Identification of a robot's inertial parameters and joint friction from measured motion
and torques (docs/identification.md)."""
