"""One declarative parameter table per node (``SCHEMA`` of each module: its own parameters
and the shared groups of ``common``); declaration, validation, ``ros2 param describe`` and
docs/ros.md's parameter tables come from them."""
