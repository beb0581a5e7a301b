"""Model description: joints, builder, URDF parser and the immutable Model."""
