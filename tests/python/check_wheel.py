#!/usr/bin/env python3
"""The package ksieve as pip users get it, offline (pyproject.toml and setup.py at the repository root).

1. `python3 -m build --no-isolation --wheel` makes one wheel, tagged for this interpreter
   (ksieve-VERSION-cp3X-cp3X-PLATFORM.whl), holding the package, its compiled module, type stubs and
   py.typed.
2. In a fresh virtual environment (with the system's site packages, for pytest) `pip install` of that wheel;
   `import ksieve` there takes the environment's copy, and the Python test suite (tests/python) passes there,
   against the ksieve executable.
3. In another fresh one, `pip install --no-build-isolation .` of the source tree imports as well.
4. The compiled module of another Python (its file renamed to another version's tag) is refused on import
   with a message naming the Python it was built for and this one.

The module is taken from the CMake build directory given (KSIEVE_BUILD_DIR: no second build).
Usage: check_wheel.py ROOT BUILD_DIR KSIEVE_BINARY
"""
import glob
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "workflows"))
from checks import check, finish  # noqa: E402



def run(cmd, env, cwd=None):
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-4000:], r.stderr[-4000:], file=sys.stderr)
        sys.exit(f"wheel: {' '.join(cmd)}: exit status {r.returncode}")
    return r.stdout


def venv(work, name, env):
    """A fresh virtual environment (the system's site packages visible, for pytest); its python."""
    path = os.path.join(work, name)
    run([sys.executable, "-m", "venv", "--system-site-packages", path], env)
    return os.path.join(path, "bin", "python")


def imported_from(python, env):
    return run([python, "-c", "import ksieve; print(ksieve.__file__, ksieve.__version__)"], env).split()


def check_other_python(package, env):
    """The package with its module renamed to another minor version's tag refuses to import, naming both."""
    minor = sys.version_info[1]
    other = sys.version_info[1] + 1
    work = tempfile.mkdtemp(prefix="ksieve-other-python-")
    copy = os.path.join(work, "ksieve")
    shutil.copytree(package, copy)
    for so in glob.glob(os.path.join(copy, "_ksieve.*")):
        os.rename(so, so.replace(f"cpython-3{minor}", f"cpython-3{other}"))
    r = subprocess.run([sys.executable, "-c", "import ksieve"], env=dict(env, PYTHONPATH=work),
                       capture_output=True, text=True)
    message = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    check(r.returncode != 0 and message.startswith("ImportError: ksieve was built for Python 3.%d, not for this "
                                                   "Python 3.%d" % (other, minor)),
          f"a module built for Python 3.{other} says so under 3.{minor}: {message}")
    shutil.rmtree(work, ignore_errors=True)


def main():
    root, build_dir, ksieve = (os.path.abspath(a) for a in sys.argv[1:4])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(KSIEVE_BUILD_DIR=build_dir, PYTHONDONTWRITEBYTECODE="1")
    work = tempfile.mkdtemp(prefix="ksieve-wheel-")
    version = run([ksieve, "--version"], env).split()[-1]
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")

    run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", os.path.join(work, "dist"), root], env)
    wheels = glob.glob(os.path.join(work, "dist", "*.whl"))
    want = f"ksieve-{version}-{tag}-{tag}-{platform}.whl"
    check([os.path.basename(w) for w in wheels] == [want], f"one wheel, {want} ({wheels})")
    if wheels:
        names = zipfile.ZipFile(wheels[0]).namelist()
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        for member in ("ksieve/__init__.py", "ksieve/__init__.pyi", "ksieve/py.typed", "ksieve/_ksieve" + suffix):
            check(member in names, f"the wheel holds {member}")

        python = venv(work, "wheel-env", env)
        run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheels[0]], env)
        where, got = imported_from(python, env)
        check(where.startswith(os.path.join(work, "wheel-env")) and got == version,
              f"import ksieve takes the environment's {version} ({where} {got})")
        tests = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.join(root, "tests", "python")],
                               env=dict(env, KSIEVE_BINARY=ksieve), capture_output=True, text=True)
        print(tests.stdout[-1500:])
        check(tests.returncode == 0, f"the Python tests pass in the environment the wheel went into\n{tests.stderr[-2000:]}")
        check_other_python(os.path.dirname(where), env)

    python = venv(work, "source-env", env)
    run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-build-isolation", root], env, cwd=work)
    where, got = imported_from(python, env)
    check(where.startswith(os.path.join(work, "source-env")) and got == version,
          f"pip install --no-build-isolation . imports there ({where} {got})")

    shutil.rmtree(work, ignore_errors=True)
    finish("wheel", f"{want} installs into a fresh environment and passes the Python tests there; "
          "pip install --no-build-isolation . works")


if __name__ == "__main__":
    main()
