"""Builds the compiled engine: the modules `bazaarbatna.engine.COMPILED_MODULES` names, compiled by Cython when it
and a C compiler are there (`pip` installs Cython for the build, from pyproject's `[build-system] requires`).
Without them, or with BAZAARBATNA_PURE=1, the package installs as pure Python; the results are the same
(see the engine chapter, nbs/02_engine.ipynb)."""
import importlib.util, os
from pathlib import Path
from setuptools import setup, Extension
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("_bazaarbatna_engine", ROOT / "bazaarbatna" / "engine.py")
engine = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(engine)   # stdlib only: nothing else is installed yet


def compiled_extensions() -> list:
    if os.environ.get(engine.PURE_ENV) == "1": return []
    try: from Cython.Build import cythonize
    except ImportError: return []
    exts = [Extension(name, [name.replace(".", "/") + ".py"], optional=True) for name in engine.COMPILED_MODULES]
    return cythonize(exts, compiler_directives=engine.CYTHON_DIRECTIVES, build_dir="build/cython", quiet=True,
                     nthreads=os.cpu_count() or 1)


class BuildWithManifest(build_ext):
    "build_ext that compiles on every core and records, next to the compiled modules, the digest of the source each was compiled from."
    def finalize_options(self):
        super().finalize_options()
        if not self.parallel: self.parallel = os.cpu_count() or 1

    def run(self):
        super().run()
        built = {}
        for ext in self.extensions:
            out = Path(self.get_ext_fullpath(ext.name))
            if out.exists(): built.setdefault(out.parent, []).append(ext.name)
        for folder, names in built.items(): engine.write_manifest(folder, names, ROOT)


setup(ext_modules=compiled_extensions(), cmdclass={"build_ext": BuildWithManifest})
