"""The build of the Python package ksieve's compiled module (see pyproject.toml for the package).

setuptools builds one extension, ksieve._ksieve, by running CMake: the project is configured with the
Python module on (tests, benchmarks and the executable's extras off), for the interpreter that runs this
build (-DPython3_EXECUTABLE), and the target ksieve_python is built; its shared object goes into the
wheel (or the installed package) beside python/ksieve/__init__.py. The wheel carries the interpreter's
tag (cp3XY-cp3XY-PLATFORM), since the module is built for that Python alone.

Environment: KSIEVE_BUILD_DIR, a CMake build directory of ksieve already configured with the Python
module for a Python of the same version (its module is built there and taken: no second build);
CMAKE_BUILD_PARALLEL_LEVEL, the build's jobs (default: the processors); CMAKE_ARGS, more options for
the configure step (a fresh build only).
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    """The version of project(ksieve VERSION ...) in CMakeLists.txt."""
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(ksieve VERSION ([0-9]+\.[0-9]+\.[0-9]+)", f.read()).group(1)


class cmake_build_ext(build_ext):
    """Builds ksieve._ksieve with CMake instead of compiling sources itself."""

    def build_extension(self, ext):
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        build_dir = os.environ.get("KSIEVE_BUILD_DIR")
        if build_dir:
            build_dir = os.path.abspath(build_dir)
        else:
            build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
            self.configure(build_dir)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", build_dir, "--target", "ksieve_python", "--parallel", jobs], check=True)
        built = os.path.join(build_dir, "python", "ksieve", "_ksieve" + suffix)
        if not os.path.isfile(built):
            found = [os.path.basename(p) for p in glob.glob(os.path.join(build_dir, "python", "ksieve", "_ksieve*"))]
            sys.exit(f"ksieve: {build_dir} holds no module for this Python ({'_ksieve' + suffix}; found: "
                     f"{', '.join(found) or 'none'}): configure it with -DPython3_EXECUTABLE={sys.executable}, "
                     "or build without KSIEVE_BUILD_DIR")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)
        shutil.copymode(built, target)

    def configure(self, build_dir):
        args = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DKSIEVE_BUILD_PYTHON=ON",
                "-DKSIEVE_BUILD_TESTS=OFF", "-DKSIEVE_BUILD_BENCH=OFF", "-DKSIEVE_INSTALL=OFF",
                f"-DPython3_EXECUTABLE={sys.executable}"]
        args += shlex.split(os.environ.get("CMAKE_ARGS", ""))
        subprocess.run(args, check=True)


setup(
    version=version(),
    ext_modules=[Extension("ksieve._ksieve", sources=[])],
    cmdclass={"build_ext": cmake_build_ext},
    options={"build": {"build_base": os.path.join("build-python")}},
)
