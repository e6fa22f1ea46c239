"""The build of the Python package (pyproject.toml): setuptools packs python/maskscope/ and the extension
_maskscope, which the project's own CMake build makes (python/CMakeLists.txt, target maskscope_ext), so the
wheel holds the same core library as maskscope-cli and the window, compiled the same way.

MASKSCOPE_CMAKE_BUILD_DIR=DIR reuses a configured build tree (tools/build.sh's build/): only the extension is
brought up to date there (nothing to compile when it is) and copied, which is how CI packs the module it has
just tested. Without it the extension is built from scratch in setuptools' temporary folder (a few minutes
on 2 cores: the core library once more, without the window and the tests).
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
(ROOT / "build" / "setuptools").mkdir(parents=True, exist_ok=True)  # egg_info's folder must exist


def version():
    """The one version: project(maskscope VERSION x.y.z) in CMakeLists.txt (core/model/version.hpp.in)."""
    m = re.search(r"project\(maskscope VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    if not m:
        raise RuntimeError("setup.py: no 'project(maskscope VERSION x.y.z)' in CMakeLists.txt")
    return m.group(1)


class CMakeBuild(build_ext):
    """Builds the CMake target maskscope_ext and copies its module where setuptools expects the extension."""

    def build_extension(self, ext):
        reuse = os.environ.get("MASKSCOPE_CMAKE_BUILD_DIR")
        if reuse:
            tree = Path(reuse).resolve()
            if not (tree / "CMakeCache.txt").is_file():
                raise RuntimeError(f"MASKSCOPE_CMAKE_BUILD_DIR={reuse}: not a configured CMake build tree "
                                   "(run `bash tools/build.sh --target maskscope_ext` first)")
        else:
            tree = Path(self.build_temp).resolve() / "cmake"
            tree.mkdir(parents=True, exist_ok=True)
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(tree), *generator,
                                   "-DCMAKE_BUILD_TYPE=Release", "-DMASKSCOPE_GUI=OFF", "-DMASKSCOPE_TESTS=OFF",
                                   "-DMASKSCOPE_MPI=OFF", "-DMASKSCOPE_PYTHON=ON",
                                   f"-DPYTHON_EXECUTABLE={sys.executable}"])
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.check_call(["cmake", "--build", str(tree), "--target", "maskscope_ext", "-j", jobs])
        built = sorted((tree / "python" / "maskscope").glob("_maskscope*.so"))
        if len(built) != 1:
            raise RuntimeError(f"setup.py: expected one _maskscope*.so in {tree}/python/maskscope, found {built}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    version=version(),
    packages=["maskscope"],
    package_dir={"maskscope": "python/maskscope"},
    package_data={"maskscope": ["py.typed", "*.pyi"]},
    ext_modules=[Extension("maskscope._maskscope", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
    # setuptools' own folders beside CMake's in build/, not over it (build/lib would sit in CMake's tree).
    options={"build": {"build_base": "build/setuptools"}, "egg_info": {"egg_base": "build/setuptools"}},
)
