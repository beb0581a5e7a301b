"""One declarative parameter table per node; docs/ros.md's parameter tables come from them."""
