# lie_dynamics_ros developer/CI entry points.
#
#   make venv    .venv (python3.11) with `pip install -e .[test,plot,record]` and
#                the ROS 2 Jazzy wheels of requirements-ros.txt, then ldr_precompile (numba's
#                cache); redone only when setup.py, setup.cfg or requirements-ros.txt change
#                (.venv/.stamp)
#   make test    pytest on test/
#   make demo    .venv/bin/ldr_adaptive_demo   (simulator + adaptive controller over DDS)
#   make dynamics-demo  .venv/bin/ldr_demo     (model tree and dynamics; DEMO_ARGS=...)
#   make bench   benchmarks: dynamics (BENCH_ARGS=...), derivatives, geometry, simulation, loops,
#                identification per 10^5 samples, the SE(3) algebra and one IK iteration, rigid
#                contacts, integrate and difference, against Pinocchio and MuJoCo; the first
#                calls of a fresh process after ldr_precompile (benchmarks/cold_start.py)
#   make soak    10 min of simulated time, simulator + adaptive controller (make test runs 5 s)
#   make fuzz    a long URDF fuzz (make test runs 10^4 cases)
#   make colcon  builds the package with colcon into build/colcon_ws, run by .venv's python
#                (the nodes' shebangs point at .venv, which holds numpy, numba and rclpy), and
#                checks the install tree; also a --symlink-install build. Afterwards, with
#                .venv activated and `make launch-tools` done (or ROS 2 sourced),
#                `source build/colcon_ws/install/setup.bash` gives `ros2 launch/run lie_dynamics_ros`
#   make launch-test  every launch file under real `ros2 launch` (launch_test/): builds
#                build/colcon_ws as `make colcon` does, warms the numba cache there
#                (ldr_precompile), and checks rates, the held pose, tracking, arguments,
#                namespaces and clean Ctrl-C, from the environment README.md documents. The
#                launch system comes from a ROS 2 installation when launch_ros is importable,
#                else from LAUNCH_TOOLS=../shared/ros2-launch-tools (installed into .venv)
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

.PHONY: venv test demo dynamics-demo bench soak fuzz colcon colcon-ws launch-tools launch-test clean distclean

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
	@for s in ldr_demo inverse_dynamics_node forward_dynamics_node ldr_bringup adaptive_controller_node ldr_adaptive_demo ldr_identify ldr_precompile; do \
	  test -x $(VENV)/bin/$$s || { echo "make venv: $(VENV)/bin/$$s missing" >&2; exit 1; }; \
	done
	@# numba's cache, filled once (about 10 min cold on a 2-core VM): first calls then load, not compile
	$(VENV)/bin/ldr_precompile
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
	$(PY) benchmarks/bench_soa_aba_crba.py
	$(PY) benchmarks/bench_mass_matrix.py
	$(PY) benchmarks/bench_derivatives.py
	$(PY) benchmarks/bench_geometry.py
	$(PY) benchmarks/bench_simulate.py
	$(PY) benchmarks/bench_loops.py
	$(PY) benchmarks/bench_identify.py
	$(PY) benchmarks/bench_se3.py
	$(PY) benchmarks/bench_ik.py
	$(PY) benchmarks/bench_centroidal.py
	$(PY) benchmarks/bench_kinematics.py
	$(PY) benchmarks/bench_contacts.py
	$(PY) benchmarks/bench_configuration.py
	$(PY) benchmarks/bench_soa.py
	$(PY) benchmarks/cold_start.py

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

# colcon runs setup.py with the interpreter it runs in: run it with .venv's python (colcon
# itself from build/colcon_venv on PYTHONPATH), so that the nodes' shebangs point at .venv,
# which holds numpy, numba and rclpy, as the system python does on a ROS 2 machine (a
# shebang of build/colcon_venv's python, which has none of them, made every node die).
COLCON = PYTHONPATH="$$(echo $(abspath $(COLCON_VENV))/lib/python3*/site-packages)" \
  $(abspath $(PY)) -m colcon

# The workspace holds a symlink to this checkout; colcon stops descending at a
# package.xml, so the link back into the repository (build/ is inside it) is
# harmless. Kept between runs (make launch-test, make colcon): the install copies keep
# their sources' mtimes, so the numba cache next to them stays valid.
colcon-ws: venv $(COLCON_STAMP)
	mkdir -p $(COLCON_WS)/src
	ln -sfn "$(CURDIR)" $(COLCON_WS)/src/$(PKG)
	cd $(COLCON_WS) && $(COLCON) --log-base log build \
	  --base-paths src --event-handlers console_cohesion- summary+

# build/colcon_ws (plain: `setup.py install`, setup.cfg [install]) and a throwaway
# --symlink-install workspace (`setup.py develop`, setup.cfg [develop]); both must put the
# nodes in lib/lie_dynamics_ros, where `ros2 run` looks, with a python that runs them.
COLCON_CHECK_FILES := lib/$(PKG)/inverse_dynamics_node lib/$(PKG)/forward_dynamics_node \
                      lib/$(PKG)/adaptive_controller_node \
                      lib/$(PKG)/ldr_bringup lib/$(PKG)/ldr_demo lib/$(PKG)/ldr_identify \
                      share/$(PKG)/package.xml \
                      share/ament_index/resource_index/packages/$(PKG)

colcon: colcon-ws
	rm -rf $(COLCON_WS)_symlink
	mkdir -p $(COLCON_WS)_symlink/src
	ln -s "$(CURDIR)" $(COLCON_WS)_symlink/src/$(PKG)
	cd $(COLCON_WS)_symlink && $(COLCON) --log-base log build \
	  --symlink-install --base-paths src --event-handlers console_cohesion- summary+
	@for ws in $(COLCON_WS) $(COLCON_WS)_symlink; do \
	  for f in $(COLCON_CHECK_FILES); do \
	    test -e $$ws/install/$(PKG)/$$f || { echo "make colcon: missing $$ws/install/$(PKG)/$$f" >&2; exit 1; }; \
	  done; \
	  node=$$ws/install/$(PKG)/lib/$(PKG)/inverse_dynamics_node; \
	  test -x $$node || { echo "make colcon: $$node not executable" >&2; exit 1; }; \
	  shebang=$$(head -1 $$node | sed 's/^#!//; s/ .*//'); \
	  $$shebang -c 'import numpy, numba, scipy, yaml, rclpy' \
	    || { echo "make colcon: $$node runs with $$shebang, which lacks numpy, numba, scipy, yaml or rclpy" >&2; exit 1; }; \
	done
	@grep -rqs --include=entry_points.txt \
	  'inverse_dynamics_node = lie_dynamics_ros.ros.inverse_dynamics_node:main' $(PKG_INSTALL)/lib \
	  || { echo "make colcon: entry point of inverse_dynamics_node not installed" >&2; exit 1; }
	@test -e $(PKG_INSTALL)/share/$(PKG)/urdf/arm7.urdf \
	  || { echo "make colcon: urdf/arm7.urdf not installed under share/$(PKG)" >&2; exit 1; }
	@# Every module of the checkout is in the install (a folder without __init__.py
	@# would be missed by find_packages), the ament index finds the share folder, and
	@# the console-script modules import from the installed copy (with .venv's numpy/rclpy).
	@cd /tmp && AMENT_PREFIX_PATH="$(CURDIR)/$(PKG_INSTALL)" \
	  PYTHONPATH="$$(echo $(CURDIR)/$(PKG_INSTALL)/lib/python3*/site-packages)" \
	  $(abspath $(PY)) -c "$$COLCON_SMOKE" "$(CURDIR)" || { echo "make colcon: smoke test of the install failed" >&2; exit 1; }
	@echo "make colcon: OK ($(PKG_INSTALL), $(COLCON_WS)_symlink/install/$(PKG))"

# --- make launch-test --------------------------------------------------------------------
# ROS 2's launch system and ros2 CLI are not on PyPI. On a ROS 2 machine (launch_ros
# importable by .venv's python, e.g. after sourcing /opt/ros/jazzy/setup.bash) they are used
# as installed; otherwise LAUNCH_TOOLS must hold ros2-launch-tools (wheels + install.sh), and
# a missing folder is an error, never a skip.
LAUNCH_TOOLS  ?= ../shared/ros2-launch-tools
LAUNCH_TEST_ARGS ?=

# install.sh's import-stand-in (composition_interfaces names that launch_ros imports) goes
# on the venv's path through a .pth file, so that an activated .venv runs `ros2 launch`
# with nothing else to export (README.md, "Install in a ROS 2 Jazzy workspace").
launch-tools: venv
	@if $(PY) -c 'import launch_ros, ros2cli' >/dev/null 2>&1; then \
	  echo "make launch-tools: launch_ros and ros2cli importable, using them"; \
	elif [ -f "$(LAUNCH_TOOLS)/install.sh" ]; then \
	  bash "$(LAUNCH_TOOLS)/install.sh" $(VENV) && \
	  $(PY) -m pip uninstall --quiet -y launch_testing launch_testing_ros && \
	  echo "$(abspath $(LAUNCH_TOOLS))/import-stand-in" \
	    > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/ros2_launch_tools_stand_in.pth" && \
	  $(PY) -c 'import launch_ros, ros2cli' && \
	  echo "make launch-tools: the import stand-in is on $(VENV)'s path (a .pth file): nothing to export"; \
	else \
	  echo "make launch-tools: no ROS 2 launch system: launch_ros is not importable and" >&2; \
	  echo "  LAUNCH_TOOLS=$(LAUNCH_TOOLS) has no install.sh. Clone ros2-launch-tools next to" >&2; \
	  echo "  this repository (../shared/ros2-launch-tools), pass LAUNCH_TOOLS=/path/to/it, or" >&2; \
	  echo "  source a ROS 2 Jazzy installation." >&2; \
	  exit 1; \
	fi
	@# launch_testing's pytest plugin (in the wheels, unused here) breaks pytest >= 8 at
	@# collection, so install.sh's copy is removed again just above.

# The route README.md documents, so that CI proves it: build/colcon_ws from `make colcon`'s
# build, .venv activated, the workspace's setup.bash sourced, `ros2 run ... ldr_precompile`
# (the nodes then start warm), then launch_test/ runs `ros2 launch` / `ros2 run`.
launch-test: launch-tools colcon-ws
	. $(VENV)/bin/activate && . $(COLCON_WS)/install/setup.bash && \
	  ros2 run $(PKG) ldr_precompile
	. $(VENV)/bin/activate && . $(COLCON_WS)/install/setup.bash && \
	  LDR_LAUNCH_WS="$(abspath $(COLCON_WS))" \
	  python -P -m pytest -q -p no:cacheprovider $(LAUNCH_TEST_ARGS) launch_test

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
