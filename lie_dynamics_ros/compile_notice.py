"""One log line when this process first compiles a kernel of the package.

A cold numba cache (a fresh install, a changed kernel) makes the first call of a function
compile for seconds to a minute; without a word the program looks hung. numba's
``numba:compile`` event fires only on a cache miss (a cache load is silent), so the line
appears once per process and only when something is really compiled. It goes to the package's
logger (``logging.getLogger("lie_dynamics_ros")``) as a warning, so a script that configures
no logging still shows it on stderr; raise that logger's level to silence it.
"""
import logging

from numba.core import event

LOGGER = logging.getLogger("lie_dynamics_ros")
PACKAGE = "lie_dynamics_ros."


class FirstCompileNotice(event.Listener):
    """Logs the first compilation of a dispatcher whose function lives in ``prefix``."""

    def __init__(self, logger=LOGGER, prefix=PACKAGE):
        self.logger, self.prefix, self.said = logger, prefix, False

    def on_start(self, ev):
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if self.said or not getattr(func, "__module__", "").startswith(self.prefix):
            return
        self.said = True
        self.logger.warning(
            "lie_dynamics_ros: compiling numba kernels (first call of %s.%s with a cold cache: "
            "seconds to a minute, once; later runs load them from numba's cache, and "
            "ldr_precompile compiles them all ahead)", func.__module__[len(self.prefix):],
            func.__qualname__)

    def on_end(self, ev):
        pass


#: registered when the package is imported (its __init__ imports this module first)
NOTICE = FirstCompileNotice()
event.register("numba:compile", NOTICE)
