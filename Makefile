# lie_dynamics_ros developer/CI entry points.
#
#   make venv    .venv (python3.11) with `pip install -e .[test,plot,record]` and
#                the ROS 2 Jazzy wheels of requirements-ros.txt; redone only when
#                setup.py, setup.cfg or requirements-ros.txt change (.venv/.stamp)
#   make test    pytest on test/
#   make demo    .venv/bin/ldr_adaptive_demo   (simulator + adaptive controller over DDS)
#   make dynamics-demo  .venv/bin/ldr_demo     (model tree and dynamics; DEMO_ARGS=...)
#   make bench   benchmarks: dynamics (BENCH_ARGS=...), derivatives, geometry, simulation, loops,
#                identification per 10^5 samples, the SE(3) algebra, against Pinocchio and MuJoCo
#   make soak    10 min of simulated time, simulator + adaptive controller (make test runs 5 s)
#   make fuzz    a long URDF fuzz (make test runs 10^4 cases)
#   make colcon  builds a throwaway ROS 2 workspace (build/colcon_ws) with colcon
#                from its own venv (build/colcon_venv) and checks the install tree
#   make launch-test  every launch file under real `ros2 launch` (launch_test/): builds the
#                package with colcon into build/launch_ws, warms the numba cache there
#                (ldr_precompile), and checks rates, the held pose, tracking, arguments,
#                namespaces and clean Ctrl-C. The launch system comes from a ROS 2
#                installation when launch_ros is importable, else from
#                LAUNCH_TOOLS=../shared/ros2-launch-tools (installed into .venv)
#   make clean   removes build/, log/, install/, egg-info, __pycache__
#   make distclean  clean + .venv

SHELL := /bin/bash
.DEFAULT_GOAL := test

VENV        ?= .venv
PY          := $(VENV)/bin/python
STAMP       := $(VENV)/.stamp
PIP_MIN     := pip>=25.3

# python3.11, or python3 when that is 3.11.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || \
            { python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null && command -v python3; })

# Keep DDS discovery on loopback (tests and nodes never talk to other hosts).
export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST

COLCON_DIR   := build
COLCON_WS    := $(COLCON_DIR)/colcon_ws
COLCON_VENV  := $(COLCON_DIR)/colcon_venv
COLCON_STAMP := $(COLCON_VENV)/.stamp
COLCON_PKGS  := colcon-common-extensions==0.3.0 ros-jazzy-ament-package==0.16.4 'setuptools<80'
PKG          := lie_dynamics_ros
PKG_INSTALL  := $(COLCON_WS)/install/$(PKG)

PYTEST_ARGS ?=

.PHONY: venv test demo dynamics-demo bench soak fuzz colcon launch-tools launch-test clean distclean

venv: $(STAMP)

$(STAMP): setup.py setup.cfg requirements-ros.txt
	@if ! $(PY) -c 'pass' >/dev/null 2>&1; then \
	  if [ -z "$(PYTHON)" ]; then echo "make venv: python3.11 not found" >&2; exit 1; fi; \
	  echo "creating $(VENV) with $(PYTHON)"; \
	  $(PYTHON) -m venv $(VENV); \
	fi
	@# pip >= 25.3 always builds a PEP 660 editable wheel, so the console
	@# scripts land in $(VENV)/bin; older pip would run the legacy
	@# `setup.py develop`, which obeys setup.cfg's script_dir (lib/lie_dynamics_ros).
	$(PY) -m pip install --quiet --upgrade '$(PIP_MIN)'
	$(PY) -m pip install --quiet -e '.[test,plot,record]' -r requirements-ros.txt
	@for s in ldr_demo inverse_dynamics_node forward_dynamics_node ldr_bringup adaptive_controller_node ldr_adaptive_demo ldr_identify; do \
	  test -x $(VENV)/bin/$$s || { echo "make venv: $(VENV)/bin/$$s missing" >&2; exit 1; }; \
	done
	touch $@

# -p no:launch_testing/-p no:launch_ros: the launch wheels' pytest plugins break pytest >= 8
# if they are ever in .venv (make launch-tools removes them; this keeps make test safe anyway)
test: venv
	$(PY) -m pytest -q -p no:cacheprovider -p no:launch_testing -p no:launch_ros $(PYTEST_ARGS) test

# the main job: simulator + adaptive controller over DDS with an unknown 2 kg payload
demo: venv
	$(VENV)/bin/ldr_adaptive_demo $(DEMO_ARGS)

# the model tree and its dynamics at one configuration
dynamics-demo: venv
	$(VENV)/bin/ldr_demo $(DEMO_ARGS)

bench: venv
	$(PY) benchmarks/bench_dynamics.py $(BENCH_ARGS)
	$(PY) benchmarks/bench_derivatives.py
	$(PY) benchmarks/bench_geometry.py
	$(PY) benchmarks/bench_simulate.py
	$(PY) benchmarks/bench_loops.py
	$(PY) benchmarks/bench_identify.py
	$(PY) benchmarks/bench_se3.py

# 10 minutes of simulated time: simulator + adaptive controller at 1 kHz (~30 min of wall time
# on 2 cores); a 5 s version runs in make test (test_ros_soak.py)
soak: venv
	ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST PYTHONPATH=$(CURDIR) $(PY) test/soak.py --duration 600 --domain-id $${LDR_TEST_DOMAIN_ID:-77}

# a longer URDF fuzz than make test's 10^4 cases (about 2x10^5, ~15 min)
fuzz: venv
	LDR_FUZZ_SCALE=20 LDR_FUZZ_SEED=1 $(PY) -m pytest -q -p no:cacheprovider -p no:launch_testing -p no:launch_ros test/test_urdf_fuzz.py

$(COLCON_STAMP):
	@if [ -z "$(PYTHON)" ]; then echo "make colcon: python3.11 not found" >&2; exit 1; fi
	rm -rf $(COLCON_VENV)
	$(PYTHON) -m venv $(COLCON_VENV)
	$(COLCON_VENV)/bin/python -m pip install --quiet --upgrade '$(PIP_MIN)'
	$(COLCON_VENV)/bin/python -m pip install --quiet $(COLCON_PKGS)
	touch $@

# The workspace holds a symlink to this checkout; colcon stops descending at a
# package.xml, so the link back into the repository (build/ is inside it) is
# harmless.  Built twice: plain (`setup.py install`, setup.cfg [install]) and
# --symlink-install (`setup.py develop`, setup.cfg [develop]); both must put the
# nodes in lib/lie_dynamics_ros, where `ros2 run` looks.
COLCON_CHECK_FILES := lib/$(PKG)/inverse_dynamics_node lib/$(PKG)/forward_dynamics_node \
                      lib/$(PKG)/adaptive_controller_node \
                      lib/$(PKG)/ldr_bringup lib/$(PKG)/ldr_demo lib/$(PKG)/ldr_identify \
                      share/$(PKG)/package.xml \
                      share/ament_index/resource_index/packages/$(PKG)

colcon: $(COLCON_STAMP)
	rm -rf $(COLCON_WS) $(COLCON_WS)_symlink
	mkdir -p $(COLCON_WS)/src $(COLCON_WS)_symlink/src
	ln -s "$(CURDIR)" $(COLCON_WS)/src/$(PKG)
	ln -s "$(CURDIR)" $(COLCON_WS)_symlink/src/$(PKG)
	cd $(COLCON_WS) && ../colcon_venv/bin/colcon --log-base log build \
	  --base-paths src --event-handlers console_cohesion- summary+
	cd $(COLCON_WS)_symlink && ../colcon_venv/bin/colcon --log-base log build \
	  --symlink-install --base-paths src --event-handlers console_cohesion- summary+
	@for ws in $(COLCON_WS) $(COLCON_WS)_symlink; do \
	  for f in $(COLCON_CHECK_FILES); do \
	    test -e $$ws/install/$(PKG)/$$f || { echo "make colcon: missing $$ws/install/$(PKG)/$$f" >&2; exit 1; }; \
	  done; \
	  test -x $$ws/install/$(PKG)/lib/$(PKG)/inverse_dynamics_node \
	    || { echo "make colcon: $$ws inverse_dynamics_node not executable" >&2; exit 1; }; \
	done
	@grep -rqs --include=entry_points.txt \
	  'inverse_dynamics_node = lie_dynamics_ros.ros.inverse_dynamics_node:main' $(PKG_INSTALL)/lib \
	  || { echo "make colcon: entry point of inverse_dynamics_node not installed" >&2; exit 1; }
	@test -e $(PKG_INSTALL)/share/$(PKG)/urdf/arm7.urdf \
	  || { echo "make colcon: urdf/arm7.urdf not installed under share/$(PKG)" >&2; exit 1; }
	@# Every module of the checkout is in the install (a folder without __init__.py
	@# would be missed by find_packages), the ament index finds the share folder, and
	@# the console-script modules import from the installed copy (with .venv's numpy/rclpy).
	@if [ -x $(PY) ]; then \
	  cd /tmp && AMENT_PREFIX_PATH="$(CURDIR)/$(PKG_INSTALL)" \
	  PYTHONPATH="$$(echo $(CURDIR)/$(PKG_INSTALL)/lib/python3*/site-packages)" \
	  $(abspath $(PY)) -c "$$COLCON_SMOKE" "$(CURDIR)" || { echo "make colcon: smoke test of the install failed" >&2; exit 1; }; \
	fi
	@echo "make colcon: OK ($(PKG_INSTALL), $(COLCON_WS)_symlink/install/$(PKG))"

# --- make launch-test --------------------------------------------------------------------
# ROS 2's launch system and ros2 CLI are not on PyPI. On a ROS 2 machine (launch_ros
# importable by .venv's python, e.g. after sourcing /opt/ros/jazzy/setup.bash) they are used
# as installed; otherwise LAUNCH_TOOLS must hold ros2-launch-tools (wheels + install.sh), and
# a missing folder is an error, never a skip.
LAUNCH_TOOLS  ?= ../shared/ros2-launch-tools
LAUNCH_WS     := $(COLCON_DIR)/launch_ws
LAUNCH_STAMP  := $(VENV)/.launch-tools-stamp
LAUNCH_TEST_ARGS ?=
LAUNCH_PYTHONPATH = $(if $(wildcard $(LAUNCH_TOOLS)/import-stand-in),$(abspath $(LAUNCH_TOOLS))/import-stand-in)

launch-tools: venv
	@if $(PY) -c 'import launch_ros, ros2cli' >/dev/null 2>&1; then \
	  echo "make launch-tools: launch_ros and ros2cli importable, using them"; \
	elif [ -f "$(LAUNCH_TOOLS)/install.sh" ]; then \
	  bash "$(LAUNCH_TOOLS)/install.sh" $(VENV) && \
	  $(PY) -m pip uninstall --quiet -y launch_testing launch_testing_ros; \
	else \
	  echo "make launch-tools: no ROS 2 launch system: launch_ros is not importable and" >&2; \
	  echo "  LAUNCH_TOOLS=$(LAUNCH_TOOLS) has no install.sh. Clone ros2-launch-tools next to" >&2; \
	  echo "  this repository (../shared/ros2-launch-tools), pass LAUNCH_TOOLS=/path/to/it, or" >&2; \
	  echo "  source a ROS 2 Jazzy installation." >&2; \
	  exit 1; \
	fi
	@# launch_testing's pytest plugin (in the wheels, unused here) breaks pytest >= 8 at
	@# collection, so install.sh's copy is removed again just above.

# colcon runs setup.py with the interpreter it runs in: run it with .venv's python (colcon
# itself from build/colcon_venv on PYTHONPATH), so the nodes' shebangs point at .venv, which
# holds numpy, numba and rclpy, as the system python does on a ROS 2 machine.
# The workspace is kept between runs: the install copies keep their sources' mtimes, so the
# numba cache next to them stays valid and only the first run compiles.
launch-test: launch-tools $(COLCON_STAMP)
	mkdir -p $(LAUNCH_WS)/src
	ln -sfn "$(CURDIR)" $(LAUNCH_WS)/src/$(PKG)
	cd $(LAUNCH_WS) && PYTHONPATH="$$(echo $(abspath $(COLCON_VENV))/lib/python3*/site-packages)" \
	  $(abspath $(PY)) -c 'import sys; from colcon_core.command import main; sys.exit(main())' \
	  --log-base log build --base-paths src --event-handlers console_cohesion- summary+
	@# warm the numba cache of the installed copy (the nodes then start warm)
	. $(LAUNCH_WS)/install/setup.bash && \
	  $(LAUNCH_WS)/install/$(PKG)/lib/$(PKG)/ldr_precompile
	. $(LAUNCH_WS)/install/setup.bash && \
	  PATH="$(abspath $(VENV))/bin:$$PATH" \
	  PYTHONPATH="$(LAUNCH_PYTHONPATH)$${PYTHONPATH:+:$$PYTHONPATH}" \
	  LDR_LAUNCH_WS="$(abspath $(LAUNCH_WS))" \
	  $(PY) -P -m pytest -q -p no:cacheprovider $(LAUNCH_TEST_ARGS) launch_test

define COLCON_SMOKE
import importlib, os, sys
from ament_index_python.packages import get_package_share_directory
src = os.path.join(sys.argv[1], 'lie_dynamics_ros')
import lie_dynamics_ros
inst = os.path.dirname(lie_dynamics_ros.__file__)
assert '/install/' in inst, 'imported from ' + inst + ', not from the colcon install'
rel = lambda root: {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs if f.endswith('.py')}
missing = sorted(rel(src) - rel(inst))
assert not missing, 'modules not installed (missing __init__.py?): %s' % missing
share = get_package_share_directory('lie_dynamics_ros')
assert os.path.isfile(os.path.join(share, 'urdf', 'arm7.urdf')), share
for m in ('lie_dynamics_ros.cli', 'lie_dynamics_ros.ros.inverse_dynamics_node',
          'lie_dynamics_ros.ros.forward_dynamics_node', 'lie_dynamics_ros.ros.bringup'):
    assert callable(importlib.import_module(m).main), m
print('colcon install smoke test: %d modules installed, share=%s' % (len(rel(inst)), share))
endef
export COLCON_SMOKE

clean:
	rm -rf build log install *.egg-info .pytest_cache
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
