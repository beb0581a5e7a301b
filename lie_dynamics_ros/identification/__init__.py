"""Identification of a robot's dynamic parameters from data (docs/identification.md)."""
